#!/usr/bin/python3
"""bench/grad: Tilec's derived gradient programs against oneDNN's backward primitives and PyTorch autograd.

For every case (a Tile program + shapes) and every input X it is
differentiated in (one row each: a convolution's D is its backward-data, K
its backward-weights), the script derives the gradient program with
`tilec grad FILE -s ... --wrt X` (X's gradient only, so each row is its own
program), then:

1. checks it: `tilec run` on random inputs and a random incoming gradient
   against PyTorch's gradient (torch.autograd.grad) of the same forward on
   the same arrays; normwise relative error max|tilec - torch| / max|torch|
   above 1e-3 is a MISMATCH (not timed, exit code 1). oneDNN's backward
   primitive (bench_onednn conv_bwd_data / conv_bwd_weights) is checked the
   same way;
2. times it, --rounds times in turn: Tilec (`tilec bench --json` on the
   gradient program, its own process, at least 0.3 s of warm-up), PyTorch
   autograd in this process (--threads threads, activations channels_last:
   the backward alone, `torch.autograd.grad(out, [x], g, retain_graph=True)`
   on a forward made once outside the timing; `torch f+b` is forward +
   backward, for reference), and oneDNN's backward primitives (convolutions
   only, activations NHWC, weights once in oneDNN's choice `any` and once
   in plain HWIO, each a bench_onednn process). Medians of the rounds'
   medians; ratio = median over the rounds of (best peer's median / Tilec's
   median): > 1 means Tilec is faster.

The gradient program is derived with `--saved OUT`: it may read the
forward's output, as PyTorch's backward reads what its forward saved (a
ReLU's mask is its result != 0, so the conv+ReLU rows run no forward
convolution); forward values it needs beyond the output (a max pool's
winner, a softmax's sums) it recomputes from the program's inputs. The
output it reads is an input of the timed program, made by the forward in
torch for the check.

Run with /usr/bin/python3 (numpy, torch). `--smoke`: tiny shapes,
correctness only (ctest: bench_grad_smoke). See bench/README.md.
"""
import argparse
import ctypes
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

# The peers' environment (huge pages, OpenBLAS's kernels): bench/peer_env.py.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import peer_env  # noqa: E402
peer_env.reexec()

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MAX_REL_ERR = 1e-3
PAUSE_S = 1.0  # before each process timed after PyTorch: its OpenMP workers spin for a while
WARM_S = 0.3   # every side's warm-up, at least


# --- Cases -------------------------------------------------------------------
# name, Tile file (repository-relative), its output, input shapes (f32), the
# inputs to differentiate in (one row each), `to_torch` (the torch tensors of
# the inputs, in PyTorch's layout: NHWC data as channels_last NCHW views,
# HWIO weights as OIHW channels_last), `fwd` (the forward in torch, from
# those), `out_to_torch` (the incoming gradient, Tilec's layout -> torch's),
# `out_back` (the forward's torch output -> Tilec's layout, for --saved),
# `grad_back` (an input's torch gradient -> Tilec's layout); optional:
# onednn (bench_onednn's conv parameters), constant (per row, inputs marked
# --constant for Tilec: the weights in backward-data, which oneDNN reorders
# into its layout once outside the timing and PyTorch's prep lays out once).

def nhwc_to_torch(a):
    return torch.from_numpy(a).permute(0, 3, 1, 2)  # a channels_last view


def conv_to_torch(arrays):
    t = {"D": nhwc_to_torch(arrays["D"])}
    # HWIO -> OIHW, stored OHWI (channels_last) like the NHWC data
    t["K"] = torch.from_numpy(arrays["K"]).permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)
    return t


def conv_grad_back(name, g):
    return g.permute(0, 2, 3, 1) if name == "D" else g.permute(2, 3, 1, 0)  # NHWC / HWIO


