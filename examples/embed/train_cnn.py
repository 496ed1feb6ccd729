"""Training the small CNN of torch_cnn.py with Tile ops in forward and
backward (tilec.torch.op's backward runs gradients Tilec derives as Tile
programs), side by side with the same model in PyTorch's layers from the same
initial weights, on the same synthetic batches.

    PYTHONPATH=build/python /usr/bin/python3 examples/embed/train_cnn.py --steps 300
    PYTHONPATH=build/python /usr/bin/python3 examples/embed/train_cnn.py --steps 20 --check

The data: 32x32 RGB images of noise with a bright square in one of four
quadrants; the label is the quadrant (10 outputs, 4 used). SGD with momentum,
cross-entropy on the softmax output. Every --log steps it prints both
losses. --check exits 1 unless the two loss curves agree at every step
(|tilec - pytorch| <= 2% of pytorch's + 0.005: the models differ only in
f32 rounding, which training amplifies slowly; the first tens of steps agree
to about 1e-6) and the loss fell.
"""
import argparse
import copy
import sys

import torch

from torch_cnn import TileCNN, TorchCNN


def batch(generator, size):
    x = torch.randn(size, 3, 32, 32, generator=generator)
    labels = torch.randint(0, 4, (size,), generator=generator)
    for k, q in enumerate(labels.tolist()):
        r, c = divmod(q, 2)
        x[k, :, 16 * r + 4:16 * r + 12, 16 * c + 4:16 * c + 12] += 0.3
    return x, labels


def loss_of(probabilities, labels):
    return -torch.log(probabilities.gather(1, labels.view(-1, 1)) + 1e-9).mean()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.005)
    parser.add_argument("--log", type=int, default=20)
    parser.add_argument("--device", default="llvm")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()

    torch.manual_seed(0)
    reference = TorchCNN()
    weights = copy.deepcopy(reference)  # the Tile model's own parameters, equal at the start
    model = TileCNN(weights, args.device)
    opt_ref = torch.optim.SGD(reference.parameters(), lr=args.lr, momentum=0.9)
    opt_tile = torch.optim.SGD(weights.parameters(), lr=args.lr, momentum=0.9)
    data = torch.Generator().manual_seed(1)

    worst, first, last = 0.0, None, None
    for step in range(args.steps):
        x, labels = batch(data, args.batch)
        losses = []
        for m, opt in ((reference, opt_ref), (model, opt_tile)):
            opt.zero_grad()
            loss = loss_of(m(x), labels)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        worst = max(worst, abs(losses[1] - losses[0]) / (0.02 * abs(losses[0]) + 0.005))
        first = losses if first is None else first
        last = losses
        if step % args.log == 0 or step == args.steps - 1:
            print(f"step {step:4d}: loss pytorch {losses[0]:.6f}  tilec {losses[1]:.6f}")
    print(f"largest difference of the losses: {worst:.3f} of the tolerance")
    if args.check:
        if not worst <= 1:
            print("FAIL: the loss curves differ")
            sys.exit(1)
        if not last[1] < first[1]:
            print("FAIL: the loss did not fall")
            sys.exit(1)


if __name__ == "__main__":
    main()
