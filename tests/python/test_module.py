"""The Python module `tilec`: NumPy and DLPack (PyTorch) inputs, zero-copy
views, out=, specialization per signature, errors with source line and caret.
Run by ctest with PYTHONPATH pointing at the built module."""
import sys
import threading
import unittest

import numpy as np

import tilec

CONV = """function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, co, ci]);
  R = (O > 0 ? O : 0);
}"""


def conv_relu_reference(d, k):
    n, x, y, ci = d.shape
    padded = np.zeros((n, x + 2, y + 2, ci), d.dtype)
    padded[:, 1:-1, 1:-1, :] = d
    out = np.zeros((n, x, y, k.shape[2]), np.float64)
    for i in range(3):
        for j in range(3):
            out += np.einsum("nxyc,oc->nxyo", padded[:, i:i + x, j:j + y, :], k[i, j])
    return np.maximum(out, 0)


class ModuleTest(unittest.TestCase):
    def test_numpy_conv_relu_matches_reference(self):
        rng = np.random.default_rng(1)
        d = rng.standard_normal((1, 7, 9, 5), dtype=np.float32)
        k = rng.standard_normal((3, 3, 6, 5), dtype=np.float32)
        for device in tilec.devices():
            f = tilec.function(CONV, device=device)
            r = f(D=d, K=k)
            self.assertEqual(r.shape, (1, 7, 9, 6))
            np.testing.assert_allclose(r, conv_relu_reference(d, k), rtol=1e-4, atol=1e-4)

    def test_strided_inputs_and_out(self):
        f = tilec.function("function (A[M, N], B[N]) -> (C) { C = A * B; }")
        a = np.arange(35, dtype=np.float32).reshape(7, 5).T  # a transposed view
        b = np.arange(7, dtype=np.float32)
        out = np.full((5, 7), -1, np.float32)
        res = f(A=a, B=b, out=out)
        self.assertIs(res, out)
        np.testing.assert_array_equal(out, a * b)
        wide = np.zeros((5, 14), np.float32)
        f(A=a, B=b, out=wide[:, ::2])  # a strided output view
        np.testing.assert_array_equal(wide[:, ::2], a * b)
        np.testing.assert_array_equal(wide[:, 1::2], 0)

    def test_specializes_once_per_signature(self):
        f = tilec.function("function (A[N]) -> (B) { B = A + A; }")
        for _ in range(3):
            f(A=np.ones(4, np.float32))
        f(A=np.ones(5, np.float32))
        f(A=np.ones(5, np.float64))
        self.assertEqual(f.compiled_count, 3)
        np.testing.assert_array_equal(f(A=np.arange(5.0)), 2 * np.arange(5.0))

    def test_dlpack_torch_tensors(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch")
        f = tilec.function("function (A[M, N], B[N]) -> (C) { C = A + B; }")
        a = torch.randn(4, 6)
        b = torch.randn(6)
        np.testing.assert_allclose(f(A=a, B=b), (a + b).numpy(), rtol=1e-6)
        out = torch.zeros(4, 6)
        f(A=a, B=b, out=out)  # written in place through __dlpack__
        torch.testing.assert_close(out, a + b)
        cl = torch.randn(1, 3, 4, 5).to(memory_format=torch.channels_last)
        g = tilec.function("function (X[N, C, H, W]) -> (Y) { Y = X * 2.0; }")
        np.testing.assert_allclose(g(X=cl), (cl * 2).numpy(), rtol=1e-6)

    def test_torch_views_dtypes_and_offsets(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch")
        f = tilec.function("function (A[M, N], B[M, N]) -> (C) { C = A + B; }")
        base = torch.randn(7, 9)
        a = base.t()            # strided (transposed) view
        b = base[1:, :].t()[:, :6]  # a view with a storage offset: 9 x 6
        a = a[:, :6]
        np.testing.assert_allclose(f(A=a, B=b), (a + b).numpy(), rtol=1e-6)
        ints = torch.arange(12, dtype=torch.int32).reshape(3, 4)
        np.testing.assert_array_equal(f(A=ints, B=ints), (2 * ints).numpy())
        h = torch.randn(3, 4).to(torch.float16)
        np.testing.assert_allclose(f(A=h, B=h), (h + h).numpy(), rtol=1e-3)
        g = tilec.function("function (A[N]) -> (B) { B = !A; }")
        flags = torch.tensor([True, False, True])
        np.testing.assert_array_equal(g(A=flags), [False, True, False])

    def test_any_object_with_dlpack(self):
        class OnlyDlpack:
            """Memory offered only through the DLPack protocol."""
            def __init__(self, array):
                self.array = array

            def __dlpack__(self, stream=None):
                return self.array.__dlpack__()

            def __dlpack_device__(self):
                return self.array.__dlpack_device__()

        if not hasattr(np.ndarray, "__dlpack__"):
            self.skipTest("NumPy without __dlpack__")
        f = tilec.function("function (A[M, N], B[N]) -> (C) { C = A * B; }")
        a = np.random.rand(5, 3).astype(np.float32)
        b = np.random.rand(3).astype(np.float32)
        np.testing.assert_allclose(f(A=OnlyDlpack(a), B=OnlyDlpack(b)), a * b, rtol=1e-6)
        out = np.zeros((5, 3), np.float32)
        f(A=OnlyDlpack(a), B=b, out=OnlyDlpack(out))  # written in place
        np.testing.assert_allclose(out, a * b, rtol=1e-6)
        strided = np.random.rand(3, 10).astype(np.float32)[:, ::2].T  # 5 x 3, strides (2, 10)
        np.testing.assert_allclose(f(A=OnlyDlpack(strided), B=b), strided * b, rtol=1e-6)

    def test_tile_errors_show_line_and_caret(self):
        f = tilec.function("function (A[N]) -> (B) {\n  B = A + Q;\n}", name="bad.tile")
        with self.assertRaises(tilec.Error) as ctx:
            f(A=np.ones(3, np.float32))
        text = str(ctx.exception)
        self.assertIn("bad.tile:2:11: error:", text)
        self.assertIn("  B = A + Q;\n          ^", text)

    def test_wrong_arguments(self):
        f = tilec.function("function (A[N]) -> (B) { B = A; }")
        with self.assertRaises(TypeError):
            f(A=[1, 2, 3])
        with self.assertRaises(tilec.Error):
            f(A=np.ones(3, np.float32), Z=np.ones(3, np.float32))
        with self.assertRaises(tilec.Error):
            f(A=np.ones(3, np.float32), out=np.ones(4, np.float32))

    def test_threads_share_a_function_safely(self):
        # Runs release the GIL; each thread uses its own output.
        f = tilec.function("function (A[N]) -> (B) { B = A * 3.0; }")
        f(A=np.ones(1000, np.float32))
        errors = []

        def work(seed):
            x = np.full(1000, seed, np.float32)
            for _ in range(50):
                if not np.array_equal(f(A=x), x * 3):
                    errors.append(seed)

        threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    # The fast path (the last out= call's signature run directly): every
    # difference from it must take the checking path.
    def test_fast_path_recompiles_for_a_new_shape(self):
        f = tilec.function("function (A[N], B[N]) -> (C) { C = A + B; }")
        rng = np.random.default_rng(7)
        for n, fast in ((16, 0), (16, 1), (17, 1), (16, 1), (16, 2)):
            a, b = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
            c = np.full(n, np.nan, np.float32)
            self.assertIs(f(A=a, B=b, out=c), c)
            np.testing.assert_array_equal(c, a + b)
            self.assertEqual(f.fast_calls, fast, f"n={n}")
        self.assertEqual(f.compiled_count, 2)

    def test_fast_path_follows_new_data_strides_and_keyword_order(self):
        f = tilec.function("function (A[N], B[N]) -> (C) { C = A + B; }")
        a, b = np.arange(37, dtype=np.float32), np.ones(37, np.float32)
        c = np.zeros(37, np.float32)
        for _ in range(3):
            f(A=a, B=b, out=c)
            np.testing.assert_array_equal(c, a + 1)
            a = a * 2  # new memory, same signature
        self.assertEqual(f.fast_calls, 2)
        wide, out_wide = np.arange(74, dtype=np.float32), np.full(74, -1.0, np.float32)
        f(A=wide[::2], B=b, out=out_wide[::2])  # strides change: same shape, other memory layout
        np.testing.assert_array_equal(out_wide[::2], wide[::2] + 1)
        np.testing.assert_array_equal(out_wide[1::2], -1.0)  # gaps untouched
        f(B=a, A=b, out=c)  # keywords in another order
        np.testing.assert_array_equal(c, a + 1)
        self.assertEqual(f.compiled_count, 1)

    def test_fast_path_wrong_dtype_is_an_error(self):
        f = tilec.function("function (A[N], B[N]) -> (C) { C = A + B; }")
        a, b, c = np.ones(16, np.float32), np.ones(16, np.float32), np.zeros(16, np.float32)
        f(A=a, B=b, out=c)
        f(A=a, B=b, out=c)
        with self.assertRaises(tilec.Error):
            f(A=a, B=b, out=np.zeros(16, np.int32))
        with self.assertRaises(tilec.Error):
            f(A=a, B=b, out=np.zeros(17, np.float32))
        with self.assertRaises(TypeError):
            f(A=[1.0] * 16, B=b, out=c)
        f(A=a, B=b, out=c)
        np.testing.assert_array_equal(c, 2.0)

    def test_fast_path_on_torch_tensors(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch")
        f = tilec.function("function (A[M, N], B[M, N]) -> (C) { C = A * B; }")
        c = torch.zeros(5, 7)
        for seed in range(3):  # new tensors each call
            g = torch.Generator().manual_seed(seed)
            a, b = torch.randn(5, 7, generator=g), torch.randn(5, 7, generator=g)
            self.assertIs(f(A=a, B=b, out=c), c)
            torch.testing.assert_close(c, a * b)
        self.assertEqual(f.fast_calls, 2)
        t = torch.randn(7, 5).t()  # strides change
        f(A=t, B=b, out=c)
        torch.testing.assert_close(c, t * b)
        with self.assertRaises(tilec.Error):
            f(A=a, B=b, out=torch.zeros(5, 7, dtype=torch.float64))
        self.assertEqual(f.compiled_count, 1)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[1:])
