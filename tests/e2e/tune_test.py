#!/usr/bin/python3
"""End-to-end tests of `tilec tune` and the tuning cache: a small tune with a
fixed seed and a tiny budget on llvm and OpenCL whose winners `tilec run`
then applies (seen in its -v log) with outputs that still match the
reference evaluator; a second tune answered from the cache; `--show`;
`--no-tuning-cache`; a corrupt line and records of another device or version
skipped with one notice; Ctrl-C keeping what was measured. No timing
assertions.

Run with /usr/bin/python3:
    tests/e2e/tune_test.py --tilec build/tools/tilec --source-dir .
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

TILEC: str = ""
SOURCE_DIR: Path = Path(".")

# Sizes that divide no block; two flat kernels (the matmul with the add
# fused, then the row sums).
PROGRAM = ("function (A[M, L], B[L, N], C[M, N]) -> (R, S) {\n"
           "  P[i, j : M, N] = +(A[i, k] * B[k, j]);\n"
           "  R = P + C;\n"
           "  S[i : M] = +(R[i, j]);\n"
           "}\n")
SHAPES = ["-s", "A=f32[13,11]", "-s", "B=f32[11,17]", "-s", "C=f32[13,17]"]
TUNE = ["--trials", "3", "--budget", "120s", "--seed", "5", "--top", "2"]


class TuneTest(unittest.TestCase):
    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="tilec_tune_test_")
        self.dir = Path(self._tmp.name)
        self.cache = self.dir / "cache"
        self.file = self.dir / "mm.tile"
        self.file.write_text(PROGRAM)
        self.env = dict(os.environ, TILEC_CACHE_DIR=str(self.cache))
        self.env.pop("TILEC_TUNING_CACHE", None)
        self.env.pop("TILEC_TUNING_CACHE_FILE", None)
        self.env.pop("TILEC_TUNE", None)

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def tilec(self, *args: str, code: int = 0) -> subprocess.CompletedProcess:
        r = subprocess.run([TILEC, *args], capture_output=True, text=True, env=self.env, timeout=600)
        self.assertEqual(r.returncode, code, f"tilec {' '.join(args)}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}")
        return r

    def records(self) -> list[dict]:
        path = self.cache / "tuning.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def run_check(self, target: str, *extra: str) -> subprocess.CompletedProcess:
        r = self.tilec("run", "-v", str(self.file), "--random-inputs", *SHAPES, "--target", target, "--check", *extra)
        self.assertIn("check R: f32[13, 17]", r.stdout)
        self.assertIn("check S: f32[13]", r.stdout)
        self.assertNotIn("MISMATCH", r.stdout)
        return r

    def tune_and_run(self, target: str) -> None:
        r = self.tilec("tune", str(self.file), *SHAPES, "--target", target, *TUNE)
        # Not a terminal: plain log lines, one per trial.
        self.assertIn("tilec: tune kernel_0 trial 1/3: default:", r.stderr)
        self.assertIn("kernel_0 contraction [", r.stdout)
        self.assertIn("winner ", r.stdout)
        records = self.records()
        self.assertEqual(len(records), 2, records)
        for rec in records:
            self.assertTrue(rec["device"].startswith(target), rec["device"])
            self.assertGreaterEqual(len(rec["trials"]), 1)
            self.assertLessEqual(len(rec["trials"]), 3)
            self.assertTrue(rec["trials"][0]["ok"])
            self.assertEqual(rec["trials"][0]["config"], {})
            self.assertIn(rec["winner"], [t["config"] for t in rec["trials"] if t["ok"]])

        # run applies both winners (the -v log says so) and still matches the evaluator.
        r = self.run_check(target)
        self.assertIn("tilec: kernel_0: tuned configuration from the tuning cache:", r.stderr)
        self.assertIn("tilec: kernel_1: tuned configuration from the tuning cache:", r.stderr)
        r = self.run_check(target, "--no-tuning-cache")
        self.assertNotIn("tuned configuration", r.stderr)
        r = self.tilec("bench", "-v", str(self.file), *SHAPES, "--target", target, "--runs", "1", "--warmup", "0")
        self.assertIn("tilec: kernel_0: tuned configuration from the tuning cache:", r.stderr)
        r = self.tilec("bench", "-v", str(self.file), *SHAPES, "--target", target, "--runs", "1", "--warmup", "0",
                       "--no-tuning-cache")
        self.assertNotIn("tuned configuration", r.stderr)
        r = self.tilec("compile", "-v", str(self.file), *SHAPES, "--device", target, "--emit", "kernels")
        self.assertIn("tilec: kernel_0: tuned configuration from the tuning cache:", r.stderr)
        # compile goes through runtime::Program: with --hw seed (no device's
        # model) no tuned configuration; never a tune on first use (it runs nothing).
        r = self.tilec("compile", "-v", str(self.file), *SHAPES, "--device", target, "--hw", "seed", "--emit", "kernels")
        self.assertNotIn("tuned configuration", r.stderr)
        self.env["TILEC_TUNE"] = "30"
        self.tilec("compile", str(self.file), *SHAPES, "--device", target, "--vector", "0", "--emit", "kernels")
        del self.env["TILEC_TUNE"]
        self.assertEqual(len(self.records()), 2)

        # A second tune is answered from the cache; nothing is appended.
        r = self.tilec("tune", str(self.file), *SHAPES, "--target", target, *TUNE)
        self.assertIn("kernel_0 contraction", r.stdout)
        self.assertEqual(r.stdout.count("from the tuning cache"), 2, r.stdout)
        self.assertEqual(len(self.records()), 2)

        r = self.tilec("tune", "--show", str(self.file), *SHAPES, "--target", target, "-v")
        self.assertEqual(r.stdout.count(": tuned, "), 2, r.stdout)
        self.assertIn("default", r.stdout)  # the model's pick, listed among the trials

    def test_tune_llvm_then_run_uses_the_winner(self) -> None:
        self.tune_and_run("llvm")

    def test_tune_opencl_then_run_uses_the_winner(self) -> None:
        self.tune_and_run("opencl")

    def test_opencl_work_group_shapes(self) -> None:
        # The flat form (--vector 0) on OpenCL: the candidates include
        # several work-group shapes; the finalists are timed side by side.
        r = self.tilec("tune", str(self.file), *SHAPES, "--target", "opencl", "--vector", "0", "--trials", "12",
                       "--budget", "120s", "--seed", "5", "--top", "1", "-q")
        records = self.records()
        self.assertEqual(len(records), 2, records)
        mm = records[0]
        shapes = {json.dumps(t["config"]["work_group"]) for t in mm["trials"] if "work_group" in t["config"]}
        self.assertGreaterEqual(len(shapes), 2, mm["trials"])
        for t in mm["trials"]:
            if "work_group" in t["config"]:
                self.assertTrue(t["ok"], t)
                self.assertEqual(t["config"]["vector"], False)
        self.assertTrue(mm["trials"][0].get("paired"), mm["trials"][0])
        self.assertIn(mm["winner"], [t["config"] for t in mm["trials"] if t.get("paired")])
        r = self.tilec("tune", "--show", str(self.file), *SHAPES, "--target", "opencl", "-v")
        self.assertIn(" group [", r.stdout)

        # Make a work-group shape the winner: run applies it (the -v log and
        # the emitted launch say so) and matches the evaluator.
        trial = next(t for t in mm["trials"] if "work_group" in t["config"])
        mm["winner"] = trial["config"]
        (self.cache / "tuning.jsonl").write_text("".join(json.dumps(x) + "\n" for x in records))
        r = self.run_check("opencl", "--vector", "0")
        self.assertRegex(r.stderr, r"tilec: kernel_0: tuned configuration from the tuning cache: .*group \[")
        threads = 1
        for t in trial["config"]["work_group"]:
            threads *= t
        r = self.tilec("compile", str(self.file), *SHAPES, "--target", "opencl", "--hw", "device", "--vector", "0",
                       "--emit", "plan")
        self.assertIn(f"Threads {threads} ", r.stdout)

    def test_work_group_option(self) -> None:
        # --work-group on compile and run, and a shape that does not fit.
        r = self.tilec("compile", str(self.file), *SHAPES, "--target", "opencl", "--hw", "device", "--vector", "0",
                       "--tile", "kernel_0=8,16,11", "--work-group", "kernel_0=3,5,1", "--emit", "plan",
                       "--no-tuning-cache")
        self.assertIn("Threads 15 ", r.stdout)
        self.run_check("opencl", "--vector", "0", "--tile", "kernel_0=8,16,11", "--work-group", "kernel_0=3,5,1")
        r = self.tilec("run", str(self.file), "--random-inputs", *SHAPES, "--target", "opencl", "--vector", "0",
                       "--tile", "kernel_0=8,16,11", "--work-group", "kernel_0=3,5,2", code=1)
        self.assertIn("--work-group kernel_0=3,5,2: ", r.stderr)
        self.assertIn("is a reduction index: its threads must be 1, not 2", r.stderr)
        r = self.tilec("run", str(self.file), "--random-inputs", *SHAPES, "--target", "opencl", "--vector", "0",
                       "--work-group", "kernel_9=1", code=1)
        self.assertIn("--work-group kernel_9: the program has no kernel 'kernel_9'", r.stderr)

    def test_quiet_prints_no_progress(self) -> None:
        r = self.tilec("tune", str(self.file), *SHAPES, "--target", "llvm", *TUNE, "-q")
        self.assertNotIn("trial", r.stderr)
        self.assertIn("winner", r.stdout)

    def test_show_before_tuning(self) -> None:
        r = self.tilec("tune", "--show", str(self.file), *SHAPES, "--target", "llvm")
        self.assertEqual(r.stdout.count(": not tuned"), 2, r.stdout)

    def test_corrupt_line_is_skipped_with_one_notice(self) -> None:
        self.tilec("tune", str(self.file), *SHAPES, "--target", "llvm", *TUNE, "-q")
        with open(self.cache / "tuning.jsonl", "a") as f:
            f.write('{"signature": "cut off\n')
        r = self.run_check("llvm")
        self.assertEqual(r.stderr.count("skipped 1 line that does not parse (first: line 3"), 1, r.stderr)
        # The good records still apply.
        self.assertIn("tilec: kernel_0: tuned configuration from the tuning cache:", r.stderr)

    def test_foreign_device_and_version_are_ignored_with_one_notice(self) -> None:
        self.tilec("tune", str(self.file), *SHAPES, "--target", "llvm", *TUNE, "-q")
        records = self.records()
        foreign = []
        for rec in records:
            other = dict(rec, device="llvm:cpu | some other machine")
            older = dict(rec, version="0.0.0")
            foreign += [other, older]
        (self.cache / "tuning.jsonl").write_text("".join(json.dumps(r) + "\n" for r in foreign))
        r = self.run_check("llvm")
        self.assertEqual(r.stderr.count("ignored 4 records of another device or Tilec version"), 1, r.stderr)
        self.assertNotIn("tuned configuration", r.stderr)
        # tune sees them as unknown and tunes again.
        r = self.tilec("tune", str(self.file), *SHAPES, "--target", "llvm", *TUNE, "-q")
        self.assertNotIn("from the tuning cache", r.stdout)
        self.assertEqual(r.stderr.count("ignored 4 records"), 1, r.stderr)

    def test_disabled_cache_keeps_nothing(self) -> None:
        self.env["TILEC_TUNING_CACHE"] = "0"
        r = self.tilec("tune", str(self.file), *SHAPES, "--target", "llvm", *TUNE, "-q")
        self.assertIn("the tuning cache is disabled", r.stderr)
        self.assertFalse((self.cache / "tuning.jsonl").exists())

    def test_interrupt_keeps_what_was_measured(self) -> None:
        p = subprocess.Popen([TILEC, "tune", str(self.file), *SHAPES, "--target", "llvm", "--trials", "1000",
                              "--budget", "10m"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=self.env)
        assert p.stderr is not None
        for line in p.stderr:  # wait for the first measured trial
            if "trial 2/" in line:
                break
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=600)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("interrupted: kept what was measured", out)
        records = self.records()
        self.assertGreaterEqual(len(records), 1)
        self.assertTrue(records[0]["trials"][0]["ok"])


def main() -> None:
    global TILEC, SOURCE_DIR
    parser = argparse.ArgumentParser()
    parser.add_argument("--tilec", required=True, help="path to the tilec binary")
    parser.add_argument("--source-dir", type=Path, required=True, help="the repository root")
    args, rest = parser.parse_known_args()
    TILEC = args.tilec
    SOURCE_DIR = args.source_dir
    unittest.main(argv=[sys.argv[0], *rest])


if __name__ == "__main__":
    main()
