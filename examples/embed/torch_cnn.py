"""A small CNN whose every layer is a Tile program, run through tilec.torch,
against the same model built from PyTorch's own layers.

    PYTHONPATH=build/python /usr/bin/python3 examples/embed/torch_cnn.py --check
    PYTHONPATH=build/python /usr/bin/python3 examples/embed/torch_cnn.py --bench

Model (NCHW, float32): conv3x3(3->8)+ReLU, maxpool 2x2, conv3x3(8->16)+ReLU,
maxpool 2x2, flatten, linear(16*8*8 -> 10), softmax. --check exits 1 if the
outputs differ by more than 1e-4; --bench prints the median forward time of
both models (see bench/README.md).
"""
import argparse
import statistics
import sys
import time

import torch

import tilec.torch

CONV_RELU = """function (I[N, CI, H, W], K[CO, CI, KH, KW], B[CO, One, One]) -> (R) {
  O[n, co, x, y : N, CO, H, W] = +(I[n, ci, x + i - 1, y + j - 1] * K[co, ci, i, j]);
  R = relu(O + B);
}"""

MAXPOOL = """function (I[N, C, H, W]) -> (O) {
  O[n, c, x, y : N, C, H / 2, W / 2] = >(I[n, c, 2 * x + i, 2 * y + j]), i < 2, j < 2;
}"""

LINEAR_SOFTMAX = """function (X[N, K], W[M, K], B[M]) -> (Y) {
  P[n, m : N, M] = +(X[n, k] * W[m, k]);
  L = P + B;
  Mx[n, 0 : N, 1] = >(L[n, m]);
  E = exp(L - Mx);
  S[n, 0 : N, 1] = +(E[n, m]);
  Y = E / S;
}"""


class TorchCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.fc = torch.nn.Linear(16 * 8 * 8, 10)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
        return torch.softmax(self.fc(x.flatten(1)), dim=1)


class TileCNN(torch.nn.Module):
    """The same layers in Tile, sharing the weights of a TorchCNN."""

    def __init__(self, reference, device="llvm"):
        super().__init__()
        self.ref = reference
        self.conv = tilec.torch.op(CONV_RELU, device=device, name="conv_relu.tile")
        self.pool = tilec.torch.op(MAXPOOL, device=device, name="maxpool.tile")
        self.head = tilec.torch.op(LINEAR_SOFTMAX, device=device, name="linear_softmax.tile")

    def forward(self, x):
        r = self.ref
        x = self.pool(I=self.conv(I=x, K=r.conv1.weight, B=r.conv1.bias.view(-1, 1, 1)))
        x = self.pool(I=self.conv(I=x, K=r.conv2.weight, B=r.conv2.bias.view(-1, 1, 1)))
        return self.head(X=x.flatten(1), W=r.fc.weight, B=r.fc.bias)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--device", default="llvm")
    parser.add_argument("--batch", type=int, default=4)
    args = parser.parse_args()
    torch.manual_seed(0)
    reference = TorchCNN().eval()
    model = TileCNN(reference, args.device).eval()
    x = torch.randn(args.batch, 3, 32, 32)
    with torch.no_grad():
        want = reference(x)
        got = model(x)
        got_cl = model(x.to(memory_format=torch.channels_last))
    error = max((got - want).abs().max().item(), (got_cl - want).abs().max().item())
    print(f"Tile CNN vs PyTorch layers on {args.device}: max abs difference {error:.2e}")
    if args.check and not error <= 1e-4:
        sys.exit(1)
    if args.bench:
        with torch.no_grad():
            for name, m in (("pytorch eager", reference), ("tilec", model)):
                for _ in range(3):
                    m(x)
                times = []
                for _ in range(20):
                    t0 = time.perf_counter()
                    m(x)
                    times.append(time.perf_counter() - t0)
                print(f"{name}: median forward {statistics.median(times) * 1e3:.3f} ms (batch {args.batch})")


if __name__ == "__main__":
    main()
