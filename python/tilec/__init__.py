"""Tilec: compile Tile tensor programs and run them on NumPy arrays and on
any object with __dlpack__ (PyTorch CPU tensors).

    import tilec
    f = tilec.function(source)        # compiled on the first call per signature
    r = f(A=a, B=b)                   # NumPy arrays back; out= fills your own

`tilec.torch` turns Tile source into PyTorch operations. See docs/embedding.md.
"""
from ._tilec import Error, Function, devices, function, version

__all__ = ["Error", "Function", "devices", "function", "version"]
