#!/usr/bin/python3
"""End-to-end tests of the `tilec` command line: exit codes, messages,
results of `tilec check` / `tilec run` compared with NumPy, memory layouts
given on the command line, and `tilec bench`.

Run with /usr/bin/python3 (the interpreter that has NumPy):
    tests/e2e/cli_test.py --tilec build/tools/tilec --source-dir .
Extra arguments go to unittest, e.g. `-k conv` or `-v`.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

TILEC: str = ""
SOURCE_DIR: Path = Path(".")

MATMUL = "function (A[M, L], B[L, N]) -> (C) {\n  C[i, j : M, N] = +(A[i, k] * B[k, j]);\n}\n"
TWO_OUTPUTS = "function (A[N]) -> (B, C) {\n  B = A + 1;\n  C = A * 2;\n}\n"
# The '*' on line 3 is the syntax error; it sits at column 10.
SYNTAX_ERROR = "function (A[M, L], B[L, N]) -> (C) {\n  C[i, j : M, N] = +(A[i, k] * B[k, j]);\n  D = C +* 2;\n}\n"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([TILEC, *args], capture_output=True, text=True, encoding="utf-8", timeout=300, cwd=cwd)


def npy_bytes(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def conv_relu_reference(d: np.ndarray, k: np.ndarray) -> np.ndarray:
    """R = relu(O), O[n,x,y,co] = sum D[n, x+i-1, y+j-1, ci] * K[i, j, co, ci] (out-of-range taps skipped)."""
    n, x, y, _ = d.shape
    kh, kw, co, _ = k.shape
    padded = np.pad(d.astype(np.float64), ((0, 0), (1, kh), (1, kw), (0, 0)))
    out = np.zeros((n, x, y, co))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nxyc,oc->nxyo", padded[:, i:i + x, j:j + y, :], k[i, j].astype(np.float64))
    return np.maximum(out, 0)


class CliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls._tmp = tempfile.TemporaryDirectory(prefix="tilec_cli_test_")
        cls.dir = Path(cls._tmp.name)
        for name, text in [("matmul.tile", MATMUL), ("two.tile", TWO_OUTPUTS), ("bad.tile", SYNTAX_ERROR)]:
            (cls.dir / name).write_text(text)
        rng = np.random.default_rng(1234)
        cls.a = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
        cls.b = rng.uniform(-1, 1, (4, 5)).astype(np.float32)
        np.save(cls.dir / "a.npy", cls.a)
        np.save(cls.dir / "b.npy", cls.b)

    @classmethod
    def tearDownClass(cls) -> None:
        cls._tmp.cleanup()

    def path(self, name: str) -> str:
        return str(self.dir / name)

    def assertExit(self, result: subprocess.CompletedProcess, code: int) -> None:
        self.assertEqual(result.returncode, code,
                         f"exit {result.returncode}, expected {code}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}")

    def run_matmul(self, *extra: str) -> subprocess.CompletedProcess:
        return run("run", self.path("matmul.tile"), "--in", f"A={self.path('a.npy')}", *extra)

    # --- version, help, usage errors (exit 2) -------------------------------------------------

    def test_version(self) -> None:
        r = run("--version")
        self.assertExit(r, 0)
        self.assertRegex(r.stdout.strip(), r"^tilec \d+\.\d+\.\d+$")

    def test_help_lists_subcommands_and_exit_codes(self) -> None:
        r = run("--help")
        self.assertExit(r, 0)
        for text in ["check", "run", "--version", "Exit codes", "1  user error", "2  usage error",
                     "3  internal error", "4  device error"]:
            self.assertIn(text, r.stdout)

    def test_help_on_every_subcommand(self) -> None:
        shared = ["-s,--shape", "--layout"]
        kernel = ["--tile", "--rank", "--vector", "--vector-rows", "--no-tuning-cache"]
        for sub, options in [("check", [*shared, "nChw16c", "--json"]),
                             ("run", ["--in", "--out", "--target", "--random-inputs", "--seed", "ref", "--check",
                                      "--json", *shared, *kernel]),
                             ("bench", ["--target", "--runs", "--warmup", "--warmup-time", "--seed", "--json", *shared, *kernel,
                                        "full index box", "multiply-accumulate", "ref"]),
                             ("compile", [*shared, "--emit", "llvm-opt", "--target", "--json", *kernel]),
                             ("explain", [*shared, "--target", "--hw", *kernel]),
                             ("devices", ["--json"]),
                             ("layout", ["-s,--shape", "--form"]),
                             ("cache", ["info", "list", "clear"]),
                             ("tune", [*shared, "--target", "--trials", "--budget", "--seed", "--show"]),
                             ("opt", ["--pass", "simplify", "--emit", "llvm-opt", "--target", "--cpu", "-o,--output"]),
                             ("import", ["-o,--output", "--weights", "-s,--shape", "--ops"]),
                             ("grad", ["-s,--shape", "--wrt", "--outputs", "-o,--output"])]:
            with self.subTest(sub=sub):
                r = run(sub, "--help")
                self.assertExit(r, 0)
                self.assertIn(f"tilec {sub}", r.stdout)
                self.assertIn("Exit codes", r.stdout)
                self.assertRegex(r.stdout, r"Examples?:\n  tilec " + sub)
                for option in options:
                    self.assertIn(option, r.stdout)
                # The old spelling of --target is accepted but not shown.
                self.assertNotIn("--device", r.stdout)
                if "--target" in options:
                    self.assertIn("--target NAME=llvm", r.stdout)

    def test_every_subcommand_has_one_help_line(self) -> None:
        r = run("--help")
        self.assertExit(r, 0)
        listed = re.findall(r"^  (\w+) {2,}\S", r.stdout.split("Subcommands:")[1].split("Exit codes")[0], re.M)
        self.assertEqual(listed, ["check", "run", "compile", "explain", "devices", "bench", "layout", "cache", "tune",
                                  "opt", "import", "grad"])
        self.assertIn("-q,--quiet", r.stdout)

    def test_usage_errors_exit_2(self) -> None:
        cases = [
            (["frob"], "unknown subcommand 'frob'"),
            ([], "subcommand is required"),
            (["run", "--bogus", "x.tile"], "--bogus"),
            (["check"], "file is required"),
            (["run", self.path("matmul.tile"), "--in"], "--in"),
            (["run", self.path("matmul.tile"), "--in", "A"], "expected NAME=VALUE, got 'A'"),
            (["run", self.path("matmul.tile"), "--in", "=a.npy"], "missing NAME"),
            (["run", self.path("matmul.tile"), "--out", "C="], "missing VALUE"),
            (["check", self.path("matmul.tile"), "-s", "A=f32[2,3"], "bad shape in 'A=f32[2,3'"),
            (["check", self.path("matmul.tile"), "-s", "A"], "expected NAME=VALUE, got 'A'"),
            (["run", self.path("matmul.tile"), "-s", "A=f32[2,3]"], "requires --random-inputs"),
            (["run", self.path("matmul.tile"), "--random-inputs", "-s", "A=f32[2]", "--seed", "x"], "--seed"),
            (["run", self.path("matmul.tile"), "--in", "A=a.npy", "--in", "A=b.npy"], "'A' is given more than once"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                r = run(*args)
                self.assertExit(r, 2)
                self.assertIn(message, r.stderr)

    # --- user errors (exit 1) ----------------------------------------------------------------

    def test_missing_source_file(self) -> None:
        missing = self.path("missing.tile")
        r = run("check", missing)
        self.assertExit(r, 1)
        self.assertIn(f"cannot open '{missing}': No such file or directory", r.stderr)
        r = run("check", str(self.dir))
        self.assertExit(r, 1)
        self.assertIn(f"cannot read '{self.dir}'", r.stderr)

    def test_parse_error_shows_location_and_caret(self) -> None:
        bad = self.path("bad.tile")
        r = run("check", bad, "-s", "A=f32[2,2]", "-s", "B=f32[2,2]")
        self.assertExit(r, 1)
        lines = r.stderr.splitlines()
        self.assertGreaterEqual(len(lines), 3, r.stderr)
        self.assertTrue(lines[0].startswith(f"{bad}:3:10: error: "), r.stderr)
        self.assertEqual(lines[1], "  D = C +* 2;")
        self.assertEqual(lines[2].rstrip(), " " * 9 + "^")

    def test_error_in_a_long_line_is_clipped_around_the_caret(self) -> None:
        # A 110 kB generated line with an error in its middle: the line is shown
        # as a window (160 columns when stderr is not a terminal) with an
        # ellipsis on each side and the caret under the bad token.
        stmts = "B = A + 1; " * 5000
        src = self.dir / "long.tile"
        src.write_text("function (A) -> (B) { " + stmts + "B = A +* 2; " + stmts + "}\n")
        r = run("check", str(src), "-s", "A=f32[2]")
        self.assertExit(r, 1)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 3, r.stderr[:500])
        self.assertIn("error: expected", lines[0])
        self.assertLessEqual(len(lines[1]), 160)
        self.assertTrue(lines[1].startswith("\u2026") and lines[1].endswith("\u2026"), lines[1])
        col = lines[2].index("^")
        self.assertEqual(lines[1][col], "*", lines[1] + "\n" + lines[2])

    def test_bind_error_points_at_the_source(self) -> None:
        src = self.path("matmul.tile")
        r = run("check", src, "-s", "A=f32[2,3]", "-s", "B=f32[2,3]")
        self.assertExit(r, 1)
        self.assertRegex(r.stderr, re.escape(src) + r":1:\d+: error: .*")
        self.assertIn("function (A[M, L], B[L, N]) -> (C) {", r.stderr)
        self.assertIn("^", r.stderr)
        r = run("check", src, "-s", "A=f32[2,3]")
        self.assertExit(r, 1)
        self.assertIn("'B'", r.stderr)

    def test_wrong_shape_from_npy_names_the_file(self) -> None:
        np.save(self.dir / "b_wrong.npy", np.zeros((5, 5), np.float32))
        r = self.run_matmul("--in", f"B={self.path('b_wrong.npy')}")
        self.assertExit(r, 1)
        self.assertIn("error:", r.stderr)
        self.assertIn("b_wrong.npy", r.stderr)
        self.assertIn("f32[5, 5]", r.stderr)

    def test_corrupt_npy_files(self) -> None:
        good = npy_bytes(self.b)
        (self.dir / "trunc.npy").write_bytes(good[:-6])
        np.save(self.dir / "fortran.npy", np.asfortranarray(self.b))
        np.save(self.dir / "big.npy", self.b.astype(">f4"))
        np.save(self.dir / "complex.npy", self.b.astype(np.complex64))
        np.save(self.dir / "object.npy", np.array([[1, "x"]], dtype=object), allow_pickle=True)
        (self.dir / "text.npy").write_text("1 2 3\n")
        (self.dir / "garbage.npy").write_bytes(good + b"\0\0")
        cases = [
            ("trunc.npy", f"file ends after {self.b.nbytes - 6} of {self.b.nbytes} data bytes"),
            ("fortran.npy", "Fortran-order arrays are not supported; save with np.ascontiguousarray"),
            ("big.npy", "big-endian arrays are not supported"),
            ("complex.npy", "unsupported dtype '<c8' (complex)"),
            ("object.npy", "unsupported dtype '|O'"),
            ("text.npy", "not a NumPy .npy file"),
            ("garbage.npy", "trailing garbage"),
            ("nonexistent.npy", "No such file or directory"),
        ]
        for name, message in cases:
            with self.subTest(name=name):
                r = self.run_matmul("--in", f"B={self.path(name)}")
                self.assertExit(r, 1)
                self.assertIn(self.path(name), r.stderr)
                self.assertIn(message, r.stderr)

    def test_unknown_target(self) -> None:
        r = self.run_matmul("--in", f"B={self.path('b.npy')}", "--target", "x")
        self.assertExit(r, 1)
        self.assertIn("error: --target x: unknown device 'x' (available: llvm:cpu", r.stderr)
        self.assertIn("'ref' is the reference evaluator", r.stderr)

    def test_out_for_a_non_output(self) -> None:
        r = self.run_matmul("--in", f"B={self.path('b.npy')}", "--out", f"A={self.path('x.npy')}")
        self.assertExit(r, 1)
        self.assertIn("'A' is not an output of the program (outputs: C)", r.stderr)
        self.assertFalse((self.dir / "x.npy").exists())

    def test_in_for_a_non_input_and_missing_input(self) -> None:
        r = self.run_matmul("--in", f"Q={self.path('b.npy')}")
        self.assertExit(r, 1)
        self.assertIn("'Q' is not an input of the program (inputs: A, B)", r.stderr)
        r = self.run_matmul()
        self.assertExit(r, 1)
        self.assertIn("no data for input 'B'", r.stderr)

    def test_unwritable_output(self) -> None:
        target = self.path("no_such_dir/c.npy")
        r = self.run_matmul("--in", f"B={self.path('b.npy')}", "--out", f"C={target}")
        self.assertExit(r, 1)
        self.assertIn(f"cannot write '{target}'", r.stderr)

    # --- positive runs -----------------------------------------------------------------------

    def test_check_prints_the_bound_program(self) -> None:
        r = run("check", self.path("matmul.tile"), "-s", "A=f32[3,4]", "-s", "B=f32[4,5]")
        self.assertExit(r, 0)
        for text in ["A", "B", "C", "f32[3, 4]", "f32[4, 5]", "f32[3, 5]"]:
            self.assertIn(text, r.stdout)
        self.assertEqual(r.stderr, "")

    def test_run_matmul_writes_the_product(self) -> None:
        out = self.dir / "c.npy"
        r = self.run_matmul("--in", f"B={self.path('b.npy')}", "--out", f"C={out}")
        self.assertExit(r, 0)
        self.assertEqual(r.stdout, "")
        c = np.load(out)
        self.assertEqual(c.dtype, np.float32)
        self.assertEqual(c.shape, (3, 5))
        np.testing.assert_allclose(c, self.a.astype(np.float64) @ self.b, rtol=1e-4, atol=1e-6)
        # The file is byte for byte what np.save writes for the same array.
        self.assertEqual(out.read_bytes(), npy_bytes(c))

    def test_run_integer_matmul_is_exact(self) -> None:
        rng = np.random.default_rng(5)
        a = rng.integers(-100, 100, (4, 6), dtype=np.int32)
        b = rng.integers(-100, 100, (6, 3), dtype=np.int32)
        np.save(self.dir / "ia.npy", a)
        np.save(self.dir / "ib.npy", b)
        r = run("run", self.path("matmul.tile"), "--in", f"A={self.path('ia.npy')}", "--in",
                f"B={self.path('ib.npy')}", "--out", f"C={self.path('ic.npy')}")
        self.assertExit(r, 0)
        c = np.load(self.path("ic.npy"))
        self.assertEqual(c.dtype, np.int32)
        np.testing.assert_array_equal(c, a @ b)

    def test_run_check_against_the_reference(self) -> None:
        conv = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        shapes = ["--random-inputs", "-s", "D=f32[1,9,7,5]", "-s", "K=f32[3,3,6,5]"]
        for target in ["llvm", "opencl"]:
            r = run("run", conv, *shapes, "--target", target, "--check")
            self.assertExit(r, 0)
            self.assertRegex(r.stdout, r"check R: f32\[1, 9, 7, 6\], max abs error \S+, max rel error \S+: OK")
        # Integers compare exactly, whatever the tolerances.
        ints = ["--random-inputs", "-s", "A=i32[5,7]", "-s", "B=i32[7,3]", "--check"]
        r = run("run", self.path("matmul.tile"), *ints)
        self.assertExit(r, 0)
        self.assertIn("check C: i32[5, 3], max abs error 0, max rel error 0: OK", r.stdout)
        # With no tolerance at all, a float matmul summed in another order
        # (FMA, vector lanes) differs from the evaluator: a mismatch, exit 1.
        r = run("run", self.path("matmul.tile"), "--random-inputs", "-s", "A=f32[64,64]", "-s",
                "B=f32[64,64]", "--check", "--rtol", "0", "--atol", "0")
        self.assertExit(r, 1)
        self.assertRegex(r.stdout, r"check C: f32\[64, 64\], .*: MISMATCH in \d+ of 4096 elements, first at flat index \d+: got \S+, expected \S+")
        self.assertIn("error: --check: 1 of 1 outputs differ from the reference evaluator on llvm (rtol 0, atol 0)",
                      r.stderr)
        # The tolerances only make sense with --check.
        r = run("run", conv, *shapes, "--rtol", "1")
        self.assertExit(r, 2)
        self.assertIn("--rtol requires --check", r.stderr)

    def test_summary_without_out(self) -> None:
        r = self.run_matmul("--in", f"B={self.path('b.npy')}")
        self.assertExit(r, 0)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 1, r.stdout)
        m = re.fullmatch(r"C: f32\[3, 5\]  min (\S+)  max (\S+)  mean (\S+)", lines[0])
        self.assertIsNotNone(m, lines[0])
        c = self.a.astype(np.float64) @ self.b
        for value, expected in zip(m.groups(), [c.min(), c.max(), c.mean()]):
            self.assertAlmostEqual(float(value), expected, delta=1e-4 * max(1.0, abs(expected)))

    def test_only_requested_outputs_are_written(self) -> None:
        a = np.arange(5, dtype=np.float32)
        np.save(self.dir / "v.npy", a)
        r = run("run", self.path("two.tile"), "--in", f"A={self.path('v.npy')}", "--out", "C=c2.npy", cwd=self.dir)
        self.assertExit(r, 0)
        np.testing.assert_array_equal(np.load(self.dir / "c2.npy"), a * 2)
        self.assertEqual(sorted(p.name for p in self.dir.glob("*2.npy")), ["c2.npy"])
        r = run("run", self.path("two.tile"), "--in", f"A={self.path('v.npy')}")
        self.assertExit(r, 0)
        self.assertEqual([line.split(":")[0] for line in r.stdout.splitlines()], ["B", "C"])

    def test_random_inputs(self) -> None:
        args = ["run", self.path("matmul.tile"), "--random-inputs", "-s", "A=f32[3,4]", "-s", "B=f32[4,5]"]
        first = run(*args)
        self.assertExit(first, 0)
        self.assertTrue(first.stdout.startswith("C: f32[3, 5]  min "), first.stdout)
        self.assertEqual(run(*args).stdout, first.stdout)  # seed 1 by default: deterministic
        self.assertEqual(run(*args, "--seed", "1").stdout, first.stdout)
        self.assertNotEqual(run(*args, "--seed", "2").stdout, first.stdout)
        # Random and file inputs mix.
        r = run("run", self.path("matmul.tile"), "--random-inputs", "-s", "A=f32[2,4]", "--in",
                f"B={self.path('b.npy')}")
        self.assertExit(r, 0)
        self.assertTrue(r.stdout.startswith("C: f32[2, 5]"), r.stdout)

    def test_conv_relu_matches_numpy(self) -> None:
        source = SOURCE_DIR / "examples" / "conv_relu.tile"
        rng = np.random.default_rng(42)
        d = rng.uniform(-1, 1, (2, 6, 5, 3)).astype(np.float32)
        k = rng.uniform(-1, 1, (3, 3, 4, 3)).astype(np.float32)
        np.save(self.dir / "d.npy", d)
        np.save(self.dir / "k.npy", k)
        out = self.dir / "r.npy"
        r = run("run", str(source), "--in", f"D={self.path('d.npy')}", "--in", f"K={self.path('k.npy')}",
                "--out", f"R={out}", "--target", "ref")
        self.assertExit(r, 0)
        result = np.load(out)
        self.assertEqual(result.shape, (2, 6, 5, 4))
        self.assertEqual(result.dtype, np.float32)
        expected = conv_relu_reference(d, k)
        self.assertGreater((expected == 0).sum(), 0)  # ReLU did clip something
        np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-5)

    # --- memory layouts on the command line ---------------------------------------------------

    CONV = ["-s", "K=f32[3,3,4,4]"]

    def run_conv(self, d_spec: str, out: str, *extra: str) -> subprocess.CompletedProcess:
        source = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        return run("run", source, "--random-inputs", "-s", f"D={d_spec}", *self.CONV, "--out",
                   f"R={self.path(out)}", *extra)

    def test_layouts_do_not_change_results_on_opencl(self) -> None:
        # Inputs and outputs are logical tensors; the runtime packs them into their layouts. A layout
        # may change the kernel (tile, summation order), hence float rounding: not bit-exact.
        r = self.run_conv("f32[1,8,8,4]", "plain.npy", "--target", "opencl")
        self.assertExit(r, 0)
        plain = np.load(self.path("plain.npy"))
        self.assertGreater(np.abs(plain).max(), 0)
        for layout in [":nhwc", ":nChw4c", ":order(3,2,1,0)", ":strides(1000,100,10,1)"]:
            with self.subTest(layout=layout):
                r = self.run_conv(f"f32[1,8,8,4]{layout}", "laid.npy", "--target", "opencl")
                self.assertExit(r, 0)
                np.testing.assert_allclose(np.load(self.path("laid.npy")), plain, rtol=1e-5, atol=1e-6)
        # An output layout, and the reference target (which ignores layouts).
        r = self.run_conv("f32[1,8,8,4]:nhwc", "laid.npy", "--target", "opencl", "--layout", "R=nhwc")
        self.assertExit(r, 0)
        np.testing.assert_allclose(np.load(self.path("laid.npy")), plain, rtol=1e-5, atol=1e-6)
        r = self.run_conv("f32[1,8,8,4]:nChw4c", "laid.npy", "--target", "ref")
        self.assertExit(r, 0)
        np.testing.assert_allclose(np.load(self.path("laid.npy")), plain, rtol=1e-5, atol=1e-5)

    def test_layout_for_an_npy_input(self) -> None:
        source = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        rng = np.random.default_rng(7)
        d = rng.uniform(-1, 1, (1, 8, 6, 4)).astype(np.float32)
        k = rng.uniform(-1, 1, (3, 3, 4, 4)).astype(np.float32)
        np.save(self.dir / "ld.npy", d)
        np.save(self.dir / "lk.npy", k)
        r = run("run", source, "--target", "opencl", "--in", f"D={self.path('ld.npy')}", "--in",
                f"K={self.path('lk.npy')}", "--layout", "D=nChw4c", "--layout", "K=order(3,2,1,0)",
                "--out", f"R={self.path('lr.npy')}")
        self.assertExit(r, 0)
        np.testing.assert_allclose(np.load(self.path("lr.npy")), conv_relu_reference(d, k), rtol=1e-4, atol=1e-5)

    def test_check_prints_layouts(self) -> None:
        source = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        r = run("check", source, "-s", "D=f32[1,8,8,4]:nChw4c", *self.CONV, "--layout", "R=nhwc")
        self.assertExit(r, 0)
        self.assertIn("D: f32[1, 8, 8, 4] @ nChw4c(", r.stdout)
        self.assertIn("R: f32[1, 8, 8, 4] @ nhwc(", r.stdout)
        self.assertNotIn("K: f32[3, 3, 4, 4] @", r.stdout)

    def test_layout_errors(self) -> None:
        source = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        user_errors = [
            (["-s", "D=f32[1,8,8,4]:bogus", *self.CONV],
             "error: -s D=f32[1,8,8,4]:bogus: bad layout 'bogus' for a tensor of dimensions [1, 8, 8, 4]: "
             "unknown layout (expected a oneDNN tag such as abcd, acdb or aBcd16b; a named format such as nchw"),
            (["-s", "D=f32[1,8,8,4]", "-s", "K=f32[3,3,4,4]:ndhwc"],
             "error: -s K=f32[3,3,4,4]:ndhwc: bad layout 'ndhwc' for a tensor of dimensions [3, 3, 4, 4]: "
             "it needs a rank-5 tensor (logical order N, C, D, H, W), not rank 4"),
            (["-s", "D=f32[1,8,8,4]:", *self.CONV], "no layout after ':'"),
            (["-s", "D=f32[1,8,8,4]", *self.CONV, "--layout", "R=nhwz"],
             "error: --layout R=nhwz: bad layout 'nhwz' for a tensor of dimensions [1, 8, 8, 4]: unknown layout"),
            (["-s", "D=f32[1,8,8,4]", *self.CONV, "--layout", "Q=nhwc"],
             "error: --layout Q=nhwc: the program has no tensor 'Q' (tensors: D, K, O, R, _T1)"),
        ]
        for args, message in user_errors:
            for sub in [["check", source], ["run", source, "--random-inputs"], ["bench", source, "--target", "ref"]]:
                with self.subTest(args=args, sub=sub[0]):
                    r = run(*sub, *args)
                    self.assertExit(r, 1)
                    self.assertIn(message, r.stderr)
        r = run("check", source, "-s", "D=f32[1,8,8,4]:nhwc", *self.CONV, "--layout", "D=nhwc")
        self.assertExit(r, 2)
        self.assertIn("'D' already has a layout from '-s D=f32[1,8,8,4]:nhwc'", r.stderr)
        r = run("check", source, "-s", "D=f32[1,8,8:nhwc", *self.CONV)
        self.assertExit(r, 2)
        self.assertIn("bad shape in 'D=f32[1,8,8:nhwc'", r.stderr)

    # --- progress line ------------------------------------------------------------------------

    def run_on_terminal(self, *args: str) -> tuple[int, str]:
        """Runs tilec with stderr (and stdout) on a pseudo-terminal; returns the exit code and all output."""
        import pty
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(TILEC, [TILEC, *args])
        chunks = []
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        _, status = os.waitpid(pid, 0)
        os.close(fd)
        return os.waitstatus_to_exitcode(status), b"".join(chunks).decode("utf-8", "replace")

    def test_progress_line_on_a_terminal_only(self) -> None:
        # --progress-delay 0 (hidden) shows the line at once, so no test depends on timing.
        args = ["run", self.path("matmul.tile"), "--random-inputs", "-s", "A=f32[9,7]", "-s", "B=f32[7,5]", "--check"]
        code, out = self.run_on_terminal("--progress-delay", "0", *args)
        self.assertEqual(code, 0, out)
        self.assertIn("\r\x1b[Ktilec: compile: kernels", out)
        self.assertIn("tilec: compile: plan, kernel 1 of 1", out)
        self.assertIn("tilec: check: the reference evaluator", out)
        # The line is erased before the results are printed.
        self.assertIn("\r\x1b[KC: f32[9, 5]", out)
        code, out = self.run_on_terminal("--progress-delay", "0", "compile", self.path("matmul.tile"), "-s",
                                         "A=f32[9,7]", "-s", "B=f32[7,5]", "--emit", "llvm")
        self.assertEqual(code, 0, out)
        self.assertIn("tilec: compile: sem, kernel 1 of 1", out)
        # -q: none, on a terminal too; and none when stderr is not a terminal.
        code, out = self.run_on_terminal("-q", "--progress-delay", "0", *args)
        self.assertEqual(code, 0, out)
        self.assertNotIn("tilec:", out)
        self.assertNotIn("\x1b[K", out)
        r = run("--progress-delay", "0", *args)
        self.assertExit(r, 0)
        self.assertEqual(r.stderr, "")

    # --- --json -------------------------------------------------------------------------------

    def json_of(self, *args: str, code: int = 0) -> dict:
        r = run(*args)
        self.assertExit(r, code)
        return json.loads(r.stdout)

    def test_run_json_with_check(self) -> None:
        conv = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        j = self.json_of("run", conv, "--random-inputs", "-s", "D=f32[1,9,7,5]:nhwc", "-s", "K=f32[3,3,6,5]",
                         "--check", "--json")
        self.assertEqual((j["target"], j["device"]), ("llvm", "llvm:cpu"))
        [out] = j["outputs"]
        self.assertEqual((out["name"], out["dtype"], out["shape"], out["layout"]), ("R", "f32", [1, 9, 7, 6], "row-major"))
        self.assertEqual(out["check"]["verdict"], "OK")
        self.assertEqual(out["check"]["mismatches"], 0)
        self.assertLessEqual(out["check"]["max_abs_error"], 1e-4)
        self.assertGreaterEqual(out["min"], 0)  # ReLU
        self.assertEqual(j["check"], {"rtol": 1e-4, "atol": 1e-5, "verdict": "OK"})
        self.assertIn("bind", j["timings_ms"])
        # A mismatch: still valid JSON on stdout, the error on stderr, exit 1.
        r = run("run", self.path("matmul.tile"), "--random-inputs", "-s", "A=f32[64,64]", "-s", "B=f32[64,64]",
                "--check", "--rtol", "0", "--atol", "0", "--json")
        self.assertExit(r, 1)
        j = json.loads(r.stdout)
        self.assertEqual(j["check"]["verdict"], "MISMATCH")
        first = j["outputs"][0]["check"]["first_mismatch"]
        self.assertNotEqual(first["got"], first["expected"])
        self.assertIn("error: --check: 1 of 1 outputs differ", r.stderr)
        # Outputs written to files say where; the reference target has no device.
        j = self.json_of("run", self.path("two.tile"), "--random-inputs", "-s", "A=i32[4]", "--target", "ref",
                         "--out", f"B={self.path('jb.npy')}", "--json")
        self.assertEqual(j["device"], "ref")
        self.assertEqual([o["name"] for o in j["outputs"]], ["B", "C"])
        self.assertEqual(j["outputs"][0]["file"], self.path("jb.npy"))
        self.assertNotIn("file", j["outputs"][1])
        self.assertTrue((self.dir / "jb.npy").exists())

    def test_check_json(self) -> None:
        conv = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        j = self.json_of("check", conv, "-s", "D=f32[1,8,8,4]:nChw4c", "-s", "K=f32[3,3,4,4]", "--layout", "R=nhwc",
                         "--json")
        self.assertEqual((j["inputs"], j["outputs"]), (["D", "K"], ["R"]))
        tensors = {t["name"]: t for t in j["tensors"]}
        self.assertEqual(tensors["D"], {"name": "D", "role": "input", "dtype": "f32", "shape": [1, 8, 8, 4],
                                        "layout": "nChw4c"})
        self.assertEqual(tensors["R"]["layout"], "nhwc")
        self.assertEqual(tensors["O"]["role"], "temporary")
        self.assertEqual([t["name"] for t in j["tensors"]][:3], ["D", "K", "R"])

    def test_compile_json(self) -> None:
        conv = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        shapes = ["-s", "D=f32[1,9,7,5]", "-s", "K=f32[3,3,6,5]"]
        for target, emit, marker in [("llvm", "llvm", "define"), ("opencl", "cl", "__kernel"),
                                     ("llvm", "kernels", "// ----- forms")]:
            with self.subTest(target=target, emit=emit):
                j = self.json_of("compile", conv, *shapes, "--target", target, "--emit", emit, "--json",
                                 "--no-tuning-cache")
                self.assertEqual(j["target"], target)
                self.assertEqual(j["emit"], emit)
                self.assertIn(marker, j["text"])
                self.assertGreaterEqual(len(j["kernels"]), 1)
                for k in j["kernels"]:
                    self.assertRegex(k["name"], r"^kernel_\d+$")
                    self.assertIn(k["form"], ["flat", "vector", "reduce", "transpose", "row group", "special"])
                    self.assertEqual(k["config"], "model")  # no --tile, --rank or tuning cache entry
                    self.assertEqual(len(k["global"]), 3)
                    self.assertEqual(len(k["local"]), 3)
                    for g, l in zip(k["global"], k["local"]):
                        self.assertEqual(g % l, 0)
                    if k["form"] == "flat":
                        self.assertIsInstance(k["tile"], list)
                    else:  # only the flat form has a tile
                        self.assertIsNone(k["tile"])
                self.assertIn("R", j["kernels"][-1]["outputs"])

    def test_devices_json(self) -> None:
        j = self.json_of("devices", "--json")
        self.assertEqual(j["default"], "llvm")
        ids = [d["id"] for d in j["devices"]]
        self.assertEqual(ids[0], "llvm:cpu")
        cpu = j["devices"][0]
        self.assertIsInstance(cpu["hardware_model"]["threads"], int)
        self.assertIs(cpu["hardware_model"]["local_memory_managed"], False)
        self.assertEqual(len(cpu["hardware_model"]["max_work_item_sizes"]), 3)
        self.assertTrue(any(i.startswith("opencl:") for i in ids), ids)

    def test_old_device_option_is_an_alias(self) -> None:
        conv = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        shapes = ["-s", "D=f32[1,9,7,5]", "-s", "K=f32[3,3,6,5]", "--emit", "kernels"]
        new = run("compile", conv, *shapes, "--target", "opencl")
        old = run("compile", conv, *shapes, "--device", "opencl")
        self.assertExit(new, 0)
        self.assertEqual(new.stdout, old.stdout)
        # The default is the default device (llvm), as for run and bench.
        self.assertEqual(run("compile", conv, *shapes).stdout, run("compile", conv, *shapes, "--target", "llvm").stdout)

    # --- tilec bench --------------------------------------------------------------------------

    def bench(self, *extra: str) -> subprocess.CompletedProcess:
        return run("bench", self.path("matmul.tile"), "-s", "A=f32[3,4]", "-s", "B=f32[4,5]", *extra)

    def bench_json(self, *extra: str) -> dict:
        r = self.bench("--json", *extra)
        self.assertExit(r, 0)
        self.assertEqual(len(r.stdout.strip().splitlines()), 1, r.stdout)
        return json.loads(r.stdout)

    def assertBenchJson(self, j: dict, runs: int) -> None:
        for key in ["median_ms", "min_ms", "mean_ms", "gflops", "gbps", "flops", "bytes", "runs"]:
            self.assertIn(key, j)
            self.assertGreater(j[key], 0, key)
        self.assertLessEqual(j["min_ms"], j["median_ms"])
        self.assertEqual(j["runs"], runs)
        # 2 FLOPs per multiply-accumulate over the 3x5x4 index box; bytes of A, B and C.
        self.assertEqual(j["flops"], 2 * 3 * 5 * 4)
        self.assertEqual(j["bytes"], (12 + 20 + 15) * 4)
        self.assertAlmostEqual(j["gflops"], j["flops"] / (j["median_ms"] * 1e6), delta=1e-6 * j["gflops"])
        self.assertIsInstance(j["kernels"], list)

    def test_bench_json_ref(self) -> None:
        j = self.bench_json("--target", "ref", "--runs", "3", "--warmup", "0")
        self.assertBenchJson(j, 3)
        self.assertEqual(j["target"], "ref")
        self.assertEqual(j["device"], "ref")
        self.assertEqual(j["kernels"], [])

    def test_bench_warmup_time(self) -> None:
        # Warm-up runs continue past --warmup until --warmup-time has passed
        # (the reference evaluator runs this 3x5x4 matmul in microseconds, so
        # 300 ms hold far more than one); JSON's warmup counts them.
        j = self.bench_json("--target", "ref", "--runs", "2", "--warmup", "1", "--warmup-time", "300ms")
        self.assertBenchJson(j, 2)
        self.assertGreater(j["warmup"], 1)
        j = self.bench_json("--target", "ref", "--runs", "2", "--warmup", "4")
        self.assertEqual(j["warmup"], 4)

    def test_bench_json_opencl(self) -> None:
        j = self.bench_json("--target", "opencl", "--runs", "4")
        self.assertBenchJson(j, 4)
        self.assertEqual(j["target"], "opencl")
        self.assertTrue(j["device"].startswith("opencl:"), j["device"])
        self.assertGreaterEqual(len(j["kernels"]), 1)
        for k in j["kernels"]:
            self.assertRegex(k["name"], r"^kernel_\d+$")
            self.assertGreater(k["median_ms"], 0)

    def test_bench_text_and_flop_convention(self) -> None:
        source = str(SOURCE_DIR / "examples" / "conv_relu.tile")
        r = run("bench", source, "-s", "D=f32[1,6,6,2]:nhwc", "-s", "K=f32[3,3,2,2]", "--target", "opencl",
                "--runs", "2")
        self.assertExit(r, 0)
        self.assertIn("on opencl:", r.stdout)
        self.assertRegex(r.stdout, r"median \d+\.\d+ ms  min \d+\.\d+ ms")
        self.assertIn("GFLOP/s", r.stdout)
        self.assertIn("GB/s", r.stdout)
        # Padding taps count: 2 * (1*6*6*2 outputs * 3*3*2 taps) + 2 elementwise ops * 72 elements.
        j = json.loads(run("bench", source, "-s", "D=f32[1,6,6,2]", "-s", "K=f32[3,3,2,2]", "--target", "ref",
                           "--runs", "1", "--json").stdout)
        self.assertEqual(j["flops"], 2 * 72 * 18 + 2 * 72)

    def test_bench_errors(self) -> None:
        cases = [
            (["--runs", "0"], 2, "--runs: must be at least 1, got 0"),
            (["--warmup", "-1"], 2, "--warmup: must be 0 or more, got -1"),
            (["--warmup-time", "0s"], 2, "--warmup-time: '0s' is not a duration such as 60s, 90, 2m or 500ms"),
            (["--warmup-time", "soon"], 2, "--warmup-time: 'soon' is not a duration"),
            (["--target", "bogus"], 1, "error: --target bogus: unknown device 'bogus' (available: llvm:cpu"),
            (["--target", "ref", "--tile", "kernel_0=1,1,1"], 1, "the reference target 'ref' has no kernels"),
            (["--target", "opencl", "--tile", "kernel_7=1,1,1"], 1, "--tile kernel_7: the program has no kernel"),
            (["--target", "opencl", "--rank", "kernel_0=x"], 1, "--rank kernel_0=x: 'x' is not a candidate rank"),
            (["--constant", "Q"], 1, "constant input 'Q' is not an input of the program (inputs: A, B)"),
            (["--target", "ref", "--constant", "Q"], 1,
             "constant input 'Q' is not an input of the program (inputs: A, B)"),
        ]
        for args, code, message in cases:
            with self.subTest(args=args):
                r = self.bench(*args)
                self.assertExit(r, code)
                self.assertIn(message, r.stderr)
        r = run("bench", self.path("matmul.tile"), "-s", "A=f32[3,4]")
        self.assertExit(r, 1)
        self.assertIn("no shape for input 'B': give -s B=TYPE[DIMS] (inputs: A, B)", r.stderr)
        r = run("bench", self.path("matmul.tile"), "-s", "A=f32[3,4]", "-s", "B=f32[4,5]", "-s", "Z=f32[1]")
        self.assertExit(r, 1)
        self.assertIn("'Z' is not an input of the program (inputs: A, B)", r.stderr)


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
