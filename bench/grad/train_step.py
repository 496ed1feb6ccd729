#!/usr/bin/python3
"""bench/grad/train_step.py: one whole training step of examples/embed's small CNN, Tilec against PyTorch.

A step is what examples/embed/train_cnn.py does per batch: zero the
gradients, forward, cross-entropy loss, backward, SGD (momentum 0.9) update.
The Tilec model is torch_cnn.py's TileCNN (every layer a tilec.torch.op,
whose backward runs gradients Tilec derives), PyTorch's is TorchCNN; both
start from the same weights and train on the same batch.

For each batch size (--batch, default 8 as train_cnn.py and 64):

1. checks one step from equal weights: the losses and every parameter's
   gradient agree (normwise relative error max|tilec - torch| / max|torch|
   at most 1e-4; else MISMATCH, exit code 1, not timed);
2. times --rounds rounds, each side in turn (PyTorch, then Tilec, each
   after at least 0.3 s of warm-up steps; bench/peer_env.py's median_ms),
   --runs steps per side and round. ms = median of the rounds' medians,
   ratio = median over the rounds of PyTorch / Tilec (> 1: Tilec faster).

--profile also prints where the Tilec step's time goes: each op's forward
and backward calls (wall time around tilec.torch.op's forward and backward,
Python included) and the rest (loss, autograd, optimizer).

Run with /usr/bin/python3 (numpy, torch). `--smoke`: batch 2, the check
only (ctest: bench_train_step_smoke). See bench/README.md, "Gradients".
"""
import argparse
import collections
import copy
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import peer_env  # noqa: E402
peer_env.reexec()


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build folder (its python/ is imported)")
    ap.add_argument("--batch", default="8,64", help="comma-separated batch sizes")
    ap.add_argument("--runs", type=int, default=20, help="timed steps per side and round (median)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=5, help="rounds of both sides in turn")
    ap.add_argument("--threads", type=int, default=2, help="PyTorch's threads")
    ap.add_argument("--profile", action="store_true", help="also the Tilec step's time per op and phase")
    ap.add_argument("--smoke", action="store_true", help="batch 2, correctness only (ctest)")
    ap.add_argument("--small-pages", action="store_true", help="the peers on small pages (see bench/suite)")
    return ap.parse_args()


ARGS = parse_args()
sys.path.insert(0, os.path.join(ARGS.build, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "embed"))

import torch  # noqa: E402

import tilec.torch  # noqa: E402
from torch_cnn import TileCNN, TorchCNN  # noqa: E402
from train_cnn import batch, loss_of  # noqa: E402

MAX_REL_ERR = 1e-4
LR = 0.005


class Side:
    """A model, its parameters and its optimizer."""

    def __init__(self, model, params):
        self.model, self.params = model, params
        self.opt = torch.optim.SGD(params.parameters(), lr=LR, momentum=0.9)

    def step(self, x, labels, update=True):
        self.opt.zero_grad()
        loss = loss_of(self.model(x), labels)
        loss.backward()
        if update:
            self.opt.step()
        return loss


def make_sides():
    torch.manual_seed(0)
    reference = TorchCNN()
    weights = copy.deepcopy(reference)  # the Tile model's parameters, equal at the start
    return Side(reference, reference), Side(TileCNN(weights), weights)


def rel_err(got, want):
    scale = want.abs().max().item()
    return (got - want).abs().max().item() / scale if scale else float((got - want).abs().max().item())


def check(size):
    """One step from equal weights: {what: relative error} of the loss and each gradient."""
    ref, tile = make_sides()
    x, labels = batch(torch.Generator().manual_seed(1), size)
    want, got = ref.step(x, labels, update=False), tile.step(x, labels, update=False)
    errs = {"loss": rel_err(got.detach(), want.detach())}
    for (name, p), q in zip(ref.params.named_parameters(), tile.params.parameters()):
        errs[name + ".grad"] = rel_err(q.grad, p.grad)
    return errs


class Profile:
    """Wall time of each TileOp's forward and backward calls, by op name and phase."""

    def __init__(self):
        self.ms = collections.defaultdict(float)
        self.calls = collections.defaultdict(int)
        self._saved = {}
        TileOp = tilec.torch.TileOp
        for phase, method in (("forward", "_forward"), ("backward", "_backward")):
            original = getattr(TileOp, method)
            self._saved[method] = original

            def timed(op, *a, _original=original, _phase=phase, **k):
                t0 = time.perf_counter()
                try:
                    return _original(op, *a, **k)
                finally:
                    key = (op._name, _phase)
                    self.ms[key] += (time.perf_counter() - t0) * 1e3
                    self.calls[key] += 1
            setattr(TileOp, method, timed)

    def close(self):
        for method, original in self._saved.items():
            setattr(tilec.torch.TileOp, method, original)


def profile(size, steps):
    """Prints the Tilec step's time per op and phase over `steps` steps (after warm-up)."""
    _, tile = make_sides()
    x, labels = batch(torch.Generator().manual_seed(1), size)
    for _ in range(3):
        tile.step(x, labels)
    p = Profile()
    t0 = time.perf_counter()
    for _ in range(steps):
        tile.step(x, labels)
    total = (time.perf_counter() - t0) * 1e3 / steps
    p.close()
    print("  Tilec step at batch %d: %.3f ms per step (mean of %d, profiled)" % (size, total, steps))
    inside = 0.0
    for (name, phase), ms in sorted(p.ms.items(), key=lambda kv: -kv[1]):
        per = ms / steps
        inside += per
        print("    %-20s %-8s %8.3f ms  (%d calls per step)" % (name, phase, per, p.calls[(name, phase)] // steps))
    print("    %-29s %8.3f ms  (loss, autograd, optimizer)" % ("the rest", total - inside))


def main():
    torch.set_num_threads(ARGS.threads)
    sizes = [2] if ARGS.smoke else [int(b) for b in ARGS.batch.split(",") if b.strip()]
    if not ARGS.smoke:
        print("tilec: %s; pytorch %s, %d threads; %s" % (ARGS.build, torch.__version__, torch.get_num_threads(),
                                                           peer_env.describe(peer_env.load_openblas())))
        print("load: %s" % subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
        print("%d rounds, each side in turn, %d timed steps each; ms = median of the rounds' medians; "
              "ratio = median of the rounds' PyTorch / Tilec (> 1: Tilec faster)\n" % (ARGS.rounds, ARGS.runs))
        print("%-6s %10s %10s %7s %7s %9s" % ("batch", "pytorch ms", "tilec ms", "ratio", "min r", "rel err"))
    bad = 0
    for size in sizes:
        errs = check(size)
        worst = max(errs.values())
        if not worst <= MAX_REL_ERR:
            bad += 1
            print("batch %d: MISMATCH: %s" % (size, ", ".join("%s %.3g" % kv for kv in errs.items() if kv[1] > MAX_REL_ERR)))
            continue
        if ARGS.smoke:
            print("batch %d: one step agrees (largest relative error %.2g: %s)" % (
                size, worst, max(errs, key=errs.get)))
            continue
        ref, tile = make_sides()
        x, labels = batch(torch.Generator().manual_seed(1), size)
        rounds = {"pytorch": [], "tilec": []}
        for _ in range(ARGS.rounds):
            for name, side in (("pytorch", ref), ("tilec", tile)):
                rounds[name].append(peer_env.median_ms(lambda: side.step(x, labels), ARGS.runs, ARGS.warmup))
        med = {s: statistics.median(m for m, _ in r) for s, r in rounds.items()}
        ratio = statistics.median(p[0] / t[0] for p, t in zip(rounds["pytorch"], rounds["tilec"]))
        min_r = min(m for _, m in rounds["pytorch"]) / min(m for _, m in rounds["tilec"])
        print("%-6d %10.3f %10.3f %7.2f %7.2f %9.1g" % (size, med["pytorch"], med["tilec"], ratio, min_r, worst))
        sys.stdout.flush()
        if ARGS.profile:
            profile(size, ARGS.runs)
    if not ARGS.smoke:
        print("\nload at the end: %s" % subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
