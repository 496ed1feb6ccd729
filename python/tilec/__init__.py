"""Tilec: compile Tile tensor programs and run them on NumPy arrays and on
any object with __dlpack__ (PyTorch CPU tensors).

    import tilec
    f = tilec.function(source)        # compiled on the first call per signature
    r = f(A=a, B=b)                   # NumPy arrays back; out= fills your own

    g = tilec.grad(source, wrt=["A"])  # its gradient: g(A=a, B=b, R_grad=r) returns A's

`tilec.torch` turns Tile source into PyTorch operations (with a backward).
See docs/embedding.md.
"""
from ._tilec import Error, Function, devices, function, version
from .grad import Gradient, grad, gradient_source

__all__ = ["Error", "Function", "Gradient", "devices", "function", "grad", "gradient_source", "version"]
