"""Reverse-mode gradients of Tile programs (docs/user-guide.md, "tilec grad").

    import tilec
    g = tilec.grad(source, wrt=["D", "K"])       # derived on the first call per signature
    d_grad, k_grad = g(D=d, K=k, R_grad=r_grad)   # the inputs, then O_grad per output O

The gradient program's inputs are the program's inputs and `O_grad`, the
incoming gradient of each differentiated output `O` (shaped like `O`), then
those of the forward tensors named in `saved` (outputs or named
intermediates the caller has from its forward run) that it reads, which it
then does not compute again (`g.function(...).inputs` lists them); it
returns the gradient of each input of `wrt`, in that order (one array, or a
tuple). `wrt` and `outputs` default to every float input and output. The
gradient is derived and compiled for each (dtype, shape) signature of the
program's inputs; `g.source(D=d, K=k)` shows its Tile text.
"""
import numpy as np

from ._tilec import function, gradient_source as _gradient_source, source_outputs

__all__ = ["Gradient", "grad", "gradient_source", "source_outputs"]


def _signature(value):
    """(dtype, dims) of a NumPy array, a torch tensor or anything with .dtype and .shape."""
    dtype = value.dtype
    if not isinstance(dtype, np.dtype):
        dtype = np.dtype(str(dtype).replace("torch.", ""))
    return dtype, tuple(int(d) for d in value.shape)


def gradient_source(source, shapes, wrt=(), outputs=(), name="<python>", saved=()):
    """The Tile text of the gradient of `source` for `shapes`, a dict
    {input: (dtype, dims)}; see the module's docstring."""
    specs = {k: (np.dtype(d).name, [int(x) for x in dims]) for k, (d, dims) in shapes.items()}
    return _gradient_source(source, specs, list(wrt), list(outputs), name, list(saved))


class Gradient:
    """The gradient of a Tile program, called with keyword arrays."""

    def __init__(self, source, wrt=(), outputs=(), device="llvm", name="<python>", saved=()):
        self._source = source
        self._wrt = list(wrt)
        self._outputs = list(outputs)
        self._saved = list(saved)
        self._device = device
        self._name = name
        self._inputs = function(source, device=device, name=name).inputs  # parses now: errors here
        self._functions = {}  # signature -> compiled gradient program

    def _key(self, tensors):
        missing = [n for n in self._inputs if n not in tensors]
        if missing:
            raise TypeError(f"tilec.grad: missing input(s) {', '.join(missing)}")
        return tuple((n, _signature(tensors[n])) for n in self._inputs)

    def source(self, **tensors):
        """The gradient program's Tile text for these inputs' signature."""
        return gradient_source(self._source, dict(self._key(tensors)), self._wrt, self._outputs, self._name,
                               self._saved)

    def function(self, **tensors):
        """The compiled gradient program (a tilec.Function) for these inputs' signature."""
        key = self._key(tensors)
        f = self._functions.get(key)
        if f is None:
            text = gradient_source(self._source, dict(key), self._wrt, self._outputs, self._name, self._saved)
            f = function(text, device=self._device, name=self._name + " (gradient)")
            self._functions[key] = f
        return f

    def __call__(self, **tensors):
        return self.function(**tensors)(**tensors)

    @property
    def compiled_count(self):
        return len(self._functions)


def grad(source, wrt=(), outputs=(), device="llvm", name="<python>", saved=()):
    """A Gradient of `source` with respect to the inputs `wrt`, of the outputs
    `outputs` (both default to every float one); `saved` names forward
    tensors the caller passes in (those the gradient reads become inputs,
    after the incoming gradients)."""
    return Gradient(source, wrt=wrt, outputs=outputs, device=device, name=name, saved=saved)
