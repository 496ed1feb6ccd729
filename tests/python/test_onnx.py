"""tilec.onnx.load and tilec.torch.compile: whole models (torchvision's
classifiers and a transformer encoder layer, random weights, reduced sizes)
against PyTorch; weights changed in place; new input shapes; errors."""
import io
import unittest

import numpy as np
import torch
import torchvision

import tilec
import tilec.onnx
import tilec.torch


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def export(module, x):
    buf = io.BytesIO()
    torch.onnx.export(module, (x,), buf, opset_version=13, input_names=["input"], output_names=["output"])
    return buf.getvalue()


class OnnxLoadTest(unittest.TestCase):
    def test_resnet18_matches_pytorch_by_position_and_by_name(self):
        torch.manual_seed(1)
        m = torchvision.models.resnet18(num_classes=7).eval()
        x = torch.randn(2, 3, 33, 35)
        model = tilec.onnx.load(export(m, x))
        self.assertEqual(model.inputs, ["input"])
        self.assertEqual(model.outputs, ["output"])
        self.assertIn("function (#input", model.source)
        with torch.no_grad():
            want = m(x).numpy()
        self.assertLess(rel(model(x.numpy()), want), 1e-4)
        self.assertLess(rel(model(input=x), want), 1e-4)

    def test_symbolic_batch_is_bound_from_the_call(self):
        m = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.GELU()).eval()
        buf = io.BytesIO()
        torch.onnx.export(m, (torch.randn(2, 6),), buf, opset_version=13, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}})
        with self.assertRaises(tilec.Error) as e:
            tilec.onnx.load(buf.getvalue())
        self.assertIn("symbolic", str(e.exception))
        model = tilec.onnx.load(buf.getvalue(), shapes={"x": ("float32", (3, 6))})
        for n in (3, 5):
            x = torch.randn(n, 6)
            with torch.no_grad():
                self.assertLess(rel(model(x), m(x).numpy()), 1e-4)

    def test_errors(self):
        with self.assertRaises(tilec.Error) as e:
            tilec.onnx.load(b"not a model")
        self.assertEqual(e.exception.kind, "user")
        self.assertIn("not an ONNX model", str(e.exception))
        m = torch.nn.Linear(3, 2).eval()
        model = tilec.onnx.load(export(m, torch.randn(1, 3)))
        with self.assertRaises(TypeError):
            model(torch.randn(1, 3), torch.randn(1, 3))
        with self.assertRaises(TypeError):
            model(wrong=torch.randn(1, 3))
        with self.assertRaises(TypeError):
            tilec.onnx.load(42)


class TorchCompileTest(unittest.TestCase):
    def test_models_match_pytorch(self):
        torch.manual_seed(2)
        encoder = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True,
                                                   dropout=0.0)
        cases = [(torchvision.models.mobilenet_v2(num_classes=5), (2, 3, 32, 32)),
                 (torchvision.models.resnet50(num_classes=5), (1, 3, 32, 32)),
                 (encoder, (2, 10, 32))]
        for module, shape in cases:
            with self.subTest(module=type(module).__name__):
                module.eval()
                x = torch.randn(*shape)
                fast = tilec.torch.compile(module, (x,))
                with torch.no_grad():
                    self.assertLess(rel(fast(x), module(x)), 1e-4)

    def test_weight_changes_and_new_shapes_recompile(self):
        torch.manual_seed(3)
        m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(4 * 6 * 6, 3)).eval()
        x = torch.randn(1, 3, 6, 6)
        fast = tilec.torch.compile(m, x)
        with torch.no_grad():
            before = fast(x)
            m[0].weight.mul_(2)  # in place: its version moves
            after = fast(x)
            self.assertLess(rel(after, m(x)), 1e-4)
            self.assertGreater(rel(after, before), 1e-3)
            x2 = torch.randn(3, 3, 6, 6)
            self.assertLess(rel(fast(x2), m(x2)), 1e-4)

    def test_training_mode_and_grad_are_refused(self):
        m = torch.nn.Linear(3, 2)
        with self.assertRaises(RuntimeError):
            tilec.torch.compile(m.train(), torch.randn(1, 3))
        fast = tilec.torch.compile(m.eval(), torch.randn(1, 3))
        with self.assertRaises(RuntimeError):
            fast(torch.randn(1, 3, requires_grad=True))


if __name__ == "__main__":
    unittest.main(verbosity=2)
