"""Whole models through `tilec`: torchvision's classifiers and a transformer
encoder layer (random weights, eval mode, reduced sizes) exported to ONNX at
opset 13, imported and run by the command line, compared with PyTorch's own
outputs (normwise relative error <= 1e-4); `tilec import` and `run --weights`
on the written program; and the errors a user sees for a model Tilec cannot
run.

    /usr/bin/python3 tests/e2e/onnx_models_test.py --tilec build/tools/tilec [--only resnet18]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

TILEC = None
ONLY = None


def run(*args, check=True):
    r = subprocess.run([TILEC, *map(str, args)], capture_output=True, text=True, timeout=900)
    if check and r.returncode != 0:
        raise AssertionError(f"tilec {' '.join(map(str, args))} exited {r.returncode}:\n{r.stderr}")
    return r


def rel_error(got, want):
    return float(np.linalg.norm(got.astype(np.float64) - want) / max(np.linalg.norm(want), 1e-30))


# (name, builder, input shape): reduced sizes, so that ctest stays quick.
def models():
    import torch
    import torchvision

    def encoder():
        return torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=256, batch_first=True,
                                                dropout=0.0)
    return [
        ("resnet18", lambda: torchvision.models.resnet18(num_classes=10), (2, 3, 40, 40)),
        ("resnet50", lambda: torchvision.models.resnet50(num_classes=10), (1, 3, 32, 32)),
        ("mobilenet_v2", lambda: torchvision.models.mobilenet_v2(num_classes=10), (2, 3, 36, 36)),
        ("encoder", encoder, (2, 16, 64)),
    ]


class ModelsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="tilec_onnx_models_")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def export(self, name, build, shape):
        import torch
        torch.manual_seed(0)
        model = build().eval()
        x = torch.randn(*shape)
        path = os.path.join(self.tmp.name, name + ".onnx")
        torch.onnx.export(model, x, path, opset_version=13, input_names=["input"], output_names=["output"])
        with torch.no_grad():
            want = model(x).numpy()
        xp = os.path.join(self.tmp.name, name + "_x.npy")
        np.save(xp, x.numpy())
        return path, xp, want

    def test_models_match_pytorch(self):
        for name, build, shape in models():
            if ONLY and ONLY not in name:
                continue
            with self.subTest(model=name):
                path, xp, want = self.export(name, build, shape)
                targets = ["llvm", "opencl"] if name in ("resnet18", "encoder") else ["llvm"]
                for target in targets:
                    yp = os.path.join(self.tmp.name, f"{name}_{target}_y.npy")
                    run("run", path, "--target", target, "--in", f"input={xp}", "--out", f"output={yp}")
                    err = rel_error(np.load(yp), want)
                    self.assertLessEqual(err, 1e-4, f"{name} on {target}: normwise relative error {err:.3g}")

    def test_import_writes_a_program_that_runs_with_its_weights(self):
        import torch
        path, xp, want = self.export("small", lambda: torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 5)), (1, 3, 9, 11))
        tile = os.path.join(self.tmp.name, "small.tile")
        r = run("import", path, "-o", tile)
        self.assertIn("constants", r.stderr)
        weights = os.path.join(self.tmp.name, "small.weights")
        self.assertTrue(os.path.isdir(weights))
        with open(tile) as f:
            text = f.read()
        self.assertIn("function (#input", text)
        self.assertIn("-> (#output)", text)
        yp = os.path.join(self.tmp.name, "small_y.npy")
        run("run", tile, "--weights", weights, "--in", f"input={xp}", "--out", f"output={yp}")
        self.assertLessEqual(rel_error(np.load(yp), want), 1e-4)
        # The same model checked against the reference evaluator.
        r = run("run", path, "--random-inputs", "--check")
        self.assertIn("check output", r.stdout)
        self.assertIn("OK", r.stdout)

    def test_batch_norm_after_conv_is_folded_into_its_weights(self):
        import onnx
        import torch
        from onnx import TensorProto, helper, numpy_helper
        rng = np.random.default_rng(3)
        w = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
        b = rng.standard_normal(6).astype(np.float32)
        scale, beta, mean = (rng.standard_normal(6).astype(np.float32) for _ in range(3))
        var = rng.uniform(0.5, 2, 6).astype(np.float32)
        inits = [numpy_helper.from_array(a, n) for a, n in
                 [(w, "w"), (b, "b"), (scale, "s"), (beta, "beta"), (mean, "m"), (var, "v")]]
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 1]),
                 helper.make_node("BatchNormalization", ["c", "s", "beta", "m", "v"], ["y"], epsilon=1e-3)]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 9, 7])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
        path = os.path.join(self.tmp.name, "conv_bn.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
        r = run("import", path)
        self.assertIn("1 BatchNormalizations folded", r.stderr)
        self.assertNotIn("sqrt", r.stdout)  # nothing of the normalization is left to run
        x = rng.standard_normal((1, 4, 9, 7)).astype(np.float32)
        xp, yp = os.path.join(self.tmp.name, "cb_x.npy"), os.path.join(self.tmp.name, "cb_y.npy")
        np.save(xp, x)
        run("run", path, "--in", f"x={xp}", "--out", f"y={yp}")
        t = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), (2, 1), 1)
        want = torch.nn.functional.batch_norm(t, torch.from_numpy(mean), torch.from_numpy(var), torch.from_numpy(scale),
                                              torch.from_numpy(beta), eps=1e-3).numpy()
        self.assertLessEqual(rel_error(np.load(yp), want), 1e-5)

    def test_ahead_of_time_model_runs_in_a_c_program(self):
        import shutil
        if not shutil.which("cc"):
            self.skipTest("no C compiler")
        self.check_ahead_of_time_model([], "cc", [])

    def test_ahead_of_time_model_for_aarch64_runs_under_qemu(self):
        # The same for an Arm CPU: an AArch64 object and weights, cross-compiled, run under qemu.
        import shutil
        if not shutil.which("aarch64-linux-gnu-gcc") or not shutil.which("qemu-aarch64"):
            self.skipTest("no aarch64-linux-gnu-gcc or qemu-aarch64 (scripts/setup.sh installs them)")
        self.check_ahead_of_time_model(["--cpu", "neoverse-n1"], "aarch64-linux-gnu-gcc",
                                       ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"])

    # Compiles a small CNN with `tilec compile MODEL.onnx -o` (plus `flags`), builds it with `cc`
    # into a C program that `runner` runs, and compares with PyTorch.
    def check_ahead_of_time_model(self, flags, cc, runner):
        import torch
        path, xp, want = self.export("aotnet", lambda: torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1, stride=2), torch.nn.ReLU(), torch.nn.Conv2d(8, 8, 3, padding=1),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 5)), (2, 3, 13, 11))
        out = os.path.join(self.tmp.name, "aot_" + cc)
        run("compile", path, *flags, "-o", os.path.join(out, "net"))
        for f in ("net.o", "net.c", "net.h", "net.weights", "net_weights.S", "net_model.h", "net_model.c"):
            self.assertTrue(os.path.exists(os.path.join(out, f)), f)
        with open(os.path.join(out, "net_model.h")) as f:
            self.assertIn(f"//   {cc} -O2 app.c net_model.c net_weights.S", f.read())
        app = r"""