def conv(name, n, hw, ci, co, k, stride=1, relu=False, smoke=False):
    pad = (k - 1) // 2
    if relu:
        tile, out = "bench/workloads/conv3x3_relu.tile", "R"
    else:
        tile, out = ("bench/suite/conv_same.tile" if stride == 1 else "bench/suite/conv_stride2.tile"), "O"

    def fwd(t):
        o = F.conv2d(t["D"], t["K"], stride=stride, padding=pad)
        return torch.relu(o) if relu else o

    case = dict(name=name, tile=tile, out=out, shapes={"D": [n, hw, hw, ci], "K": [k, k, ci, co]},
                wrt=["D", "K"], to_torch=conv_to_torch, fwd=fwd, out_to_torch=nhwc_to_torch,
                out_back=lambda o: o.permute(0, 2, 3, 1), grad_back=conv_grad_back, constant={"D": ["K"]},
                smoke=smoke)
    if not relu:  # oneDNN's backward primitives have no ReLU: the convolution alone
        case["onednn"] = dict(n=n, h=hw, w=hw, ci=ci, co=co, k=k, stride=stride, pad=pad)
    return case


def plain_to_torch(arrays):
    return {k: torch.from_numpy(a) for k, a in arrays.items()}


def plain(name, tile, out, shapes, fwd, wrt, smoke=False):
    return dict(name=name, tile=tile, out=out, shapes=shapes, wrt=wrt, to_torch=plain_to_torch, fwd=fwd,
                out_to_torch=torch.from_numpy, out_back=lambda o: o, grad_back=lambda _, g: g, smoke=smoke)


# OpenBLAS through its C ABI (Debian's libopenblas), a peer of the matmul rows
# (Debian's PyTorch 1.13 calls the system's libblas.so.3, OpenBLAS's too).
OPENBLAS = peer_env.load_openblas()
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112


def matmul_grad_blas(wrt, arrays, incoming):
    """The matmul's gradient in `wrt` with one cblas_sgemm: A_grad = C_grad B^T, B_grad = A^T C_grad."""
    a, b, g = arrays["A"], arrays["B"], arrays[incoming]
    (m, k), n = a.shape, b.shape[1]
    f = lambda x: x.ctypes.data_as(ctypes.POINTER(ctypes.c_float))  # noqa: E731
    one, zero = ctypes.c_float(1), ctypes.c_float(0)
    if wrt == "A":
        out = np.empty((m, k), np.float32)
        call = lambda: OPENBLAS.cblas_sgemm(ROW_MAJOR, NO_TRANS, TRANS, m, k, n, one, f(g), n, f(b), n, zero,  # noqa: E731
                                            f(out), k)
    else:
        out = np.empty((k, n), np.float32)
        call = lambda: OPENBLAS.cblas_sgemm(ROW_MAJOR, TRANS, NO_TRANS, k, n, m, one, f(a), k, f(g), n, zero,  # noqa: E731
                                            f(out), n)
    return call, out


def maxpool(name, n, hw, c, smoke=False):
    return dict(name=name, tile="bench/suite/maxpool_3x3_s2.tile", out="O", shapes={"I": [n, hw, hw, c]},
                wrt=["I"], to_torch=lambda a: {"I": nhwc_to_torch(a["I"])},
                fwd=lambda t: F.max_pool2d(t["I"], 3, 2, 0, ceil_mode=True), out_to_torch=nhwc_to_torch,
                out_back=lambda o: o.permute(0, 2, 3, 1), grad_back=lambda _, g: g.permute(0, 2, 3, 1),
                smoke=smoke)


