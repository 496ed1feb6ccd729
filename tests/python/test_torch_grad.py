"""tilec.function has no backward: a torch tensor that requires grad while
autograd records is an error, on the slow path and on the fast path, with the
C++ reader and with torch's attributes; under torch.no_grad() it runs.
tilec.torch.op has one (a torch.autograd.Function; tests/python/test_grad.py
checks its gradients): the same call records and back-propagates. Usage:
test_torch_grad.py [attributes-only]"""
import sys
import numpy as np
import torch
import tilec
import tilec.torch as tt

hide = len(sys.argv) > 1 and sys.argv[1] == "attributes-only"
if hide:
    sys.modules["tilec._torch_fast"] = None  # the attribute reader
src = "function (X[N], K[N]) -> (Y) { Y = X * K; }"
f = tilec.function(src)
op = tt.op(src)
x = torch.randn(5)
k = torch.randn(5, requires_grad=True)
try:
    f(X=x, K=k)
    raise AssertionError("tilec.function ran on a tensor that requires grad")
except RuntimeError as e:
    assert "'K' requires grad" in str(e), str(e)
y = op(X=x, K=k)
assert y.grad_fn is not None, "tilec.torch.op recorded no backward"
y.sum().backward()
np.testing.assert_allclose(k.grad.numpy(), x.numpy(), rtol=1e-6)
with torch.no_grad():
    np.testing.assert_allclose(f(X=x, K=k), (x * k).numpy(), rtol=1e-6)
    np.testing.assert_allclose(op(X=x, K=k).numpy(), (x * k).numpy(), rtol=1e-6)
# The fast path (out= given, the same signature) after a call without grad:
# a tensor that requires grad still raises.
out = np.empty(5, np.float32)
kd = k.detach()
f(X=x, K=kd, out=out)
f(X=x, K=kd, out=out)
try:
    f(X=x, K=k, out=out)
    raise AssertionError("the fast path ran on a tensor that requires grad")
except RuntimeError as e:
    assert "'K' requires grad" in str(e), str(e)
print("ok", tilec._tilec._torch_reader())
