"""The Python module on PyTorch CPU tensors: the fast path (the last out=
call's signature run again) reads each tensor through tilec._torch_fast's C++
reader when that is built, else through torch's Python attributes; every
change of shape, strides, element type, device or in-place metadata must
take the checking path. Also: `import tilec` without torch, and without
tilec._torch_fast. Run by ctest with PYTHONPATH pointing at the built module;
argv[1] is the reader the build should give ("c++" or "attributes")."""
import os
import subprocess
import sys
import textwrap
import unittest

import numpy as np

import tilec

try:
    import torch
except ImportError:
    print("no torch: nothing to test")
    sys.exit(0)

EXPECTED_READER = "c++"
ADD = "function (A[N], B[N]) -> (C) { C = A + B; }"
MUL2 = "function (A[M, N], B[M, N]) -> (C) { C = A * B; }"


def randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64).to(dtype)


class TorchFastPathTest(unittest.TestCase):
    def test_reader_is_the_built_one(self):
        self.assertEqual(tilec._tilec._torch_reader(), EXPECTED_READER)

    def test_fast_path_taken_with_new_data_each_call(self):
        f = tilec.function(MUL2)
        c = torch.full((5, 7), float("nan"))
        for seed in range(4):
            a, b = randn(5, 7, seed=seed), randn(5, 7, seed=seed + 10)
            self.assertIs(f(A=a, B=b, out=c), c)
            torch.testing.assert_close(c, a * b)
        self.assertEqual(f.fast_calls, 3)
        self.assertEqual(f.compiled_count, 1)

    def test_new_shape_recompiles_and_old_one_is_fast_again(self):
        f = tilec.function(ADD)
        for n, fast in ((37, 0), (37, 1), (23, 1), (23, 2), (37, 2), (37, 3)):
            a, b, c = randn(n, seed=n), randn(n, seed=n + 1), torch.full((n,), float("nan"))
            f(A=a, B=b, out=c)
            torch.testing.assert_close(c, a + b)
            self.assertEqual(f.fast_calls, fast, f"n={n}")
        self.assertEqual(f.compiled_count, 2)

    def test_transposed_and_offset_views(self):
        f = tilec.function(MUL2)
        a, b, c = randn(5, 7, seed=1), randn(5, 7, seed=2), torch.zeros(5, 7)
        f(A=a, B=b, out=c)
        t = randn(7, 5, seed=3).t()  # same shape, other strides: checked, not fast
        f(A=t, B=b, out=c)
        torch.testing.assert_close(c, t * b)
        self.assertEqual(f.fast_calls, 0)
        f(A=t, B=b, out=c)
        self.assertEqual(f.fast_calls, 1)
        base = randn(9, 11, seed=4)
        f(A=base[3:8, 2:9], B=b, out=c)  # offset view with strides (11, 1)
        torch.testing.assert_close(c, base[3:8, 2:9] * b)
        f(A=base[1:6, 4:11], B=b, out=c)  # same signature, another offset: fast, right data
        torch.testing.assert_close(c, base[1:6, 4:11] * b)
        self.assertEqual(f.fast_calls, 2)
        wide = torch.full((5, 14), -1.0)
        f(A=a, B=b, out=wide[:, ::2])  # a strided output
        torch.testing.assert_close(wide[:, ::2], a * b)
        self.assertTrue(bool((wide[:, 1::2] == -1).all()))
        self.assertEqual(f.compiled_count, 1)

    def test_dtype_change_recompiles_and_wrong_out_dtype_is_an_error(self):
        f = tilec.function(ADD)
        a, b, c = randn(19, seed=1), randn(19, seed=2), torch.zeros(19)
        f(A=a, B=b, out=c)
        f(A=a, B=b, out=c)
        ad, bd, cd = a.double(), b.double(), torch.zeros(19, dtype=torch.float64)
        f(A=ad, B=bd, out=cd)  # new element type: compiled anew, not fast
        torch.testing.assert_close(cd, ad + bd)
        self.assertEqual((f.fast_calls, f.compiled_count), (1, 2))
        ai, bi, ci = torch.arange(19, dtype=torch.int32), torch.arange(19, dtype=torch.int32), torch.zeros(19, dtype=torch.int32)
        f(A=ai, B=bi, out=ci)
        f(A=ai, B=bi, out=ci)
        self.assertTrue(torch.equal(ci, 2 * torch.arange(19, dtype=torch.int32)))
        self.assertEqual((f.fast_calls, f.compiled_count), (2, 3))
        with self.assertRaises(tilec.Error):
            f(A=ai, B=bi, out=torch.zeros(19, dtype=torch.int64))
        with self.assertRaisesRegex(TypeError, "bfloat16, which Tilec lacks"):
            f(A=a.bfloat16(), B=b.bfloat16(), out=c.bfloat16())

    def test_in_place_metadata_change_is_seen(self):
        f = tilec.function(ADD)
        a, b, c = randn(16, seed=1), randn(16, seed=2), torch.zeros(16)
        f(A=a, B=b, out=c)
        f(A=a, B=b, out=c)
        a.resize_(13), b.resize_(13), c.resize_(13)  # same objects, new sizes
        f(A=a, B=b, out=c)
        torch.testing.assert_close(c, a + b)
        self.assertEqual((f.fast_calls, f.compiled_count), (1, 2))
        a.as_strided_((13,), (1,), 0)
        other = randn(30, seed=3)
        a.set_(other.storage(), 4, (13,), (2,))  # same object, strides 2 and an offset
        f(A=a, B=b, out=c)
        torch.testing.assert_close(c, other[4:30:2] + b)
        self.assertEqual(f.fast_calls, 1)

    def test_not_cpu_not_strided_negated_are_errors(self):
        f = tilec.function(ADD)
        a, b, c = randn(16, seed=1), randn(16, seed=2), torch.zeros(16)
        f(A=a, B=b, out=c)
        f(A=a, B=b, out=c)
        with self.assertRaisesRegex(TypeError, "'A' is a torch tensor on device 'meta', not in CPU memory"):
            f(A=torch.empty(16, device="meta"), B=b, out=c)
        with self.assertRaisesRegex(TypeError, "'C' is a torch tensor on device 'meta'"):
            f(A=a, B=b, out=torch.empty(16, device="meta"))
        with self.assertRaisesRegex(TypeError, "sparse_coo"):
            f(A=a.to_sparse(), B=b, out=c)
        with self.assertRaisesRegex(ValueError, "negated"):
            f(A=torch._neg_view(a), B=b, out=c)
        f(A=a, B=b, out=c)  # the fast path is still right after those
        torch.testing.assert_close(c, a + b)
        self.assertEqual(f.fast_calls, 2)

    def test_parameters_and_requires_grad_inputs(self):
        # tilec.function has no backward: under torch.no_grad() parameters
        # and tensors that require grad are read as data (the fast path too,
        # by the C++ reader); while autograd records, they are an error
        # (test_torch_grad.py; tilec.torch.op records a backward instead).
        f = tilec.function(ADD)
        p = torch.nn.Parameter(randn(21, seed=1))
        g = randn(21, seed=2).requires_grad_()
        c = torch.zeros(21)
        with torch.no_grad():
            for _ in range(3):
                f(A=p, B=g, out=c)
                torch.testing.assert_close(c, (p + g).detach())
        self.assertEqual(f.fast_calls, 2 if EXPECTED_READER == "c++" else 0)  # Parameter: a subclass
        with self.assertRaisesRegex(RuntimeError, "'A' requires grad"):
            f(A=p, B=g, out=c)

    def test_numpy_and_torch_mixed(self):
        f = tilec.function(ADD)
        a, b, c = randn(29, seed=1), np.arange(29, dtype=np.float32), torch.zeros(29)
        for _ in range(2):
            f(A=a, B=b, out=c)
            torch.testing.assert_close(c, a + torch.from_numpy(b))
        self.assertEqual(f.fast_calls, 1)


