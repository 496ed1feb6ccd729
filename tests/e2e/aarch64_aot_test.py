#!/usr/bin/python3
"""Ahead-of-time output for an AArch64 CPU on any host: `tilec compile --cpu
neoverse-n1 -o NAME` for the seed's conv+ReLU, a matmul and the math builtins
(sizes that divide no vector width), the generated files cross-compiled with
a small C driver by Debian's aarch64-linux-gnu-gcc, run under qemu-aarch64,
and compared with the reference evaluator (`tilec run --target ref`) on the
host; then every program of examples/ the same way against its NumPy
reference (tests/e2e/example_specs.py).

Needs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user
(scripts/setup.sh installs them); without them it exits 77, which ctest
reports as skipped. Run with /usr/bin/python3 (the interpreter that has NumPy):
    tests/e2e/aarch64_aot_test.py --tilec build/tools/tilec --source-dir .
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import example_specs  # noqa: E402 (beside this file)
from aot_c_io import C_FILE_IO  # noqa: E402
import examples_test  # noqa: E402

TILEC: str = ""
SOURCE_DIR: Path = Path(".")
CC = "aarch64-linux-gnu-gcc"
QEMU = "qemu-aarch64"
SYSROOT = Path("/usr/aarch64-linux-gnu")
CPU = "neoverse-n1"
ELF_MACHINE_AARCH64 = 183  # e_machine of an AArch64 ELF object

CONV = """function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x+i-1, y+j-1, ci] * K[i, j, co, ci]);
  R = (O > 0 ? O : 0);
}
"""
MATMUL = "function (A[M, L], B[L, N]) -> (C) {\n  C[i, j : M, N] = +(A[i, k] * B[k, j]);\n}\n"
# The library builtins, which take inline polynomials or libm on AArch64
# (no x86 vector ABI): positive arguments for log and pow.
MATH = """function (X[N]) -> (Y) {
  P = X * X + 0.5;
  Y = exp(X) + log(P) + pow(P, X) + tanh(X) + erf(X) + sin(X) + cos(X) + atan(X);
}
"""

# Sizes that divide no block (NEON's 4 lanes, the register block, the tiles).
PROGRAMS = {
    "conv": (CONV, {"D": (1, 13, 13, 5), "K": (3, 3, 19, 5)}, "R"),
    "mm": (MATMUL, {"A": (37, 29), "B": (29, 41)}, "C"),
    "elem": (MATH, {"X": (1003,)}, "Y"),
}

# Reads each program's inputs as raw float32 files, runs it, writes its output.
DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>

#include "conv.h"
#include "elem.h"
#include "mm.h"

""" + C_FILE_IO + r"""
int main(void) {
  float* r = malloc(conv_R_BYTES);
  if (conv(read_file("D.bin", conv_D_BYTES), read_file("K.bin", conv_K_BYTES), r) != 0) return 3;
  write_file("R.out", r, conv_R_BYTES);
  float* c = malloc(mm_C_BYTES);
  if (mm(read_file("A.bin", mm_A_BYTES), read_file("B.bin", mm_B_BYTES), c) != 0) return 3;
  write_file("C.out", c, mm_C_BYTES);
  float* y = malloc(elem_Y_BYTES);
  if (elem(read_file("X.bin", elem_X_BYTES), y) != 0) return 3;
  write_file("Y.out", y, elem_Y_BYTES);
  return 0;
}
"""


# Element types: NumPy's names and Tilec's.
DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "int8": "i8", "int16": "i16", "int32": "i32",
          "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool"}
NUMPY_TYPES = {t: n for n, t in DTYPES.items()}
# A tensor line of a generated header: "//   R: output f32[1, 13, 13, 19], layout row-major, 12844 bytes".
HEADER_LINE = re.compile(r"^//   (\w+): (input|output) (\w+)\[([0-9, ]*)\], layout (\S+), (\d+) bytes$")


