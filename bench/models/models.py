#!/usr/bin/python3
"""Whole models through Tilec against PyTorch: torchvision's resnet18,
resnet50 and mobilenet_v2 and a BERT-base encoder layer (d 768, 12 heads,
FFN 3072, sequence 128), random weights, eval mode, exported to ONNX at
opset 13, f32, batch 1 and 8.

For each model and batch, side by side on this machine:
  * the outputs first: `tilec run MODEL.onnx` on the model's input against
    PyTorch's output (normwise relative error, must be <= 1e-4);
  * Tilec's median latency (`tilec bench`, whole-program wall time) and
    PyTorch's, eager and `torch.jit.trace` + `freeze` +
    `optimize_for_inference` (the faster of the two is the peer), medians
    over --runs calls after warm-up, PyTorch on --threads threads;
  * Tilec's GFLOP/s as a fraction of the machine's FMA peak (bench_machine);
  * Tilec's time to first result, cold (a fresh disk cache) and warm (a
    second process on that cache): the whole `tilec run MODEL.onnx`
    process, import, compile and one run included;
  * the peak resident memory of each side's process (Tilec: `tilec bench`;
    PyTorch: a process that only runs the model).

    cmake -S . -B build -G Ninja && ninja -C build tilec bench_machine && /usr/bin/python3 bench/models/models.py

Options: --only resnet18,bert  --batches 1,8  --runs 20  --threads 2  --json FILE
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

# The peers' environment (huge pages, OpenBLAS's kernels for this CPU, which
# Debian's PyTorch multiplies with): bench/peer_env.py.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import peer_env  # noqa: E402
peer_env.reexec()

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["resnet18", "resnet50", "mobilenet_v2", "bert"]


def build_model(name):
    import torch
    import torchvision
    torch.manual_seed(0)
    if name == "bert":
        return torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072, batch_first=True,
                                                dropout=0.0).eval()
    return getattr(torchvision.models, name)().eval()


def example(name, batch):
    import torch
    torch.manual_seed(1)
    return torch.randn(batch, 128, 768) if name == "bert" else torch.randn(batch, 3, 224, 224)


def torch_worker(name, batch, threads, runs):
    """Runs in its own process: PyTorch's medians and its peak RSS."""
    import torch
    torch.set_num_threads(threads)
    model, x = build_model(name), example(name, batch)

    def median(f):
        for _ in range(3):
            f()
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            f()
            times.append(time.perf_counter() - t)
        return statistics.median(times) * 1e3

    with torch.no_grad():
        eager = median(lambda: model(x))
        traced = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, x).eval()))
        jit = median(lambda: traced(x))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"eager_ms": eager, "jit_ms": jit, "rss_mb": rss}))


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return r


def timed_rss(cmd, env):
    """Runs cmd: its stdout, its wall time in s and its peak RSS in MB (/usr/bin/time)."""
    t = time.perf_counter()
    r = run(["/usr/bin/time", "-f", "%M", *cmd], env)
    wall = time.perf_counter() - t
    return r.stdout, wall, int(r.stderr.strip().splitlines()[-1]) / 1024


def main():
    root = os.path.dirname(os.path.dirname(HERE))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(root, "build"))
    ap.add_argument("--only", default=",".join(MODELS))
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--target", default="llvm")
    ap.add_argument("--json")
    ap.add_argument("--torch-worker", nargs=2, metavar=("MODEL", "BATCH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_worker:
        return torch_worker(args.torch_worker[0], int(args.torch_worker[1]), args.threads, args.runs)

    import numpy as np
    import torch
    tilec = os.path.join(args.build, "tools", "tilec")
    machine = json.loads(run([os.path.join(args.build, "bench", "bench_machine"), "--threads",
                              str(args.threads)]).stdout)
    print(f"machine: FMA peak {machine['fma_gflops']:.1f} GFLOP/s ({machine['vector']}, {args.threads} threads); "
          f"load {os.getloadavg()[0]:.2f}")
    print(peer_env.describe(peer_env.load_openblas()))
    rows = []
    tmp = tempfile.TemporaryDirectory(prefix="tilec_models_")
    header = (f"{'model':<13}{'batch':>5} {'rel err':>9} {'tilec ms':>9} {'eager ms':>9} {'jit ms':>9} "
              f"{'vs best':>8} {'GFLOP/s':>8} {'% peak':>7} {'cold s':>7} {'warm s':>7} {'RSS MB':>7} {'torch MB':>9}")
    print(header)
    for name in [m for m in MODELS if any(o and o in m for o in args.only.split(","))]:
        model = build_model(name)
        for batch in [int(b) for b in args.batches.split(",")]:
            x = example(name, batch)
            path = os.path.join(tmp.name, f"{name}_{batch}.onnx")
            torch.onnx.export(model, (x,), path, opset_version=13, input_names=["input"], output_names=["output"])
            with torch.no_grad():
                want = model(x).numpy()
            xp, yp = os.path.join(tmp.name, "x.npy"), os.path.join(tmp.name, "y.npy")
            np.save(xp, x.numpy())
            env = dict(os.environ, TILEC_CACHE_DIR=os.path.join(tmp.name, f"cache_{name}_{batch}"))
            run_cmd = [tilec, "run", path, "--target", args.target, "--in", f"input={xp}", "--out", f"output={yp}"]
            _, cold_s, _ = timed_rss(run_cmd, env)
            got = np.load(yp).astype(np.float64)
            err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
            _, warm_s, _ = timed_rss(run_cmd, env)
            bench_cmd = [tilec, "bench", path, "--target", args.target, "--runs", str(args.runs), "--json"]
            out, _, rss = timed_rss(bench_cmd, env)
            first = json.loads(out)
            t = json.loads(run([sys.executable, __file__, "--torch-worker", name, str(batch), "--threads",
                                str(args.threads), "--runs", str(args.runs)]).stdout)
            second = json.loads(run(bench_cmd, env).stdout)
            # Tilec's median before PyTorch's and after it: their mean.
            tilec_ms = (first["median_ms"] + second["median_ms"]) / 2
            best = min(t["eager_ms"], t["jit_ms"])
            gflops = first["flops"] / (tilec_ms * 1e6)
            row = dict(model=name, batch=batch, rel_error=err, tilec_ms=tilec_ms, eager_ms=t["eager_ms"],
                       jit_ms=t["jit_ms"], ratio=best / tilec_ms, gflops=gflops,
                       peak_fraction=gflops / machine["fma_gflops"], cold_s=cold_s, warm_s=warm_s,
                       tilec_rss_mb=rss, torch_rss_mb=t["rss_mb"])
            rows.append(row)
            print(f"{name:<13}{batch:>5} {err:>9.1e} {tilec_ms:>9.2f} {t['eager_ms']:>9.2f} {t['jit_ms']:>9.2f} "
                  f"{row['ratio']:>7.2f}x {gflops:>8.1f} {100 * row['peak_fraction']:>6.1f}% "
                  f"{cold_s:>7.2f} {warm_s:>7.2f} {rss:>7.0f} {t['rss_mb']:>9.0f}",
                  flush=True)
            if err > 1e-4:
                print(f"  MISMATCH: {name} batch {batch} normwise relative error {err:.3g} > 1e-4")
    print(f"load at the end {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "rows": rows}, f, indent=2)
    return 1 if any(r["rel_error"] > 1e-4 for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
