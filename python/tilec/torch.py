"""Tile programs as PyTorch operations on CPU tensors, with a backward, and
whole PyTorch modules compiled by Tilec (inference).

    import tilec.torch
    relu_conv = tilec.torch.op(source)            # a callable on torch tensors
    y = relu_conv(D=x, K=weight)                  # a torch.Tensor (shares the result's memory)

    fast = tilec.torch.compile(model.eval(), (x,))   # the whole module as one Tile program
    y = fast(x)                                   # torch tensors in and out

`compile` exports the module through `torch.onnx` (in memory, opset 13) and
imports the graph with `tilec.onnx`: every layer in one program, so the
compiler fuses across layers. The weights are constants: a change to a
parameter or buffer (an optimizer step, load_state_dict, an in-place op)
is seen through its version counter and the module is exported again.
Inputs of other shapes than the example's export it again for them.
Inference only (the module must be in eval mode; no gradients).

`op` accepts contiguous and channels-last tensors (any strides: memory in the
compiled layout is used in place, other memory is copied in) and returns
tensors in PyTorch's row-major order. Where an input requires grad and
autograd records, the call is a torch.autograd.Function whose backward runs
the program's gradient, derived by Tilec as a Tile program (tilec.grad) for
the inputs that require grad and compiled per signature; integer outputs are
non-differentiable. The backward reads the forward's float results where its
gradient needs them (a ReLU's mask is its result != 0) instead of running
the forward again; they are saved tensors, so changing one in place before
the backward is an error, as for torch's own ops. An nn.Module made of Tile
ops so trains.

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
import io

import numpy as np
import torch

from . import function
from .grad import Gradient, source_outputs
from . import onnx as tilec_onnx


class TileOp:
    """A Tile program called with keyword tensors named like its inputs."""

    def __init__(self, source, device="llvm", name="<torch>", constants=()):
        self._function = function(source, device=device, name=name, constants=list(constants))
        self._constants = tuple(constants)
        self._versions = {}  # constant name -> (data_ptr, version) at the last call
        self._source, self._device, self._name = source, device, name
        self._outputs = source_outputs(source, name)
        self._gradients = {}  # (wrt, outputs) -> Gradient
        self._compiled_gradients = {}  # (wrt, outputs, input signature) -> (tilec function, incoming names)

    def __call__(self, **tensors):
        for key, value in tensors.items():
            if not isinstance(value, torch.Tensor):
                raise TypeError(f"tilec.torch: '{key}' is not a torch.Tensor")
            if value.device.type != "cpu":
                raise TypeError(f"tilec.torch: '{key}' is on {value.device}; only CPU tensors are supported")
        if torch.is_grad_enabled() and any(v.requires_grad for v in tensors.values()):
            names = tuple(tensors)
            return _TileFunction.apply(self, names, *(tensors[n] for n in names))
        return self._forward(tensors)

    def _forward(self, tensors):
        if self._constants:
            self._check_versions(tensors)
        result = self._function(**{k: v.detach() for k, v in tensors.items()})
        if isinstance(result, tuple):
            return tuple(torch.from_numpy(np.asarray(r)) for r in result)
        return torch.from_numpy(np.asarray(result))

    def _backward(self, inputs, wrt, outputs, grads, results):
        """The gradients of `wrt` (a dict name -> tensor) given the incoming
        gradients `grads` of the float `outputs`; `results` (name -> tensor)
        are the forward's float results, which the gradient program reads
        instead of computing them again (the ReLU's mask from its result)."""
        # The compiled gradient, its incoming-gradient names and the results
        # it reads by (wrt, outputs, the inputs' dtypes and shapes): one dict
        # lookup per backward (Gradient.function's signature costs a few us
        # per input).
        key = (tuple(wrt), tuple(outputs), tuple((n, t.dtype, t.shape) for n, t in inputs.items()))
        entry = self._compiled_gradients.get(key)
        if entry is None:
            gradient = self._gradients.get(key[:2])
            if gradient is None:
                gradient = Gradient(self._source, wrt=wrt, outputs=outputs, device=self._device,
                                    name=self._name, saved=list(results))
                self._gradients[key[:2]] = gradient
            f = gradient.function(**inputs)
            rest = f.inputs[len(inputs):]  # O_grad per output, then the results it reads
            entry = self._compiled_gradients[key] = (f, rest[:len(outputs)], rest[len(outputs):])
        f, incoming, read = entry
        args = dict(inputs)
        args.update({n: g.detach().contiguous() for n, g in zip(incoming, grads)})
        args.update({n: results[n].detach() for n in read})
        result = f(**args)
        if not isinstance(result, tuple):
            result = (result,)
        return {w: torch.from_numpy(np.asarray(r)) for w, r in zip(wrt, result)}

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


class _TileFunction(torch.autograd.Function):
    """A TileOp's call under autograd: forward runs the program, backward its gradient."""

    @staticmethod
    def forward(ctx, tile_op, names, *tensors):
        inputs = dict(zip(names, tensors))
        result = tile_op._forward(inputs)
        results = result if isinstance(result, tuple) else (result,)
        ctx.tile_op, ctx.names = tile_op, names
        ctx.floats = [r.is_floating_point() for r in results]
        ctx.mark_non_differentiable(*[r for r in results if not r.is_floating_point()])
        # The float results too: the gradient reads them rather than running
        # the forward again (saved tensors: an in-place change is an error).
        ctx.save_for_backward(*tensors, *[r for r in results if r.is_floating_point()])
        return result

    @staticmethod
    def backward(ctx, *grads):
        saved = ctx.saved_tensors
        tensors, results = saved[:len(ctx.names)], saved[len(ctx.names):]
        inputs = {n: t.detach() for n, t in zip(ctx.names, tensors)}
        wrt = [n for n, need in zip(ctx.names, ctx.needs_input_grad[2:]) if need]
        outputs = [o for o, f in zip(ctx.tile_op._outputs, ctx.floats) if f]
        incoming = [g for g, f in zip(grads, ctx.floats) if f]
        results = dict(zip(outputs, results))
        result = ctx.tile_op._backward(inputs, wrt, outputs, incoming, results) if wrt and outputs else {}
        return (None, None, *[result.get(n) for n in ctx.names])


def op(source, device="llvm", name="<torch>", constants=()):
    """A TileOp for `source` on `device`; `constants` names the inputs whose
    contents do not change between calls (see the module's docstring)."""
    return TileOp(source, device=device, name=name, constants=constants)


class CompiledModule(torch.nn.Module):
    """A module compiled by Tilec (see the module's docstring)."""

    def __init__(self, module, example_inputs, device="llvm", opset=13):
        super().__init__()
        if not isinstance(module, torch.nn.Module):
            raise TypeError("tilec.torch.compile: give a torch.nn.Module")
        if module.training:
            raise RuntimeError("tilec.torch.compile: the module is in training mode; Tilec compiles inference "
                               "(call module.eval() first)")
        self.module = module
        self._device, self._opset = device, opset
        examples = example_inputs if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
        self._models = {}  # input shapes -> tilec.onnx.Model
        self._state = None
        self._model_for(tuple(examples))

    def _weights(self):
        return {k: (v.data_ptr(), v._version) for k, v in self.module.state_dict(keep_vars=True).items()}

    def _model_for(self, inputs):
        state = self._weights()
        if state != self._state:
            self._models.clear()  # the weights changed: every export is stale
            self._state = state
        key = tuple((tuple(t.shape), str(t.dtype)) for t in inputs)
        model = self._models.get(key)
        if model is None:
            buf = io.BytesIO()
            names = [f"input_{i}" for i in range(len(inputs))]
            # With gradients enabled, modules such as TransformerEncoderLayer
            # take their exportable path (their inference fast path is one
            # fused aten op that ONNX has no symbol for).
            with torch.enable_grad():
                torch.onnx.export(self.module, tuple(inputs), buf, opset_version=self._opset, input_names=names,
                                  do_constant_folding=True)
            model = tilec_onnx.load(buf.getvalue(), device=self._device, name=f"<{type(self.module).__name__}>")
            self._models[key] = model
        return model

    def forward(self, *inputs):
        for i, t in enumerate(inputs):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"tilec.torch.compile: input {i} is not a torch.Tensor")
            if t.device.type != "cpu":
                raise TypeError(f"tilec.torch.compile: input {i} is on {t.device}; only CPU tensors are supported")
            if t.requires_grad and torch.is_grad_enabled():
                raise RuntimeError(f"tilec.torch.compile: input {i} requires grad; the compiled module has no "
                                   "backward (use torch.no_grad())")
        inputs = tuple(t.detach().contiguous() for t in inputs)
        model = self._model_for(inputs)
        result = model(*inputs)
        if isinstance(result, tuple):
            return tuple(torch.from_numpy(np.asarray(r)) for r in result)
        return torch.from_numpy(np.asarray(result))


def compile(module, example_inputs, device="llvm"):
    """`module` (in eval mode) as one Tile program for inputs like `example_inputs`."""
    return CompiledModule(module, example_inputs, device=device)
