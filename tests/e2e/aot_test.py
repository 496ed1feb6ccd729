#!/usr/bin/python3
"""Ahead-of-time output of `tilec compile -o`: the seed's conv+ReLU compiled
for the host CPU, linked with the system C compiler into a small C program
(no LLVM, no libtilec), run, and compared with the reference evaluator
(`tilec run --target ref`); a second program linked beside it; and the
OpenCL form (.cl + launch description).

Run with /usr/bin/python3 (the interpreter that has NumPy):
    tests/e2e/aot_test.py --tilec build/tools/tilec --source-dir .
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

TILEC: str = ""
SOURCE_DIR: Path = Path(".")

# Sizes that divide no block (tile, vector width, register block).
D_SHAPE = (2, 13, 11, 7)
K_SHAPE = (3, 3, 9, 7)
MATMUL = "function (A[M, L], B[L, N]) -> (C) {\n  C[i, j : M, N] = +(A[i, k] * B[k, j]);\n}\n"

# Reads the inputs as raw float32 files, runs both programs (the conv's output
# at an offset that is not 64-byte aligned when argv[1] is "misaligned") and
# writes the outputs as raw files.
APP = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "mm.h"

static void* read_file(const char* path, size_t bytes) {
  void* p = malloc(bytes);
  FILE* f = fopen(path, "rb");
  if (!p || !f || fread(p, 1, bytes, f) != bytes) { fprintf(stderr, "cannot read %s\n", path); exit(2); }
  fclose(f);
  return p;
}

static void write_file(const char* path, const void* p, size_t bytes) {
  FILE* f = fopen(path, "wb");
  if (!f || fwrite(p, 1, bytes, f) != bytes) { fprintf(stderr, "cannot write %s\n", path); exit(2); }
  fclose(f);
}

int main(int argc, char** argv) {
  int misaligned = argc > 1 && strcmp(argv[1], "misaligned") == 0;
  float* d = read_file("d.bin", conv_D_BYTES);
  float* k = read_file("k.bin", conv_K_BYTES);
  char* storage = malloc(conv_R_BYTES + 64 + 4);
  float* r = (float*)(storage + (misaligned ? 4 : 0));
  if (conv(d, k, r) != 0) return 3;
  if (conv(d, k, r) != 0) return 3;  /* twice: temporaries and the pool are reused */
  write_file("r.bin", r, conv_R_BYTES);
  float* a = read_file("a.bin", mm_A_BYTES);
  float* b = read_file("b.bin", mm_B_BYTES);
  float* c = malloc(mm_C_BYTES);
  if (mm(a, b, c) != 0) return 3;
  write_file("c.bin", c, mm_C_BYTES);
  return 0;
}
"""


