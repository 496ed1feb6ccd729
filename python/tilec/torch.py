"""Tile programs as PyTorch operations on CPU tensors (forward only).

    import tilec.torch
    relu_conv = tilec.torch.op(source)            # a callable on torch tensors
    y = relu_conv(D=x, K=weight)                  # a torch.Tensor (shares the result's memory)

`op` accepts contiguous and channels-last tensors (any strides: memory in the
compiled layout is used in place, other memory is copied in) and returns
tensors in PyTorch's row-major order. Gradients are not computed: use it for
inference (inside torch.no_grad(), or on tensors that need none).

`op(source, constants=["K"])` marks inputs whose contents do not change
between calls (a module's weights): the work that reads only them (a
relayout of the weights) runs once. Nothing is marked unless you ask: the
promise is yours (parameters change during training). A constant given as
another tensor (other memory) is read anew, and so is one changed in place
by a torch operation (optimizer.step(), load_state_dict, `w.mul_(2)`: its
version counter moved); a change that bypasses the version counter
(through `w.data`, a NumPy view, or a new tensor at a freed one's address)
needs `op.invalidate_constants()`.
"""
import numpy as np
import torch

from . import function


class TileOp:
    """A Tile program called with keyword tensors named like its inputs."""

    def __init__(self, source, device="llvm", name="<torch>", constants=()):
        self._function = function(source, device=device, name=name, constants=list(constants))
        self._constants = tuple(constants)
        self._versions = {}  # constant name -> (data_ptr, version) at the last call

    def __call__(self, **tensors):
        for key, value in tensors.items():
            if not isinstance(value, torch.Tensor):
                raise TypeError(f"tilec.torch: '{key}' is not a torch.Tensor")
            if value.device.type != "cpu":
                raise TypeError(f"tilec.torch: '{key}' is on {value.device}; only CPU tensors are supported")
            if value.requires_grad and torch.is_grad_enabled():
                raise RuntimeError(f"tilec.torch: '{key}' requires grad; tilec ops have no backward (use torch.no_grad())")
        if self._constants:
            self._check_versions(tensors)
        result = self._function(**{k: v.detach() for k, v in tensors.items()})
        if isinstance(result, tuple):
            return tuple(torch.from_numpy(np.asarray(r)) for r in result)
        return torch.from_numpy(np.asarray(result))

    def _check_versions(self, tensors):
        """Invalidates the constants if one was changed in place by a torch op
        since the last call (same memory, a newer version)."""
        changed = False
        for name in self._constants:
            t = tensors.get(name)
            if t is None:
                continue
            now = (t.data_ptr(), t._version)
            last = self._versions.get(name)
            changed |= last is not None and last[0] == now[0] and last[1] != now[1]
            self._versions[name] = now
        if changed:
            self._function.invalidate_constants()

    def invalidate_constants(self):
        """After a constant's contents changed in place without a torch op
        seeing it: the next call reads the constants anew."""
        self._function.invalidate_constants()

    @property
    def compiled_count(self):
        return self._function.compiled_count


def op(source, device="llvm", name="<torch>", constants=()):
    """A TileOp for `source` on `device`; `constants` names the inputs whose
    contents do not change between calls (see the module's docstring)."""
    return TileOp(source, device=device, name=name, constants=constants)