CASES = [
    # bench_peers' W1, W2 (conv3x3 "same"), W6 (conv1x1) and bench/suite's
    # conv3x3/2: the convolution alone (the ReLU's gradient is elementwise)
    conv("W1 conv3x3 n1 56x56 64>64", 1, 56, 64, 64, 3),
    conv("W2 conv3x3 n8 56x56 64>64", 8, 56, 64, 64, 3),
    conv("W6 conv1x1 n1 56x56 64>256", 1, 56, 64, 256, 1),
    conv("conv3x3/2 n1 56x56 64>128", 1, 56, 64, 128, 3, stride=2),
    # bench/workloads/conv3x3_relu.tile itself (W1, W2): the ReLU's mask is
    # recomputed by Tilec's gradient program (a forward convolution)
    conv("W1+relu conv3x3 n1 56x56 64", 1, 56, 64, 64, 3, relu=True),
    conv("W2+relu conv3x3 n8 56x56 64", 8, 56, 64, 64, 3, relu=True),
    dict(plain("matmul 1024^3", "bench/suite/matmul.tile", "C", {"A": [1024, 1024], "B": [1024, 1024]},
               lambda t: t["A"] @ t["B"], ["A", "B"]), blas=True),
    maxpool("maxpool 3x3/2 n8 56x56 c64", 8, 56, 64),
    plain("softmax 1024x1024", "bench/suite/softmax.tile", "Y", {"X": [1024, 1024]},
          lambda t: torch.softmax(t["X"], 1), ["X"]),
]

SMOKE = [
    conv("smoke conv3x3 n2 9x9 5>7", 2, 9, 5, 7, 3, smoke=True),
    conv("smoke conv1x1 n1 6x6 4>9", 1, 6, 4, 9, 1, smoke=True),
    conv("smoke conv3x3/2 n1 9x9 3>4", 1, 9, 3, 4, 3, stride=2, smoke=True),
    conv("smoke conv3x3+relu n1 7x7 4", 1, 7, 4, 4, 3, relu=True, smoke=True),
    dict(plain("smoke matmul 13x17x11", "bench/suite/matmul.tile", "C", {"A": [13, 17], "B": [17, 11]},
               lambda t: t["A"] @ t["B"], ["A", "B"], smoke=True), blas=True),
    maxpool("smoke maxpool 3x3/2 n2 10x10 c3", 2, 10, 3, smoke=True),
    plain("smoke softmax 5x19", "bench/suite/softmax.tile", "Y", {"X": [5, 19]},
          lambda t: torch.softmax(t["X"], 1), ["X"], smoke=True),
]


# --- Tilec -------------------------------------------------------------------

def shape_args(shapes):
    return [a for n, dims in shapes.items() for a in ("-s", "%s=f32[%s]" % (n, ",".join(map(str, dims))))]


def derive(tilec, case, wrt, tmp):
    """`tilec grad --wrt wrt --saved OUT`: (path of the gradient program, its input shapes, incoming
    gradient, output); the forward output is among the shapes if the gradient reads it."""
    path = os.path.join(tmp, "%s_%s.tile" % (re.sub(r"\W+", "_", case["name"]), wrt))
    subprocess.run([tilec, "grad", os.path.join(ROOT, case["tile"]), "--wrt", wrt, "--saved", case["out"], "-o",
                    path] + shape_args(case["shapes"]), check=True, capture_output=True, text=True)
    text = open(path).read()
    # The header lists every input's shape: "//   -s D=f32[1,5,7,3] -s K=... -s R_grad=..."
    m = re.search(r"^//\s+(-s .*)$", text, re.M)
    shapes = {}
    for name, dims in re.findall(r"-s (\w+)=f32\[([\d,]*)\]", m.group(1)):
        shapes[name] = [int(d) for d in dims.split(",")]
    incoming = next(n for n in shapes if n not in case["shapes"])
    sig = re.search(r"^function \(.*\) -> \((.*)\)", text, re.M).group(1)
    return path, shapes, incoming, sig.strip()


def tilec_run(tilec, prog, arrays, out, tmp):
    cmd = [tilec, "run", prog]
    for n, a in arrays.items():
        p = os.path.join(tmp, n + ".npy")
        np.save(p, a)
        cmd += ["--in", "%s=%s" % (n, p)]
    out_path = os.path.join(tmp, "tilec_out.npy")
    subprocess.run(cmd + ["--out", "%s=%s" % (out, out_path)], check=True, capture_output=True, text=True)
    return np.load(out_path)