def tilec(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    r = subprocess.run([TILEC, *args], capture_output=True, text=True, timeout=300, cwd=cwd)
    if r.returncode != 0:
        raise AssertionError(f"tilec {' '.join(args)}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


class AotTest(unittest.TestCase):
    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="tilec_aot_test_")
        self.dir = Path(self._tmp.name)

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def shapes(self) -> list[str]:
        return ["-s", f"D=f32[{','.join(map(str, D_SHAPE))}]", "-s", f"K=f32[{','.join(map(str, K_SHAPE))}]"]

    def test_llvm_object_links_into_a_c_program(self) -> None:
        if not shutil.which("cc"):
            self.skipTest("no system C compiler")
        conv = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        r = tilec("compile", conv, *self.shapes(), "-o", str(self.dir / "conv"))
        self.assertEqual(sorted(Path(line.split()[1]).name for line in r.stdout.splitlines()),
                         ["conv.c", "conv.h", "conv.o", "tilec_aot_runtime.c", "tilec_aot_runtime.h"])
        (self.dir / "mm.tile").write_text(MATMUL)
        tilec("compile", str(self.dir / "mm.tile"), "-s", "A=f32[37,19]", "-s", "B=f32[19,23]", "--target", "llvm",
              "-o", str(self.dir / "mm"))
        header = (self.dir / "conv.h").read_text()
        self.assertIn("int conv(const float* D, const float* K, float* R);", header)
        self.assertIn("//   D: input f32[2, 13, 11, 7], layout row-major, 8008 bytes", header)
        self.assertIn("#define conv_R_BYTES", header)
        self.assertIn("int mm(const float* A, const float* B, float* C);", (self.dir / "mm.h").read_text())

        rng = np.random.default_rng(11)
        d = rng.uniform(-1, 1, D_SHAPE).astype(np.float32)
        k = rng.uniform(-1, 1, K_SHAPE).astype(np.float32)
        a = rng.uniform(-1, 1, (37, 19)).astype(np.float32)
        b = rng.uniform(-1, 1, (19, 23)).astype(np.float32)
        for name, array in [("d", d), ("k", k), ("a", a), ("b", b)]:
            array.tofile(self.dir / f"{name}.bin")
            np.save(self.dir / f"{name}.npy", array)
        # The reference evaluator on the same inputs.
        tilec("run", conv, "--in", "D=d.npy", "--in", "K=k.npy", "--out", "R=r_ref.npy", "--target", "ref", cwd=self.dir)
        tilec("run", "mm.tile", "--in", "A=a.npy", "--in", "B=b.npy", "--out", "C=c_ref.npy", "--target", "ref",
              cwd=self.dir)

        (self.dir / "app.c").write_text(APP)
        libs = ["-lpthread", "-lm"]
        if "-lmvec" in header or "-lmvec" in (self.dir / "mm.h").read_text():
            libs.append("-lmvec")
        build = subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-o", "app", "app.c", "conv.c", "mm.c",
                                "tilec_aot_runtime.c", "conv.o", "mm.o", *libs],
                               cwd=self.dir, capture_output=True, text=True)
        self.assertEqual(build.returncode, 0, build.stderr)
        # The application needs neither LLVM nor libtilec.
        ldd = subprocess.run(["ldd", str(self.dir / "app")], capture_output=True, text=True).stdout
        self.assertNotIn("LLVM", ldd)
        self.assertNotIn("tilec", ldd)
        for mode in ["aligned", "misaligned"]:
            for threads in ["1", "3"]:
                with self.subTest(mode=mode, threads=threads):
                    run = subprocess.run(["./app", mode], cwd=self.dir, capture_output=True, text=True,
                                         env={**os.environ, "TILEC_AOT_THREADS": threads})
                    self.assertEqual(run.returncode, 0, run.stderr)
                    got = np.fromfile(self.dir / "r.bin", np.float32).reshape(np.load(self.dir / "r_ref.npy").shape)
                    want = np.load(self.dir / "r_ref.npy")
                    self.assertGreater((want == 0).sum(), 0)  # ReLU clipped something
                    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
                    c = np.fromfile(self.dir / "c.bin", np.float32).reshape(37, 23)
                    np.testing.assert_allclose(c, np.load(self.dir / "c_ref.npy"), rtol=1e-4, atol=1e-5)

    def test_opencl_source_and_launch_description(self) -> None:
        conv = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        r = tilec("compile", conv, *self.shapes(), "--target", "opencl", "-o", str(self.dir / "conv"), "--json")
        self.assertEqual(json.loads(r.stdout)["files"], [str(self.dir / "conv.cl"), str(self.dir / "conv.json")])
        source = (self.dir / "conv.cl").read_text()
        launch = json.loads((self.dir / "conv.json").read_text())
        self.assertEqual(launch["program"], "conv")
        self.assertEqual(launch["source"], "conv.cl")
        self.assertEqual((launch["inputs"], launch["outputs"]), (["D", "K"], ["R"]))
        buffers = {b["name"]: b for b in launch["buffers"]}
        self.assertEqual(buffers["D"], {"name": "D", "role": "input", "dtype": "f32", "shape": list(D_SHAPE),
                                        "layout": "row-major", "bytes": 4 * int(np.prod(D_SHAPE))})
        self.assertEqual(buffers["R"]["role"], "output")
        self.assertGreaterEqual(len(launch["kernels"]), 1)
        for k in launch["kernels"]:
            self.assertTrue(k["name"].startswith("conv_kernel_"), k["name"])
            self.assertRegex(source, rf"__kernel .*void {k['name']}\(", "no such kernel in conv.cl")
            for g, l in zip(k["global"], k["local"]):
                self.assertEqual(g % l, 0)
            for arg in k["args"]:
                self.assertIn(arg, buffers)
        self.assertIn("R", launch["kernels"][-1]["args"])

    def test_errors(self) -> None:
        conv = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        r = subprocess.run([TILEC, "compile", conv, *self.shapes(), "-o", str(self.dir / "conv-relu")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("'conv-relu' is not a C identifier", r.stderr)
        r = subprocess.run([TILEC, "compile", conv, *self.shapes(), "-o", str(self.dir / "missing" / "conv")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot write", r.stderr)
        r = subprocess.run([TILEC, "compile", conv, *self.shapes(), "--hw", "seed", "-o", str(self.dir / "conv")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no --hw seed", r.stderr)


def main() -> None:
    global TILEC, SOURCE_DIR
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tilec", required=True, help="path to the tilec binary")
    parser.add_argument("--source-dir", type=Path, required=True, help="the repository root")
    args, rest = parser.parse_known_args()
    TILEC = os.path.abspath(args.tilec)
    SOURCE_DIR = args.source_dir.resolve()
    unittest.main(argv=[sys.argv[0], *rest])


if __name__ == "__main__":
    main()