# A C program that reads each input of `buffers` (header lines) from in_NAME.bin, calls prog and
# writes each output to out_NAME.bin.
def example_driver(buffers: list[tuple[str, ...]]) -> str:
    lines = ["#include <stdio.h>", "#include <stdlib.h>", "", '#include "prog.h"', "",
             "static void* read_file(const char* path, size_t bytes) {",
             "  void* p = malloc(bytes ? bytes : 1);",
             '  FILE* f = fopen(path, "rb");',
             '  if (!p || !f || fread(p, 1, bytes, f) != bytes) { fprintf(stderr, "cannot read %s\\n", path); exit(2); }',
             "  fclose(f);", "  return p;", "}", "", "int main(void) {"]
    args = []
    for tensor, role, _, _, _, size in buffers:
        if role == "input":
            lines.append(f'  void* {tensor}_ = read_file("in_{tensor}.bin", {size});')
        else:
            lines.append(f"  void* {tensor}_ = malloc({size} + 1);")
        args.append(f"{tensor}_")
    lines.append(f"  if (prog({', '.join(args)}) != 0) return 3;")
    for tensor, role, _, _, _, size in buffers:
        if role == "output":
            lines += [f'  FILE* {tensor}_file = fopen("out_{tensor}.bin", "wb");',
                      f"  if (!{tensor}_file || fwrite({tensor}_, 1, {size}, {tensor}_file) != {size}) return 2;",
                      f"  fclose({tensor}_file);"]
    return "\n".join(lines + ["  return 0;", "}"]) + "\n"