def run_python(code):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True)


class WithoutTorchTest(unittest.TestCase):
    def test_import_and_run_when_torch_is_not_importable(self):
        r = run_python("""
            import sys
            sys.modules["torch"] = None  # `import torch` raises ImportError
            import numpy as np
            import tilec
            f = tilec.function("function (A[N], B[N]) -> (C) { C = A + B; }")
            a, b, c = np.arange(13, dtype=np.float32), np.ones(13, np.float32), np.zeros(13, np.float32)
            for _ in range(3):
                f(A=a, B=b, out=c)
            assert (c == a + 1).all() and f.fast_calls == 2, (c, f.fast_calls)
            assert tilec._tilec._torch_reader() is None
            print("ok")
        """)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "ok"), r.stderr)

    def test_import_tilec_does_not_import_torch(self):
        r = run_python("""
            import sys
            import numpy as np
            import tilec
            tilec.function("function (A[N]) -> (B) { B = A + A; }")(A=np.ones(3, np.float32))
            print("torch" in sys.modules, "tilec._torch_fast" in sys.modules)
        """)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "False False"), r.stderr)

    def test_torch_without_the_cpp_reader(self):
        r = run_python("""
            import sys
            sys.modules["tilec._torch_fast"] = None  # as if it were not built
            import torch
            import tilec
            f = tilec.function("function (A[M, N], B[M, N]) -> (C) { C = A * B; }")
            a, b, c = torch.randn(5, 7), torch.randn(5, 7), torch.zeros(5, 7)
            for _ in range(3):
                f(A=a, B=b, out=c)
            assert torch.equal(c, a * b) and f.fast_calls == 2, f.fast_calls
            t = torch.randn(7, 5).t()
            f(A=t, B=b, out=c)
            assert torch.equal(c, t * b) and f.fast_calls == 2, f.fast_calls
            try:
                f(A=torch.empty(5, 7, device="meta"), B=b, out=c)
            except TypeError as e:
                assert "not in CPU memory" in str(e), e
            else:
                raise AssertionError("a meta tensor was accepted")
            print(tilec._tilec._torch_reader())
        """)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "attributes"), r.stderr)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        EXPECTED_READER = sys.argv.pop(1)
        if EXPECTED_READER == "attributes-only":
            sys.modules["tilec._torch_fast"] = None  # read before torch's first use
            EXPECTED_READER = "attributes"
    unittest.main()
