"""Constant inputs in the Python module: tilec.function(..., constants=[...]),
Function.invalidate_constants(), and tilec.torch.op(..., constants=[...])
(which also follows torch's version counters). Results are checked against
NumPy on every device, including the documented result of breaking the
promise (same memory, new contents, no invalidation: the old contents'
result). Run by ctest with PYTHONPATH pointing at the built module."""
import sys
import unittest

import numpy as np

import tilec

# NHWC data, HWIO weights: the weights get a relayout kernel (the constant
# work: each weight is used 23 x 23 = 529 times, enough for the copy);
# 23 rows and 13 input channels divide no block.
CONV = """function (D[N, H, W, CI], K[KH, KW, CI, CO]) -> (R) {
  O[n, x, y, co : N, H, W, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, ci, co]);
  R = relu(O);
}"""


def reference(d, k):
    n, x, y, ci = d.shape
    padded = np.zeros((n, x + 2, y + 2, ci), np.float64)
    padded[:, 1:-1, 1:-1, :] = d
    out = np.zeros((n, x, y, k.shape[3]), np.float64)
    for i in range(3):
        for j in range(3):
            out += np.einsum("nxyc,co->nxyo", padded[:, i:i + x, j:j + y, :], k[i, j])
    return np.maximum(out, 0)


def random(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


class ConstantsTest(unittest.TestCase):
    def setUp(self):
        self.d = random((1, 23, 23, 13), 1)
        self.k1, self.k2, self.k3 = (random((3, 3, 13, 128), s) for s in (2, 3, 4))

    def check(self, r, k, what):
        np.testing.assert_allclose(r, reference(self.d, k), rtol=1e-4, atol=1e-4, err_msg=what)

    def test_weights_promise_on_every_device(self):
        for device in tilec.devices():
            with self.subTest(device=device):
                f = tilec.function(CONV, device=device, constants=["K"])
                self.assertEqual(f.constants, ["K"])
                a = self.k1.copy()
                for run in range(3):
                    self.check(f(D=self.d, K=a), self.k1, f"run {run}")
                b = self.k2.copy()  # other memory: read anew
                self.check(f(D=self.d, K=b), self.k2, "other weights")
                b[...] = self.k3  # in place, no invalidation: the old contents' result
                self.check(f(D=self.d, K=b), self.k2, "changed in place, not invalidated")
                f.invalidate_constants()
                self.check(f(D=self.d, K=b), self.k3, "invalidated")
                # The fast path (out=) keeps the promise the same way.
                out = np.empty((1, 23, 23, 128), np.float32)
                for _ in range(2):
                    f(D=self.d, K=b, out=out)
                    self.check(out, self.k3, "fast path")
                b[...] = self.k1
                f(D=self.d, K=b, out=out)
                self.check(out, self.k3, "fast path, changed in place, not invalidated")
                f.invalidate_constants()
                f(D=self.d, K=b, out=out)
                self.check(out, self.k1, "fast path, invalidated")
                self.assertGreater(f.fast_calls, 0)

    def test_without_constants_in_place_changes_are_seen(self):
        with_k = tilec.function(CONV, constants=["K"])
        plain = tilec.function(CONV)
        self.assertEqual(plain.constants, [])
        k = self.k1.copy()
        self.check(with_k(D=self.d, K=k), self.k1, "with constants")
        self.check(plain(D=self.d, K=k), self.k1, "without")
        k[...] = self.k2
        self.check(plain(D=self.d, K=k), self.k2, "without constants, changed in place")
        plain.invalidate_constants()  # a no-op
        self.check(with_k(D=self.d, K=k), self.k1, "with constants: the old contents' result")

    def test_unknown_constant_is_an_error(self):
        f = tilec.function(CONV, name="conv.tile", constants=["K", "W"])
        with self.assertRaises(tilec.Error) as ctx:
            f(D=self.d, K=self.k1)
        self.assertIn("constant input 'W' is not an input of the program (inputs: D, K)", str(ctx.exception))
        for bad in (3, "K", [None]):  # a string is not a list of names
            with self.assertRaises(TypeError):
                tilec.function(CONV, constants=bad)
        with self.assertRaises(TypeError):
            tilec.function(CONV, "llvm", "x", ["K"])  # keyword only

    def test_torch_op_follows_version_counters(self):
        try:
            import torch
            import tilec.torch
        except ImportError:
            self.skipTest("no torch")
        conv = tilec.torch.op(CONV, constants=["K"])
        d = torch.from_numpy(self.d)
        k = torch.nn.Parameter(torch.from_numpy(self.k1.copy()), requires_grad=False)
        for run in range(2):
            self.check(conv(D=d, K=k).numpy(), self.k1, f"run {run}")
        with torch.no_grad():
            k.copy_(torch.from_numpy(self.k2))  # a torch op: the version counter moves
        self.check(conv(D=d, K=k).numpy(), self.k2, "changed by a torch op")
        k.data.copy_(torch.from_numpy(self.k3))  # bypasses the version counter
        self.check(conv(D=d, K=k).numpy(), self.k2, "changed through .data: the old contents' result")
        conv.invalidate_constants()
        self.check(conv(D=d, K=k).numpy(), self.k3, "invalidated")
        other = torch.from_numpy(self.k1.copy())
        self.check(conv(D=d, K=other).numpy(), self.k1, "another tensor")
        # Without constants nothing is promised.
        plain = tilec.torch.op(CONV)
        self.check(plain(D=d, K=k).numpy(), self.k3, "plain op")
        k.data.copy_(torch.from_numpy(self.k2))
        self.check(plain(D=d, K=k).numpy(), self.k2, "plain op, changed through .data")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[1:])