def tilec(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    r = subprocess.run([TILEC, *args], capture_output=True, text=True, timeout=300, cwd=cwd)
    if r.returncode != 0:
        raise AssertionError(f"tilec {' '.join(args)}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def shape_flags(shapes: dict[str, tuple[int, ...]]) -> list[str]:
    flags = []
    for name, shape in shapes.items():
        flags += ["-s", f"{name}=f32[{','.join(map(str, shape))}]"]
    return flags


class AArch64AotTest(unittest.TestCase):
    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="tilec_aarch64_aot_test_")
        self.dir = Path(self._tmp.name)

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def test_cross_compiled_kernels_match_the_reference(self) -> None:
        rng = np.random.default_rng(31)
        want = {}
        for name, (source, shapes, output) in PROGRAMS.items():
            (self.dir / f"{name}.tile").write_text(source)
            r = tilec("compile", f"{name}.tile", *shape_flags(shapes), "--cpu", CPU, "-o", name, cwd=self.dir)
            self.assertEqual(sorted(Path(line.split()[1]).name for line in r.stdout.splitlines()),
                             sorted([f"{name}.c", f"{name}.h", f"{name}.o", "tilec_aot_runtime.c",
                                     "tilec_aot_runtime.h"]))
            header = (self.dir / f"{name}.h").read_text()
            self.assertIn(f"// The object holds code for CPU {CPU}, aarch64-unknown-linux-gnu (its instruction set "
                          "extensions).", header)
            self.assertIn(f"//   {CC} -O2 app.c {name}.c tilec_aot_runtime.c {name}.o -lpthread -lm\n", header)
            obj = (self.dir / f"{name}.o").read_bytes()
            self.assertEqual(obj[:4], b"\x7fELF")
            self.assertEqual(int.from_bytes(obj[18:20], "little"), ELF_MACHINE_AARCH64, f"{name}.o is not AArch64")
            self.assertNotIn(b"_ZGV", obj)  # no x86 vector-function ABI calls
            args = []
            for tensor, shape in shapes.items():
                data = rng.uniform(-1, 1, shape).astype(np.float32)
                data.tofile(self.dir / f"{tensor}.bin")
                np.save(self.dir / f"{tensor}.npy", data)
                args += ["--in", f"{tensor}={tensor}.npy"]
            tilec("run", f"{name}.tile", *args, "--out", f"{output}={output}_ref.npy", "--target", "ref",
                  cwd=self.dir)
            want[output] = np.load(self.dir / f"{output}_ref.npy")
        self.assertGreater((want["R"] == 0).sum(), 0)  # ReLU clipped something

        (self.dir / "app.c").write_text(DRIVER)
        build = subprocess.run([CC, "-O2", "-Wall", "-Werror", "-o", "app", "app.c", "conv.c", "mm.c", "elem.c",
                                "tilec_aot_runtime.c", "conv.o", "mm.o", "elem.o", "-lpthread", "-lm"],
                               cwd=self.dir, capture_output=True, text=True)
        self.assertEqual(build.returncode, 0, build.stderr)
        for threads in ["1", "3"]:
            with self.subTest(threads=threads):
                for output in want:
                    (self.dir / f"{output}.out").unlink(missing_ok=True)
                run = subprocess.run([QEMU, "-L", str(SYSROOT), "./app"], cwd=self.dir, capture_output=True,
                                     text=True, timeout=600, env={**os.environ, "TILEC_AOT_THREADS": threads})
                self.assertEqual(run.returncode, 0, run.stderr)
                for output, expected in want.items():
                    got = np.fromfile(self.dir / f"{output}.out", np.float32).reshape(expected.shape)
                    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5, err_msg=output)

    def test_every_example_matches_numpy(self) -> None:
        # Every program of examples/ (every kernel form, dtype and special op) at its spec's odd
        # sizes, compiled for the AArch64 CPU, driven by a C program generated from its header.
        failures = []
        for name in sorted(example_specs.SPECS):
            with self.subTest(example=name):
                problem = self.run_example(name)
                if problem:
                    failures.append(f"{name}: {problem}")
        self.assertEqual(failures, [])

    def run_example(self, name: str) -> str | None:
        spec = example_specs.SPECS[name]
        inputs, expected = spec.make(np.random.default_rng(zlib.crc32(name.encode())))
        d = self.dir / name
        d.mkdir()
        flags = []
        for tensor, value in inputs.items():
            value = np.asarray(value)
            flags += ["-s", f"{tensor}={DTYPES[str(value.dtype)]}[{','.join(map(str, value.shape))}]"]
            value.tofile(d / f"in_{tensor}.bin")
        tilec("compile", str(SOURCE_DIR / "examples" / f"{name}.tile"), *flags, "--cpu", CPU, "-o", "prog", cwd=d)
        buffers = [m.groups() for line in (d / "prog.h").read_text().splitlines() if (m := HEADER_LINE.match(line))]
        (d / "app.c").write_text(example_driver(buffers))
        build = subprocess.run([CC, "-O1", "-Wall", "-Werror", "-o", "app", "app.c", "prog.c", "tilec_aot_runtime.c",
                                "prog.o", "-lpthread", "-lm"], cwd=d, capture_output=True, text=True)
        if build.returncode != 0:
            return f"{CC} failed: {build.stderr}"
        run = subprocess.run([QEMU, "-L", str(SYSROOT), "./app"], cwd=d, capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            return f"exit {run.returncode}: {run.stderr}"
        problems = []
        for tensor, role, dtype, dims, layout, _ in buffers:
            if role != "output" or tensor not in expected:
                continue
            self.assertEqual(layout, "row-major", f"{name}: {tensor}")
            shape = tuple(int(x) for x in dims.split(",")) if dims.strip() else ()
            got = np.fromfile(d / f"out_{tensor}.bin", "uint8" if dtype == "bool" else NUMPY_TYPES[dtype])
            got = got.astype(np.bool_) if dtype == "bool" else got
            if diff := examples_test.compare(tensor, np.asarray(expected[tensor]), got.reshape(shape), spec.tol):
                problems.append(diff)
        return "; ".join(problems) or None

    def test_the_host_does_not_run_aarch64_code(self) -> None:
        (self.dir / "mm.tile").write_text(MATMUL)
        r = subprocess.run([TILEC, "run", "mm.tile", "-s", "A=f32[3,4]", "-s", "B=f32[4,5]", "--random-inputs",
                            "--cpu", CPU], cwd=self.dir, capture_output=True, text=True)
        if os.uname().machine == "aarch64":
            self.assertEqual(r.returncode, 0, r.stderr)
            return
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"code for CPU '{CPU}' cannot run here: the host is x86_64, the code aarch64", r.stderr)


def main() -> None:
    global TILEC, SOURCE_DIR
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tilec", required=True, help="path to the tilec binary")
    parser.add_argument("--source-dir", type=Path, required=True, help="the repository root")
    args, rest = parser.parse_known_args()
    TILEC = os.path.abspath(args.tilec)
    SOURCE_DIR = args.source_dir.resolve()
    missing = [t for t in (CC, QEMU) if not shutil.which(t)]
    if not (SYSROOT / "lib").is_dir():
        missing.append(f"{SYSROOT}/lib (libc6-dev-arm64-cross)")
    if missing:
        print(f"skipped: no {', '.join(missing)} (scripts/setup.sh installs them)")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0], *rest])


if __name__ == "__main__":
    main()
