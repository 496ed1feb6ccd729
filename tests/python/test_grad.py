"""tilec.grad (the gradient of a Tile program as a callable) and the backward
of tilec.torch.op: torch.autograd.gradcheck in f64 (central differences
against the Tile gradient, torch's default tolerances) on a convolution with
ReLU, a strided max pool, softmax and a concatenation; an integer output is
non-differentiable; only the inputs that need a gradient get one."""
import numpy as np
import torch

import tilec
import tilec.torch as tt

MATMUL = "function (A[M, L], B[L, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }"

# tilec.grad: matmul's gradient is the two products with the transposes.
rng = np.random.default_rng(0)
a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((3, 5), (5, 7), (3, 7)))
g = tilec.grad(MATMUL, wrt=["A", "B"])
ga, gb = g(A=a, B=b, C_grad=c)
np.testing.assert_allclose(ga, c @ b.T, rtol=1e-5, atol=1e-5)
np.testing.assert_allclose(gb, a.T @ c, rtol=1e-5, atol=1e-5)
assert g.compiled_count == 1
g(A=a, B=b, C_grad=c)
assert g.compiled_count == 1  # one signature, compiled once
text = tilec.grad(MATMUL, wrt=["B"]).source(A=a, B=b)
assert "-> (B_grad)" in text and "A_grad" not in text, text
assert tilec.gradient_source(MATMUL, {"A": ("float32", (3, 5)), "B": ("float32", (5, 7))}) == \
    tilec.grad(MATMUL).source(A=a, B=b)

# Unsupported statements are user errors with their location.
try:
    tilec.grad("function (X[N, M]) -> (O) {\n  O[i : N] = *(X[i, j]);\n}", name="prod.tile")(
        X=np.ones((2, 3), np.float32), O_grad=np.ones(2, np.float32))
    raise AssertionError("no error for a product aggregation")
except tilec.Error as e:
    assert e.kind == "user" and e.file == "prod.tile" and e.line == 2, (e.kind, e.file, e.line)
    assert "product aggregation" in e.message, e.message

# tilec.torch.op's backward against central differences, in f64.
CONV_RELU = """function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, co, ci]);
  R = (O > 0 ? O : 0);
}"""
MAXPOOL = """function (I[N, H, W]) -> (O) {
  O[n, x, y : N, (H + 1) / 2, (W + 1) / 2] = >(I[n, 2 * x + i - 1, 2 * y + j - 1]), i < 3, j < 3;
}"""
SOFTMAX = """function (X[N, D]) -> (Y) {
  M[i, 0 : N, 1] = >(X[i, j]);
  E = exp(X - M);
  S[i, 0 : N, 1] = +(E[i, j]);
  Y = E / S;
}"""
CONCAT = """function (A[N, P], B[N, Q]) -> (O) {
  T[i, j : N, P + Q] = =(A[i, j]);
  O[i, P + j : N, P + Q] = =(B[i, j]) default T;
}"""

def check(source, **shapes):
    op = tt.op(source)
    names = list(shapes)
    tensors = [torch.randn(*shapes[n], dtype=torch.float64, requires_grad=True) for n in names]
    fn = lambda *ts: op(**dict(zip(names, ts)))
    assert torch.autograd.gradcheck(fn, tensors), source

torch.manual_seed(0)
check(CONV_RELU, D=(1, 5, 7, 3), K=(3, 3, 4, 3))
check(MAXPOOL, I=(2, 5, 7))
check(SOFTMAX, X=(5, 7))
check(CONCAT, A=(5, 3), B=(5, 4))

# Against torch on the same model: conv + ReLU in f32.
op = tt.op(CONV_RELU)
d = torch.randn(2, 6, 5, 3, requires_grad=True)
k = torch.randn(3, 3, 4, 3, requires_grad=True)
(op(D=d, K=k) ** 2).sum().backward()
d2, k2 = d.detach().clone().requires_grad_(), k.detach().clone().requires_grad_()
ref = torch.relu(torch.nn.functional.conv2d(d2.permute(0, 3, 1, 2), k2.permute(2, 3, 0, 1), padding=1))
(ref.permute(0, 2, 3, 1) ** 2).sum().backward()
torch.testing.assert_close(d.grad, d2.grad, rtol=1e-4, atol=1e-4)
torch.testing.assert_close(k.grad, k2.grad, rtol=1e-4, atol=1e-4)
# The backward reads the forward's result R (the ReLU's mask is R != 0), so
# its gradient program runs no convolution forward: two contractions, the
# gradients of D and K.
(grad_fn, incoming, read), = op._compiled_gradients.values()
assert list(incoming) == ["R_grad"] and list(read) == ["R"], (incoming, read)
text = next(iter(op._gradients.values())).source(D=d, K=k)
assert text.count("= +(") == 2 and "R != 0" in text, text
# A result changed in place after the forward cannot be read by the backward:
# torch says so (a saved tensor's version moved).
r = op(D=d, K=k)
r.mul_(2)
try:
    r.sum().backward()
    raise AssertionError("the backward read a result changed in place")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), str(e)

# Only the inputs that need a gradient get one; an integer output is not differentiable.
op = tt.op("function (X[N], K[N]) -> (Y, B) { Y = X * K; B = X > 0; }")
x = torch.randn(5, requires_grad=True)
kk = torch.randn(5)
y, mask = op(X=x, K=kk)
assert not mask.requires_grad and mask.dtype == torch.bool
y.sum().backward()
torch.testing.assert_close(x.grad, kk)
assert kk.grad is None
assert list(op._gradients) == [(("X",), ("Y",))], list(op._gradients)
print("ok")
