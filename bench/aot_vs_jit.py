#!/usr/bin/python3
"""Ahead-of-time kernels against the JIT: the seed's conv+ReLU compiled with
`tilec compile -o` and linked into a C program (the system compiler, -O2),
timed there, next to `tilec bench --json` on the same shapes (the JIT's
kernels through the runtime, inputs already uploaded). Both sides run the
same optimized code on the same thread count; the difference is the launch
path (the AOT runtime's pthread pool vs. the runtime's pool).

    /usr/bin/python3 bench/aot_vs_jit.py [--tilec build/tools/tilec] [--runs 50] [-s D=f32[1,56,56,64] -s K=f32[3,3,64,64]]

Not a test: wall times depend on the machine's load (see bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

APP = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "conv.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  int runs = atoi(argv[1]), warmup = atoi(argv[2]);
  float* d = aligned_alloc(64, (conv_D_BYTES + 63) / 64 * 64);
  float* k = aligned_alloc(64, (conv_K_BYTES + 63) / 64 * 64);
  float* r = aligned_alloc(64, (conv_R_BYTES + 63) / 64 * 64);
  srand(1);
  for (size_t i = 0; i < conv_D_BYTES / 4; ++i) d[i] = rand() / (float)RAND_MAX * 2 - 1;
  for (size_t i = 0; i < conv_K_BYTES / 4; ++i) k[i] = rand() / (float)RAND_MAX * 2 - 1;
  for (int i = 0; i < warmup; ++i) conv(d, k, r);
  double* ms = malloc(sizeof(double) * runs);
  for (int i = 0; i < runs; ++i) {
    double start = now_ms();
    if (conv(d, k, r) != 0) return 1;
    ms[i] = now_ms() - start;
  }
  qsort(ms, runs, sizeof(double), cmp);
  double median = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2;
  printf("{\"median_ms\": %g, \"min_ms\": %g}\n", median, ms[0]);
  return 0;
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tilec", default=str(ROOT / "build" / "tools" / "tilec"))
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("-s", "--shape", action="append", default=None)
    args = ap.parse_args()
    shapes = args.shape or ["D=f32[1,56,56,64]", "K=f32[3,3,64,64]"]
    shape_args = [a for s in shapes for a in ("-s", s)]
    conv = str(ROOT / "examples" / "conv_relu.tile")
    with tempfile.TemporaryDirectory(prefix="tilec_aot_bench_") as tmp:
        d = Path(tmp)
        subprocess.run([args.tilec, "-q", "compile", conv, *shape_args, "--target", "llvm", "-o", str(d / "conv")],
                       check=True, capture_output=True)
        (d / "app.c").write_text(APP)
        libs = ["-lpthread", "-lm"] + (["-lmvec"] if "-lmvec" in (d / "conv.h").read_text() else [])
        subprocess.run(["cc", "-O2", "-o", "app", "app.c", "conv.c", "tilec_aot_runtime.c", "conv.o", *libs],
                       cwd=d, check=True)
        aot = json.loads(subprocess.run([str(d / "app"), str(args.runs), str(args.warmup)], check=True,
                                        capture_output=True, text=True).stdout)
    jit = json.loads(subprocess.run([args.tilec, "bench", conv, *shape_args, "--target", "llvm", "--runs",
                                     str(args.runs), "--warmup", str(args.warmup), "--json"],
                                    check=True, capture_output=True, text=True).stdout)
    print(f"seed conv+ReLU {' '.join(shapes)}, {args.runs} runs after {args.warmup} warm-up, "
          f"{os.cpu_count()} CPUs (load {os.getloadavg()[0]:.2f})")
    print(f"  AOT (tilec compile -o, linked C program): median {aot['median_ms']:.3f} ms  min {aot['min_ms']:.3f} ms")
    print(f"  JIT (tilec bench --target llvm):          median {jit['median_ms']:.3f} ms  min {jit['min_ms']:.3f} ms")
    print(f"  AOT / JIT median: {aot['median_ms'] / jit['median_ms']:.3f}")


if __name__ == "__main__":
    main()
