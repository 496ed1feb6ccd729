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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aot_c_io import C_FILE_IO  # noqa: E402 (beside this file)

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

""" + C_FILE_IO + r"""
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


# A generic OpenCL host for a launch description: generated from NAME.json by
# opencl_host() below (buffers, kernels, sizes: all it needs is in the JSON).
def opencl_host(launch: dict) -> str:
    buffers = launch["buffers"]
    index = {b["name"]: i for i, b in enumerate(buffers)}
    lines = [
        "#define CL_TARGET_OPENCL_VERSION 120",
        "#include <CL/cl.h>",
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { fprintf(stderr, \"%s: %d\\n\", #x, e_); exit(3); } } while (0)",
        "static char* slurp(const char* path, size_t* n) {",
        "  FILE* f = fopen(path, \"rb\"); if (!f) exit(2);",
        "  fseek(f, 0, SEEK_END); *n = (size_t)ftell(f); fseek(f, 0, SEEK_SET);",
        "  char* p = malloc(*n + 1); if (fread(p, 1, *n, f) != *n) exit(2); p[*n] = 0; fclose(f); return p;",
        "}",
        "int main(void) {",
        "  cl_platform_id platform; cl_device_id device; cl_int err; size_t n;",
        "  CHECK(clGetPlatformIDs(1, &platform, NULL));",
        "  CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));",
        "  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err); CHECK(err);",
        "  cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err); CHECK(err);",
        f"  char* src = slurp(\"{launch['source']}\", &n);",
        "  cl_program prog = clCreateProgramWithSource(ctx, 1, (const char**)&src, &n, &err); CHECK(err);",
        "  if (clBuildProgram(prog, 1, &device, \"\", NULL, NULL) != CL_SUCCESS) {",
        "    char log[65536]; clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);",
        "    fprintf(stderr, \"%s\\n\", log); return 4;",
        "  }",
        f"  cl_mem mem[{len(buffers)}];",
    ]
    for i, b in enumerate(buffers):
        lines.append(f"  mem[{i}] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, {max(b['bytes'], 1)}, NULL, &err); CHECK(err);")
        if b["role"] == "input":
            lines += [f"  {{ char* d = slurp(\"{b['name']}.bin\", &n); if (n != {b['bytes']}) return 2;",
                      f"    CHECK(clEnqueueWriteBuffer(q, mem[{i}], CL_TRUE, 0, n, d, 0, NULL, NULL)); }}"]
    for k in launch["kernels"]:
        lines.append(f"  {{ cl_kernel k = clCreateKernel(prog, \"{k['name']}\", &err); CHECK(err);")
        for a, name in enumerate(k["args"]):
            lines.append(f"    CHECK(clSetKernelArg(k, {a}, sizeof(cl_mem), &mem[{index[name]}]));")
        lines += [f"    size_t global[3] = {{{', '.join(map(str, k['global']))}}}, local[3] = {{{', '.join(map(str, k['local']))}}};",
                  "    CHECK(clEnqueueNDRangeKernel(q, k, 3, NULL, global, local, 0, NULL, NULL)); }"]
    for b in buffers:
        if b["role"] == "output":
            lines += [f"  {{ char* d = malloc({b['bytes']}); FILE* f = fopen(\"{b['name']}.out\", \"wb\");",
                      f"    CHECK(clEnqueueReadBuffer(q, mem[{index[b['name']]}], CL_TRUE, 0, {b['bytes']}, d, 0, NULL, NULL));",
                      f"    fwrite(d, 1, {b['bytes']}, f); fclose(f); }}"]
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


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

    def test_blocked_layout_buffers(self) -> None:
        # D in nChw8c (dimension 1 blocked by 8, zero-padded 13 -> 16): the caller passes the packed
        # buffer of conv_D_BYTES, the header says so, and the result matches the reference.
        if not shutil.which("cc"):
            self.skipTest("no system C compiler")
        conv = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        shape = "f32[" + ",".join(map(str, D_SHAPE)) + "]"
        tilec("compile", conv, "-s", f"D={shape}:nChw8c", "-s", f"K=f32[{','.join(map(str, K_SHAPE))}]",
              "-o", str(self.dir / "convb"))
        header = (self.dir / "convb.h").read_text()
        n, c, h, w = D_SHAPE
        padded = (c + 7) // 8 * 8
        self.assertIn(f"//   D: input f32[2, 13, 11, 7], layout nChw8c, {4 * n * padded * h * w} bytes", header)
        self.assertIn(f"#define convb_D_BYTES {4 * n * padded * h * w}", header)
        rng = np.random.default_rng(3)
        d = rng.uniform(-1, 1, D_SHAPE).astype(np.float32)
        k = rng.uniform(-1, 1, K_SHAPE).astype(np.float32)
        np.save(self.dir / "d.npy", d)
        np.save(self.dir / "k.npy", k)
        blocked = np.zeros((n, padded, h, w), np.float32)
        blocked[:, :c] = d
        blocked.reshape(n, padded // 8, 8, h, w).transpose(0, 1, 3, 4, 2).tofile(self.dir / "d.bin")
        k.tofile(self.dir / "k.bin")
        tilec("run", conv, "--in", "D=d.npy", "--in", "K=k.npy", "--out", "R=r_ref.npy", "--target", "ref",
              cwd=self.dir)
        app = APP.replace('#include "mm.h"', "").replace("conv", "convb")
        app = app[:app.index("  float* a = read_file")] + "  return 0;\n}\n"
        (self.dir / "app.c").write_text(app)
        libs = ["-lpthread", "-lm"] + (["-lmvec"] if "-lmvec" in header else [])
        build = subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-o", "app", "app.c", "convb.c", "tilec_aot_runtime.c",
                                "convb.o", *libs], cwd=self.dir, capture_output=True, text=True)
        self.assertEqual(build.returncode, 0, build.stderr)
        run = subprocess.run(["./app"], cwd=self.dir, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        want = np.load(self.dir / "r_ref.npy")
        np.testing.assert_allclose(np.fromfile(self.dir / "r.bin", np.float32).reshape(want.shape), want,
                                   rtol=1e-4, atol=1e-5)

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

        # A host program made from nothing but the description runs it and matches the reference.
        if not shutil.which("cc") or not Path("/usr/include/CL/cl.h").exists():
            self.skipTest("no C compiler or OpenCL headers")
        rng = np.random.default_rng(5)
        d = rng.uniform(-1, 1, D_SHAPE).astype(np.float32)
        k = rng.uniform(-1, 1, K_SHAPE).astype(np.float32)
        for name, array in [("D", d), ("K", k)]:
            array.tofile(self.dir / f"{name}.bin")
            np.save(self.dir / f"{name}.npy", array)
        tilec("run", conv, "--in", "D=D.npy", "--in", "K=K.npy", "--out", "R=r_ref.npy", "--target", "ref",
              cwd=self.dir)
        (self.dir / "host.c").write_text(opencl_host(launch))
        build = subprocess.run(["cc", "-O1", "-o", "host", "host.c", "-lOpenCL"], cwd=self.dir, capture_output=True,
                               text=True)
        self.assertEqual(build.returncode, 0, build.stderr)
        run = subprocess.run(["./host"], cwd=self.dir, capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)
        want = np.load(self.dir / "r_ref.npy")
        got = np.fromfile(self.dir / "R.out", np.float32).reshape(want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)

    def test_errors(self) -> None:
        conv = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        r = subprocess.run([TILEC, "compile", conv, *self.shapes(), "-o", str(self.dir / "conv-relu")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("'conv-relu' is not a C identifier", r.stderr)
        # A missing folder is made; one that cannot be (under a file) is a user error.
        r = subprocess.run([TILEC, "compile", conv, *self.shapes(), "-o", str(self.dir / "missing" / "conv")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue((self.dir / "missing" / "conv.o").exists())
        (self.dir / "a_file").write_text("")
        r = subprocess.run([TILEC, "compile", conv, *self.shapes(), "-o", str(self.dir / "a_file" / "conv")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot create the folder", r.stderr)
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
