#!/usr/bin/python3
"""MACE OpenCL images against buffers (issue 10, goal line 3).

conv 3x3 + ReLU (N=1, 56x56, 64->64, bench/workloads/conv3x3_relu_oihw.tile)
on an OpenCL device (PoCL here), side by side in one run: the same Tile
program with
  buffers  D, R NHWC, K OIHW (row-major)
  images   D, R image_channel_major, K image_conv_filter, read through
           read_imagef (TILEC_CL_IMAGES=sampler) and through the images'
           linear buffers (TILEC_CL_IMAGES=linear, the default on CPU devices)
  blocked  the images' element order in plain buffers (D, R abDc4d, K Acdb4a)
and the relayouts NHWC buffer <-> channel-major image (copy_nhwc.tile) in
both image modes, at N=1 and N=8, next to a buffer-to-buffer copy of the
same size. K is `--constant` (weights: their relayouts run once, before
the timed runs, as in bench_peers). Each variant is a `tilec bench --json` process;
the rounds interleave the variants, and the figure is the median of the
rounds' medians. Usage:
  /usr/bin/python3 bench/mace_images.py [--tilec build/tools/tilec] [--target opencl] [--rounds 3] [--runs 10]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONV = str(ROOT / "bench/workloads/conv3x3_relu_oihw.tile")
COPY = str(ROOT / "bench/workloads/copy_nhwc.tile")
D, K = "f32[1,56,56,64]", "f32[64,64,3,3]"

D8 = "f32[8,56,56,64]"
SAMPLER, LINEAR = {"TILEC_CL_IMAGES": "sampler"}, {"TILEC_CL_IMAGES": "linear"}
# K is a constant (a network's weights): its relayouts run once, as in bench_peers.
IMAGES = ["-s", f"D={D}:image_channel_major", "-s", f"K={K}:image_conv_filter", "--layout", "R=image_channel_major",
          "--constant", "K"]

# (name, tile, arguments, environment)
VARIANTS = [
    ("conv buffers (NHWC, OIHW)", CONV, ["-s", f"D={D}", "-s", f"K={K}", "--constant", "K"], {}),
    ("conv images, read_imagef", CONV, IMAGES, SAMPLER),
    ("conv images, linear buffers", CONV, IMAGES, LINEAR),
    ("conv blocked buffers (abDc4d, Acdb4a)", CONV,
     ["-s", f"D={D}:abDc4d", "-s", f"K={K}:Acdb4a", "--layout", "R=abDc4d", "--constant", "K"], {}),
]
for n, shape in (("N=1", D), ("N=8", D8)):
    VARIANTS += [
        (f"copy {n} NHWC buffer -> NHWC buffer", COPY, ["-s", f"D={shape}"], {}),
        (f"copy {n} NHWC buffer -> image, read_imagef", COPY,
         ["-s", f"D={shape}", "--layout", "O=image_channel_major"], SAMPLER),
        (f"copy {n} NHWC buffer -> image, linear", COPY,
         ["-s", f"D={shape}", "--layout", "O=image_channel_major"], LINEAR),
        (f"copy {n} image -> NHWC buffer, read_imagef", COPY, ["-s", f"D={shape}:image_channel_major"], SAMPLER),
        (f"copy {n} image -> NHWC buffer, linear", COPY, ["-s", f"D={shape}:image_channel_major"], LINEAR),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tilec", default=str(ROOT / "build/tools/tilec"))
    ap.add_argument("--target", default="opencl")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    medians = {name: [] for name, _, _, _ in VARIANTS}
    gbps = {name: [] for name, _, _, _ in VARIANTS}
    for r in range(args.rounds):
        for name, tile, extra, env in VARIANTS:
            cmd = [args.tilec, "bench", tile, *extra, "--target", args.target, "--runs", str(args.runs),
                   "--warmup", "2", "--json"]
            out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env})
            if out.returncode != 0:
                sys.exit(f"{' '.join(cmd)}\n{out.stderr}")
            j = json.loads(out.stdout)
            medians[name].append(j["median_ms"])
            gbps[name].append(j["gbps"])
    print(f"target {args.target}, {args.rounds} rounds x {args.runs} runs (median of round medians)")
    print(f"{'variant':45} {'ms':>10} {'GB/s':>8}")
    ms, rate = {}, {}
    for name, _, _, _ in VARIANTS:
        ms[name] = statistics.median(medians[name])
        rate[name] = statistics.median(gbps[name])
        print(f"{name:45} {ms[name]:10.3f} {rate[name]:8.2f}")
    base = ms[VARIANTS[0][0]]
    for name, _, _, _ in VARIANTS[1:4]:
        print(f"{name} / buffers: time {ms[name] / base:.2f}x (speed ratio {base / ms[name]:.4f})")
    for n in ("N=1", "N=8"):
        copy = rate[f"copy {n} NHWC buffer -> NHWC buffer"]
        for name, _, _, _ in VARIANTS:
            if name.startswith(f"copy {n}") and "image" in name:
                print(f"{name}: {100 * rate[name] / copy:.0f}% of the buffer copy's GB/s")

if __name__ == "__main__":
    main()
