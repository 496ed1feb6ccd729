"""ONNX models as Tilec programs: the whole graph imported as one Tile
program (the library's importer, as `tilec import` uses), compiled once,
called like `tilec.function`.

    import tilec.onnx
    model = tilec.onnx.load("resnet18.onnx")          # a path, or the model's bytes
    y = model(x)                                      # positional in the graph's input order
    y = model(input=x)                                # or by the graph's input names
    print(model.source)                               # the Tile program

Inputs are NumPy arrays or objects with __dlpack__ (PyTorch CPU tensors);
outputs are NumPy arrays (one, or a tuple in the graph's order). The
weights are constant inputs: the work that reads only them runs once.
A graph input with symbolic dimensions needs `shapes={"input": (dtype,
dims)}`, or is bound from the first call: a call with other shapes imports
the model again for them.
"""
import os

import numpy as np

from . import _tilec, function


class Model:
    """An ONNX model compiled by Tilec (see the module's docstring)."""

    def __init__(self, model, device="llvm", shapes=None, name=None):
        if isinstance(model, (bytes, bytearray, memoryview)):
            self._bytes, self._origin = bytes(model), name or "<onnx bytes>"
        elif isinstance(model, (str, os.PathLike)):
            with open(model, "rb") as f:
                self._bytes = f.read()
            self._origin = name or os.fspath(model)
        else:
            raise TypeError("tilec.onnx.load: give a path or the model's bytes")
        self._device = device
        self._by_shapes = {}
        self._current = self._import(dict(shapes or {}))

    def _import(self, shapes):
        spec = {k: (np.dtype(v[0]), [int(d) for d in v[1]]) for k, v in shapes.items()}
        key = tuple(sorted((k, str(v[0]), tuple(v[1])) for k, v in spec.items()))
        if key in self._by_shapes:
            return self._by_shapes[key]
        m = _tilec._import_onnx(self._bytes, self._origin, spec)
        m["function"] = function(m["source"], device=self._device, name=self._origin,
                                 constants=list(m["constants"]))
        self._by_shapes[key] = m
        return m

    @property
    def source(self):
        """The Tile program."""
        return self._current["source"]

    @property
    def inputs(self):
        """The graph inputs' names, in order."""
        return [t[0] for t in self._current["inputs"]]

    @property
    def outputs(self):
        """The graph outputs' names, in order."""
        return [t[0] for t in self._current["outputs"]]

    @property
    def constants(self):
        """The weights, by their name in the program."""
        return dict(self._current["constants"])

    def __call__(self, *args, **kwargs):
        names = self.inputs
        if len(args) > len(names):
            raise TypeError(f"tilec.onnx: the model takes {len(names)} inputs ({', '.join(names)}), "
                            f"{len(args)} given")
        given = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"tilec.onnx: '{k}' is not an input of the model (inputs: {', '.join(names)})")
            if k in given:
                raise TypeError(f"tilec.onnx: input '{k}' given twice")
            given[k] = v
        missing = [n for n in names if n not in given]
        if missing:
            raise TypeError(f"tilec.onnx: missing input(s) {', '.join(missing)}")
        m = self._current
        # Shapes other than the imported ones: import again for them.
        shapes = {}
        for name, tile, dtype, dims in m["inputs"]:
            v = given[name]
            shape = tuple(v.shape)
            if shape != tuple(dims):
                shapes[name] = (getattr(v, "dtype", dtype) if isinstance(v, np.ndarray) else dtype, shape)
        if shapes:
            m = self._import(shapes)
            self._current = m
        args = {tile: given[name] for name, tile, _, _ in m["inputs"]}
        args.update(m["constants"])
        result = m["function"](**args)
        return result


def load(model, device="llvm", shapes=None, name=None):
    """A callable Model for an ONNX model (a path or its bytes) on `device`."""
    return Model(model, device=device, shapes=shapes, name=name)
