"""Tilec from Python: a Tile program as a function of NumPy arrays.

    PYTHONPATH=PREFIX/lib/python3/dist-packages /usr/bin/python3 examples/embed/numpy_add.py
"""
import numpy as np

import tilec

print("tilec", tilec.version(), "devices:", tilec.devices())
scale_add = tilec.function("function (A[M, N], B[N]) -> (C) { C = A * 2.0 + B; }")
a = np.arange(12, dtype=np.float32).reshape(3, 4)
b = np.ones(4, np.float32)
c = scale_add(A=a, B=b)
assert np.array_equal(c, a * 2 + b), c
print("C = A * 2 + B:", c.tolist())

try:
    tilec.function("function (A[N]) -> (C) {\n  C = A + X;\n}", name="bad.tile")(A=b)
    raise SystemExit("a bad program ran")
except tilec.Error as e:
    print("expected error:\n" + str(e))