#include <stdio.h>
#include <stdlib.h>
#include "net_model.h"
int main(int argc, char** argv) {
  size_t n_in = net_input_BYTES / 4, n_out = net_output_BYTES / 4;
  float* in = malloc(n_in * 4);
  float* out = malloc(n_out * 4);
  FILE* f = fopen(argv[1], "rb");
  if (!f || fread(in, 4, n_in, f) != n_in) return 2;
  fclose(f);
  if (net_model(in, out)) return 3;
  f = fopen(argv[2], "wb");
  fwrite(out, 4, n_out, f);
  fclose(f);
  return 0;
}
"""
        with open(os.path.join(out, "app.c"), "w") as f:
            f.write(app)
        with open(os.path.join(out, "net.h")) as f:
            libs = ["-lpthread", "-lm"] + (["-lmvec"] if "-lmvec" in f.read() else [])
        build = subprocess.run([cc, "-O2", "-Wall", "-Werror", "-o", "app", "app.c", "net_model.c", "net_weights.S",
                                "net.c", "tilec_aot_runtime.c", "net.o", *libs], cwd=out, capture_output=True, text=True)
        self.assertEqual(build.returncode, 0, build.stderr)
        np.load(xp).astype(np.float32).tofile(os.path.join(out, "x.bin"))
        r = subprocess.run([*runner, os.path.join(out, "app"), "x.bin", "y.bin"], cwd=out, capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = np.fromfile(os.path.join(out, "y.bin"), dtype=np.float32).reshape(want.shape)
        self.assertLessEqual(rel_error(got, want), 1e-4)

    def test_folded_nodes_read_initializers_with_lower_case_names(self):
        # vit_b_16's class_token: an initializer whose name keeps its
        # spelling in Tile (#token), expanded at import time.
        import onnx
        from onnx import TensorProto, helper, numpy_helper
        token = np.arange(3, dtype=np.float32).reshape(1, 1, 3)
        inits = [numpy_helper.from_array(token, "token"), numpy_helper.from_array(np.array([2, 1, 3], np.int64), "shape")]
        nodes = [helper.make_node("Expand", ["token", "shape"], ["e"]), helper.make_node("Concat", ["e", "x"], ["y"], axis=1)]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 3])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
        path = os.path.join(self.tmp.name, "token.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
        x = np.random.default_rng(5).standard_normal((2, 4, 3)).astype(np.float32)
        xp, yp = os.path.join(self.tmp.name, "tok_x.npy"), os.path.join(self.tmp.name, "tok_y.npy")
        np.save(xp, x)
        run("run", path, "--in", f"x={xp}", "--out", f"y={yp}")
        want = np.concatenate([np.broadcast_to(token, (2, 1, 3)), x], axis=1)
        np.testing.assert_array_equal(np.load(yp), want)

    def test_unsupported_model_lists_every_missing_op(self):
        import onnx
        from onnx import TensorProto, helper
        nodes = [helper.make_node("NonZero", ["x"], ["a"], name="first"),
                 helper.make_node("Relu", ["x"], ["r"]),
                 helper.make_node("Unique", ["r"], ["b"], name="second")]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                                  [helper.make_tensor_value_info("a", TensorProto.INT64, None),
                                   helper.make_tensor_value_info("b", TensorProto.FLOAT, None)])
        path = os.path.join(self.tmp.name, "unsupported.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
        r = run("run", path, "--random-inputs", check=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("2 nodes of the model cannot be imported", r.stderr)
        self.assertIn("'first' (NonZero) at opset 13: no converter for NonZero", r.stderr)
        self.assertIn("'second' (Unique) at opset 13: no converter for Unique", r.stderr)

    def test_tune_model_then_run_and_bench_use_the_winners(self):
        # `tilec tune MODEL.onnx`: the model's kernels are tuned like a Tile
        # program's, the winners kept in the tuning cache, and `run` (still
        # matching the reference evaluator) and `bench` apply them.
        import onnx
        from onnx import TensorProto, helper, numpy_helper
        rng = np.random.default_rng(3)
        inits = [numpy_helper.from_array(rng.standard_normal((6, 3, 3, 3)).astype(np.float32), "W"),
                 numpy_helper.from_array(rng.standard_normal(6).astype(np.float32), "B"),
                 numpy_helper.from_array(rng.standard_normal((150, 7)).astype(np.float32), "M"),
                 numpy_helper.from_array(np.array([1, -1], np.int64), "shape")]
        nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1], name="conv"),
                 helper.make_node("Relu", ["c"], ["r"], name="relu"),
                 helper.make_node("Reshape", ["r", "shape"], ["f"], name="flatten"),
                 helper.make_node("MatMul", ["f", "M"], ["y"], name="fc")]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 5])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 7])], inits)
        path = os.path.join(self.tmp.name, "tune.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
        env = dict(os.environ, TILEC_CACHE_DIR=os.path.join(self.tmp.name, "tune_cache"))
        for k in ("TILEC_TUNING_CACHE", "TILEC_TUNING_CACHE_FILE", "TILEC_TUNE"):
            env.pop(k, None)

        def tilec(*args):
            r = subprocess.run([TILEC, *args], capture_output=True, text=True, timeout=900, env=env)
            self.assertEqual(r.returncode, 0, f"tilec {' '.join(args)}:\n{r.stderr}")
            return r

        r = tilec("tune", path, "--trials", "2", "--budget", "120s", "--seed", "5", "--top", "2")
        self.assertIn("tune.onnx on llvm", r.stdout)
        tuned = [line.split()[0] for line in r.stdout.splitlines() if " contraction [" in line]
        self.assertGreaterEqual(len(tuned), 2, r.stdout)  # the convolution and the matmul
        records = os.path.join(env["TILEC_CACHE_DIR"], "tuning.jsonl")
        with open(records) as f:
            self.assertEqual(len([line for line in f if line.strip()]), len(tuned))
        r = tilec("run", "-v", path, "--random-inputs", "--check")
        self.assertIn("check y: f32[1, 7]", r.stdout)
        self.assertNotIn("MISMATCH", r.stdout)
        for k in tuned:
            self.assertIn(f"tilec: {k}: tuned configuration from the tuning cache:", r.stderr)
        r = tilec("bench", "-v", path, "--runs", "1", "--warmup", "0")
        for k in tuned:
            self.assertIn(f"tilec: {k}: tuned configuration from the tuning cache:", r.stderr)
        # A second tune is answered from the cache.
        r = tilec("tune", path, "--trials", "2", "--budget", "120s", "--seed", "5", "--top", "2")
        self.assertEqual(r.stdout.count("from the tuning cache"), len(tuned), r.stdout)

    def test_bad_files_are_user_errors(self):
        bad = os.path.join(self.tmp.name, "bad.onnx")
        with open(bad, "wb") as f:
            f.write(b"\x01\x02 this is not a protobuf \xff\xff\xff")
        r = run("check", bad, check=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("not an ONNX model", r.stderr)
        r = run("check", os.path.join(self.tmp.name, "missing.onnx"), check=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("cannot read model", r.stderr)
        r = run("check", self.tmp.name + "/.onnx", check=False)  # a missing file named like a model
        self.assertEqual(r.returncode, 1, r.stderr)
        folder = os.path.join(self.tmp.name, "folder.onnx")
        os.makedirs(folder, exist_ok=True)
        r = run("check", folder, check=False)  # a directory: an error, never a crash
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("folder.onnx", r.stderr)


def main():
    global TILEC, ONLY
    p = argparse.ArgumentParser()
    p.add_argument("--tilec", required=True)
    p.add_argument("--only")
    args, rest = p.parse_known_args()
    TILEC, ONLY = args.tilec, args.only
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