def tilec_bench(tilec, prog, shapes, constants, runs, warmup):
    time.sleep(PAUSE_S)
    cmd = [tilec, "bench", prog, "--json", "--runs", str(runs), "--warmup", str(warmup),
           "--warmup-time", "%dms" % int(WARM_S * 1000)] + shape_args(shapes)
    cmd += [a for n in constants for a in ("--constant", n)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


# --- Peers -------------------------------------------------------------------

def make_arrays(shapes, seed):
    rng = np.random.default_rng(seed)
    return {n: rng.uniform(-1, 1, size=dims).astype(np.float32) for n, dims in shapes.items()}


class TorchGrad:
    """PyTorch autograd of the case's forward in `wrt` only."""

    def __init__(self, case, wrt, arrays, incoming):
        self.case, self.wrt = case, wrt
        self.t = case["to_torch"]({n: arrays[n] for n in case["shapes"]})
        self.leaf = self.t[wrt].detach().requires_grad_()  # keeps the strides (channels_last)
        self.t[wrt] = self.leaf
        self.g = case["out_to_torch"](arrays[incoming])
        self.out = case["fwd"](self.t)
        if self.g.stride() != self.out.stride():  # the incoming gradient laid out like the output
            self.g = torch.empty_like(self.out).copy_(self.g)

    def backward(self):
        return torch.autograd.grad(self.out, [self.leaf], self.g, retain_graph=True)[0]

    def forward_backward(self):
        return torch.autograd.grad(self.case["fwd"](self.t), [self.leaf], self.g)[0]

    def result(self):
        return self.case["grad_back"](self.wrt, self.backward()).contiguous().numpy()


def onednn(build, case, wrt, incoming, wei, tmp, runs, warmup, threads, out_path=None):
    """bench_onednn's backward primitive of a convolution row: its JSON (median_ms, min_ms, impl)."""
    exe = os.path.join(build, "bench", "bench_onednn")
    op = "conv_bwd_data" if wrt == "D" else "conv_bwd_weights"
    other = "K" if wrt == "D" else "D"
    cmd = [exe, op, "wei=" + wei, "g=" + incoming] + ["%s=%s" % kv for kv in case["onednn"].items()]
    cmd += ["--in", "%s=%s" % (other, os.path.join(tmp, other + ".npy")),
            "--in", "%s=%s" % (incoming, os.path.join(tmp, incoming + ".npy")),
            "--runs", str(runs), "--warmup", str(warmup), "--threads", str(threads)]
    if out_path:
        cmd += ["--out", out_path]
    else:
        time.sleep(PAUSE_S)
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


# --- The machine ----------------------------------------------------------------

def header(tilec, threads):
    lines = []
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = re.search(r"Model name:\s*(.*)", lscpu).group(1).strip()
        flags = re.search(r"Flags:\s*(.*)", lscpu).group(1).split()
        isa = [f for f in flags if f.startswith(("avx", "amx")) or f == "fma"]
        lines.append("cpu: %s; %d cores; ISA: %s" % (model, os.cpu_count(), " ".join(isa)))
    except (OSError, AttributeError):
        lines.append("cpu: unknown (no lscpu)")
    r = subprocess.run([tilec, "devices", "--json"], capture_output=True, text=True)
    try:
        for d in json.loads(r.stdout)["devices"]:
            if d["id"].startswith("llvm"):
                hw = d["hardware_model"]
                lines.append("tilec plans for: %s, %s f32 lanes, %s vector registers"
                             % (hw["name"], hw["vec_size"], hw["vector_registers"]))
    except (ValueError, KeyError):
        pass
    cap = re.search(r"CPU capability usage: (\w+)", torch.__config__.show())
    lines.append("pytorch %s (%s kernels, oneDNN inside for convolutions), %d threads; oneDNN (bench_onednn) "
                 "%d threads, ISA in each row's impl" % (torch.__version__, cap.group(1) if cap else "?",
                                                         torch.get_num_threads(), threads))
    lines.append(peer_env.describe(OPENBLAS))
    lines.append("load: %s" % subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return "\n".join(lines)


# --- Main --------------------------------------------------------------------

def check_row(tilec, build, case, wrt, tmp):
    """Derives the row's program and checks Tilec (and oneDNN) against PyTorch.
    Returns (program, shapes, incoming, errors {side: rel err}, oneDNN checked)."""
    prog, shapes, incoming, _ = derive(tilec, case, wrt, tmp)
    arrays = make_arrays(shapes, 7)
    if case["out"] in shapes:  # the forward's output, which the gradient reads (--saved)
        with torch.no_grad():
            out = case["fwd"](case["to_torch"]({n: arrays[n] for n in case["shapes"]}))
        arrays[case["out"]] = case["out_back"](out).contiguous().numpy()
    want = TorchGrad(case, wrt, arrays, incoming).result()
    errs = {"tilec": peer_env.rel_err(tilec_run(tilec, prog, arrays, wrt + "_grad", tmp), want)}
    if case.get("blas") and OPENBLAS is not None:
        call, out = matmul_grad_blas(wrt, arrays, incoming)
        call()
        errs["openblas"] = peer_env.rel_err(out, want)
    if "onednn" in case and os.path.exists(os.path.join(build, "bench", "bench_onednn")):
        for wei in ("any", "hwio"):
            out = os.path.join(tmp, "onednn_out.npy")
            onednn(build, case, wrt, incoming, wei, tmp, 1, 0, 1, out_path=out)
            errs["onednn " + wei] = peer_env.rel_err(np.load(out), want)
    return prog, shapes, incoming, errs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build folder")
    ap.add_argument("--tilec", help="the tilec binary (default: BUILD/tools/tilec)")
    ap.add_argument("--runs", type=int, default=10, help="timed runs per side and round (median)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every side in turn per row")
    ap.add_argument("--threads", type=int, default=2, help="PyTorch's and oneDNN's threads")
    ap.add_argument("--only", default="", help="comma-separated substrings of case names (e.g. W1,softmax)")
    ap.add_argument("--quick", action="store_true", help="3 runs, 1 warm-up, 1 round")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes, correctness only (ctest)")
    ap.add_argument("--no-constants", action="store_true",
                    help="Tilec: no --constant inputs (the weights' relayout in every timed run)")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--small-pages", action="store_true", help="the peers on small pages (see bench/suite)")
    args = ap.parse_args()
    tilec = args.tilec or os.path.join(args.build, "tools", "tilec")
    torch.set_num_threads(args.threads)
    if OPENBLAS is not None:
        OPENBLAS.openblas_set_num_threads(args.threads)
    if args.quick:
        args.runs, args.warmup, args.rounds = 3, 1, 1
    cases = SMOKE if args.smoke else CASES
    if args.only:
        keys = [k.strip() for k in args.only.split(",") if k.strip()]
        cases = [c for c in cases if any(k in c["name"] for k in keys)]
    bad, rows = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        if args.smoke:
            for c in cases:
                for wrt in c["wrt"]:
                    errs = check_row(tilec, args.build, c, wrt, tmp)[3]
                    for side, e in errs.items():
                        ok = e <= MAX_REL_ERR
                        bad += not ok
                        print("%-36s %-2s %-12s rel err %.2g %s" % (c["name"], wrt, side, e,
                                                                   "ok" if ok else "MISMATCH"))
            print("%s" % ("all agree" if not bad else "%d MISMATCHES" % bad))
            return 1 if bad else 0

        print(header(tilec, args.threads))
        print("%d round(s) per row, each side in turn, %d timed runs each; ms = median of the rounds' medians; "
              "ratio = median of the rounds' best peer / Tilec (> 1: Tilec faster); min r = fastest runs' "
              "ratio; torch f+b: PyTorch's forward + backward (not a peer: for the rows whose Tilec "
              "program recomputes forward values)\n" % (args.rounds, args.runs))
        head = "%-30s %-3s %9s %9s %9s %9s %9s %9s %-11s %6s %6s %8s %s" % (
            "case", "wrt", "tilec ms", "dnn any", "dnn hwio", "openblas", "torch ms", "torch f+b", "best peer",
            "ratio", "min r", "rel err", "oneDNN impl (any / hwio)")
        print(head)
        print("-" * len(head))
        for c in cases:
            for wrt in c["wrt"]:
                prog, shapes, incoming, errs = check_row(tilec, args.build, c, wrt, tmp)
                if any(not e <= MAX_REL_ERR for e in errs.values()):
                    bad += 1
                    print("%-30s %-3s MISMATCH (rel err %s): not timed" % (
                        c["name"], wrt, ", ".join("%s %.3g" % kv for kv in errs.items())))
                    continue
                # check_row left the check's inputs in tmp for bench_onednn; PyTorch times its own
                arrays = make_arrays(shapes, 1)
                tg = TorchGrad(c, wrt, arrays, incoming)
                constants = [] if args.no_constants else c.get("constant", {}).get(wrt, [])
                sides = {}  # side -> [(median, min) per round]
                impl = {}
                for _ in range(args.rounds):
                    tj = tilec_bench(tilec, prog, shapes, constants, args.runs, args.warmup)
                    sides.setdefault("tilec", []).append((tj["median_ms"], tj["min_ms"]))
                    sides.setdefault("torch", []).append(peer_env.median_ms(tg.backward, args.runs, args.warmup, WARM_S))
                    sides.setdefault("torch f+b", []).append(
                        peer_env.median_ms(tg.forward_backward, args.runs, args.warmup, WARM_S))
                    if "openblas" in errs:
                        call, _ = matmul_grad_blas(wrt, arrays, incoming)
                        time.sleep(PAUSE_S)  # PyTorch's OpenMP workers would take a core from OpenBLAS's
                        sides.setdefault("openblas", []).append(peer_env.median_ms(call, args.runs, args.warmup, WARM_S))
                    if "onednn any" in errs:
                        for wei in ("any", "hwio"):
                            r = onednn(args.build, c, wrt, incoming, wei, tmp, args.runs, args.warmup,
                                       args.threads)
                            sides.setdefault("onednn " + wei, []).append((r["median_ms"], r["min_ms"]))
                            impl[wei] = r["impl"]
                med = {s: statistics.median(m for m, _ in r) for s, r in sides.items()}
                peers = [s for s in sides if s not in ("tilec", "torch f+b")]
                best = min(peers, key=lambda s: med[s])
                ratio = statistics.median(p[0] / t[0] for p, t in zip(sides[best], sides["tilec"]))
                min_r = min(n for _, n in sides[best]) / min(n for _, n in sides["tilec"])
                row = dict(case=c["name"], wrt=wrt, program=os.path.basename(prog), medians=med, best_peer=best,
                           ratio=ratio, min_ratio=min_r, rel_err=errs, onednn_impl=impl, rounds=args.rounds,
                           tilec_kernels=len(tj.get("kernels", [])), compile_ms=tj.get("compile_ms"))
                rows.append(row)
                fmt_ms = lambda s: "%9.3f" % med[s] if s in med else "%9s" % "-"  # noqa: E731
                print("%-30s %-3s %s %s %s %s %s %s %-11s %6.2f %6.2f %8.1g %s" % (
                    c["name"], wrt, fmt_ms("tilec"), fmt_ms("onednn any"), fmt_ms("onednn hwio"),
                    fmt_ms("openblas"), fmt_ms("torch"),
                    fmt_ms("torch f+b"), best, ratio, min_r, errs["tilec"],
                    " / ".join(impl.get(w, "") for w in ("any", "hwio")) if impl else ""))
                sys.stdout.flush()
        print("\nload at the end: %s" % subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
