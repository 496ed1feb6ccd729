"""Tile programs as PyTorch operations on CPU tensors (forward only).

    import tilec.torch
    relu_conv = tilec.torch.op(source)            # a callable on torch tensors
    y = relu_conv(D=x, K=weight)                  # a torch.Tensor (shares the result's memory)

`op` accepts contiguous and channels-last tensors (any strides: memory in the
compiled layout is used in place, other memory is copied in) and returns
tensors in PyTorch's row-major order. Gradients are not computed: use it for
inference (inside torch.no_grad(), or on tensors that need none).
"""
import numpy as np
import torch

from . import function


class TileOp:
    """A Tile program called with keyword tensors named like its inputs."""

    def __init__(self, source, device="llvm", name="<torch>"):
        self._function = function(source, device=device, name=name)

    def __call__(self, **tensors):
        for key, value in tensors.items():
            if not isinstance(value, torch.Tensor):
                raise TypeError(f"tilec.torch: '{key}' is not a torch.Tensor")
            if value.device.type != "cpu":
                raise TypeError(f"tilec.torch: '{key}' is on {value.device}; only CPU tensors are supported")
            if value.requires_grad and torch.is_grad_enabled():
                raise RuntimeError(f"tilec.torch: '{key}' requires grad; tilec ops have no backward (use torch.no_grad())")
        result = self._function(**{k: v.detach() for k, v in tensors.items()})
        if isinstance(result, tuple):
            return tuple(torch.from_numpy(np.asarray(r)) for r in result)
        return torch.from_numpy(np.asarray(result))

    @property
    def compiled_count(self):
        return self._function.compiled_count


def op(source, device="llvm", name="<torch>"):
    """A TileOp for `source` on `device`."""
    return TileOp(source, device=device, name=name)
