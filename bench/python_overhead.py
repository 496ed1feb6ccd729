"""The Python module's per-call overhead on an already-compiled tiny program:
a 16-element f32 add into an existing output, against torch.add(out=) on the
same CPU tensors, median of batches, in one process.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py [--attributes]

Torch tensors are read by tilec._torch_fast (C++) where it is built;
--attributes hides it, measuring the reading through torch's attributes.
"""
import statistics
import sys
import time

import numpy as np
import torch

import tilec

CALLS, BATCHES = 2000, 21


def per_call(fn):
    for _ in range(CALLS):
        fn()
    times = []
    for _ in range(BATCHES):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        times.append((time.perf_counter() - t0) / CALLS)
    return statistics.median(times)


def main():
    if "--attributes" in sys.argv:
        sys.modules["tilec._torch_fast"] = None
    add = tilec.function("function (A[N], B[N]) -> (C) { C = A + B; }")
    a, b, c = torch.randn(16), torch.randn(16), torch.empty(16)
    an, bn, cn = a.numpy(), b.numpy(), c.numpy()
    add(A=an, B=bn, out=cn)
    assert torch.equal(c, a + b)
    t_numpy = per_call(lambda: add(A=an, B=bn, out=cn))
    t_dlpack = per_call(lambda: add(A=a, B=b, out=c))
    t_torch = per_call(lambda: torch.add(a, b, out=c))
    # Both measured loops ran the fast path (the last out= call's signature).
    assert add.fast_calls >= 2 * CALLS * (BATCHES + 1) - 2, add.fast_calls
    print(f"tilec on NumPy arrays: {t_numpy * 1e6:.2f} us per call; on torch tensors "
          f"({tilec._tilec._torch_reader()} reader): {t_dlpack * 1e6:.2f} us; torch.add(out=): {t_torch * 1e6:.2f} us; "
          f"tilec/torch: {t_numpy / t_torch:.2f}x (NumPy), {t_dlpack / t_torch:.2f}x (tensors)")


if __name__ == "__main__":
    main()
