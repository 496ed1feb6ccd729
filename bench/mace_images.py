#!/usr/bin/python3
"""MACE OpenCL images against buffers (issue 10, goal line 3).

conv 3x3 + ReLU (N=1, 56x56, 64->64, bench/workloads/conv3x3_relu_oihw.tile)
on an OpenCL device (PoCL here), side by side in one run: the same Tile
program with
  buffers  D, R NHWC, K OIHW (row-major)
  images   D, R image_channel_major, K image_conv_filter (image2d_t, read_imagef)
  blocked  the images' element order in plain buffers (D, R abDc4d, K Acdb4a)
and the relayouts NHWC buffer <-> channel-major image (copy_nhwc.tile) next
to a buffer-to-buffer copy. Each variant is a `tilec bench --json` process;
the rounds interleave the variants, and the figure is the median of the
rounds' medians. Usage:
  /usr/bin/python3 bench/mace_images.py [--tilec build/tools/tilec] [--target opencl] [--rounds 3] [--runs 10]
"""
import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONV = str(ROOT / "bench/workloads/conv3x3_relu_oihw.tile")
COPY = str(ROOT / "bench/workloads/copy_nhwc.tile")
D, K = "f32[1,56,56,64]", "f32[64,64,3,3]"

VARIANTS = [
    ("conv buffers (NHWC, OIHW)", CONV, ["-s", f"D={D}", "-s", f"K={K}"]),
    ("conv images (channel-major, conv filter)", CONV,
     ["-s", f"D={D}:image_channel_major", "-s", f"K={K}:image_conv_filter", "--layout", "R=image_channel_major"]),
    ("conv blocked buffers (abDc4d, Acdb4a)", CONV,
     ["-s", f"D={D}:abDc4d", "-s", f"K={K}:Acdb4a", "--layout", "R=abDc4d"]),
    ("copy NHWC buffer -> NHWC buffer", COPY, ["-s", f"D={D}"]),
    ("copy NHWC buffer -> channel-major image", COPY, ["-s", f"D={D}", "--layout", "O=image_channel_major"]),
    ("copy channel-major image -> NHWC buffer", COPY, ["-s", f"D={D}:image_channel_major"]),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tilec", default=str(ROOT / "build/tools/tilec"))
    ap.add_argument("--target", default="opencl")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    medians = {name: [] for name, _, _ in VARIANTS}
    gbps = {name: [] for name, _, _ in VARIANTS}
    for r in range(args.rounds):
        for name, tile, extra in VARIANTS:
            cmd = [args.tilec, "bench", tile, *extra, "--target", args.target, "--runs", str(args.runs),
                   "--warmup", "2", "--json"]
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"{' '.join(cmd)}\n{out.stderr}")
            j = json.loads(out.stdout)
            medians[name].append(j["median_ms"])
            gbps[name].append(j["gbps"])
    print(f"target {args.target}, {args.rounds} rounds x {args.runs} runs (median of round medians)")
    print(f"{'variant':45} {'ms':>10} {'GB/s':>8}")
    ms = {}
    for name, _, _ in VARIANTS:
        ms[name] = statistics.median(medians[name])
        print(f"{name:45} {ms[name]:10.3f} {statistics.median(gbps[name]):8.2f}")
    base = ms[VARIANTS[0][0]]
    print(f"images / buffers time ratio: {ms[VARIANTS[1][0]] / base:.1f}x "
          f"(speed ratio {base / ms[VARIANTS[1][0]]:.4f})")
    print(f"blocked buffers / buffers time ratio: {ms[VARIANTS[2][0]] / base:.2f}x")


if __name__ == "__main__":
    main()
