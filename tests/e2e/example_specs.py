"""Inputs and NumPy reference results for every program in examples/.

Each spec is a function `make(rng) -> (inputs, expected)` registered under the
example's file name (without `.tile`): `inputs` maps the Tile input names to
arrays (their shapes and dtypes are what the program is bound to), and
`expected` maps output names to the arrays NumPy computes for them. The
references are written from the mathematical definition of each operation,
not from the Tile text, so that a wrong Tile program is caught as well as a
wrong compiler. Sizes are small and deliberately odd (5, 7, 13, ...), so that
no tiling or vector width divides them evenly.

Tolerances: `Spec.tol` overrides the default (rtol, atol) per output dtype.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import numpy as np

Arrays = dict[str, np.ndarray]


@dataclasses.dataclass
class Spec:
    name: str
    make: Callable[[np.random.Generator], tuple[Arrays, Arrays]]
    # Optional per-spec tolerance override: (rtol, atol) for float outputs.
    tol: tuple[float, float] | None = None


SPECS: dict[str, Spec] = {}


def spec(name: str, tol: tuple[float, float] | None = None):
    def register(fn):
        if name in SPECS:
            raise ValueError(f"duplicate spec {name}")
        SPECS[name] = Spec(name, fn, tol)
        return fn

    return register


# ---------------------------------------------------------------------------
# Input generators.


def f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def i32(rng, *shape, lo=-8, hi=8):
    """Uniform integers in [lo, hi] (both ends included)."""
    return rng.integers(lo, hi + 1, shape, dtype=np.int32)


def as32(x):
    return np.asarray(x).astype(np.float32)


# ---------------------------------------------------------------------------
# Reference building blocks (computed in float64, rounded at the end).


def conv_nhwc(x, f, stride=(1, 1), dilation=(1, 1), pad=((0, 0), (0, 0))):
    """2-D convolution of NHWC data with an HWIO filter, as a sum over filter taps.

    `pad` zero-pads (before, after) each spatial axis; the output has
    floor((size - dilation * (k - 1) - 1) / stride) + 1 positions per axis.
    """
    x = np.pad(x.astype(np.float64), ((0, 0), pad[0], pad[1], (0, 0)))
    f = f.astype(np.float64)
    n, h, w, _ = x.shape
    kh, kw, _, co = f.shape
    oh = (h - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, oh, ow, co))
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dilation[0], j * dilation[1]
            patch = x[:, r0:r0 + stride[0] * (oh - 1) + 1:stride[0],
                      c0:c0 + stride[1] * (ow - 1) + 1:stride[1], :]
            out += np.einsum("nxyc,cd->nxyd", patch, f[i, j])
    return out


def conv3d_ndhwc(x, f):
    """Valid, stride-1 3-D convolution of N X Y Z CI data with a KX KY KZ CI CO filter."""
    x = x.astype(np.float64)
    f = f.astype(np.float64)
    n, sx, sy, sz, _ = x.shape
    kx, ky, kz, _, co = f.shape
    ox, oy, oz = sx - kx + 1, sy - ky + 1, sz - kz + 1
    out = np.zeros((n, ox, oy, oz, co))
    for i in range(kx):
        for j in range(ky):
            for k in range(kz):
                patch = x[:, i:i + ox, j:j + oy, k:k + oz, :]
                out += np.einsum("nxyzc,cd->nxyzd", patch, f[i, j, k])
    return out


def pool_nhwc(x, window, stride, pad, reduce):
    """Pooling over NHWC with `reduce` (np.maximum etc.) of the strided taps.

    Padding is filled with NaN and the reduction ignores it (fmax semantics),
    which is what "taps outside the input do not exist" means.
    """
    x = np.pad(x.astype(np.float64), ((0, 0), pad[0], pad[1], (0, 0)),
               constant_values=np.nan)
    n, h, w, c = x.shape
    oh = (h - window[0]) // stride[0] + 1
    ow = (w - window[1]) // stride[1] + 1
    out = None
    for i in range(window[0]):
        for j in range(window[1]):
            tap = x[:, i:i + stride[0] * (oh - 1) + 1:stride[0],
                    j:j + stride[1] * (ow - 1) + 1:stride[1], :]
            out = tap if out is None else reduce(out, tap)
    return out


def same_pad(size, window, stride):
    """TensorFlow "same" padding (before, after) and output size for one axis."""
    out = -(-size // stride)
    total = max(0, (out - 1) * stride + window - size)
    return (total // 2, total - total // 2), out


def trunc_div(a, b):
    """C integer division (truncates toward zero), with x / 0 defined as 0."""
    a = a.astype(np.int64)
    b = b.astype(np.int64)
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe) * np.sign(a) * np.sign(safe)
    return np.where(b == 0, 0, q)


def saturate(x, dtype):
    """Float -> integer conversion: truncate toward zero, clamp to the type's range, NaN -> 0."""
    info = np.iinfo(dtype)
    x = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf))
    return np.clip(x, info.min, info.max).astype(dtype)


def round_half_away(x):
    x = x.astype(np.float64)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def taus88(state, count):
    """PlaidML's prng_step: column t of the u32[3, 2048] state produces elements
    t, t + 2048, t + 4096, ... each after one taus88 step; value = float(s1^s2^s3) / 2^32."""
    lanes = state.shape[1]
    s1, s2, s3 = (state[r].astype(np.uint32).copy() for r in range(3))
    out = np.zeros(count, np.float32)
    u = np.uint32
    for base in range(0, count, lanes):
        n = min(lanes, count - base)
        a, b, c = s1[:n], s2[:n], s3[:n]
        a = ((a & u(0xFFFFFFFE)) << u(12)) ^ (((a << u(13)) ^ a) >> u(19))
        b = ((b & u(0xFFFFFFF8)) << u(4)) ^ (((b << u(2)) ^ b) >> u(25))
        c = ((c & u(0xFFFFFFF0)) << u(17)) ^ (((c << u(3)) ^ c) >> u(11))
        s1[:n], s2[:n], s3[:n] = a, b, c
        out[base:base + n] = (a ^ b ^ c).astype(np.float32) / np.float32(2.0**32)
    return out, np.stack([s1, s2, s3])


# ---------------------------------------------------------------------------
# Linear algebra.


@spec("matmul")
def _(rng):
    a, b = f32(rng, 5, 7), f32(rng, 7, 13)
    return {"A": a, "B": b}, {"C": as32(a.astype(np.float64) @ b)}


@spec("batched_matmul")
def _(rng):
    x, y = f32(rng, 3, 5, 7), f32(rng, 3, 7, 6)
    return {"X": x, "Y": y}, {"Z": as32(np.matmul(x.astype(np.float64), y))}


@spec("matmul_bias_relu")
def _(rng):
    a, w, bias = f32(rng, 5, 7), f32(rng, 7, 13), f32(rng, 13)
    return {"A": a, "W": w, "Bias": bias}, {
        "R": as32(np.maximum(a.astype(np.float64) @ w + bias, 0))}


@spec("outer_product")
def _(rng):
    a, b = f32(rng, 5), f32(rng, 7)
    return {"A": a, "B": b}, {"O": as32(np.outer(a.astype(np.float64), b))}


@spec("dot_product")
def _(rng):
    a, b = f32(rng, 13), f32(rng, 13)
    return {"A": a, "B": b}, {"O": as32(np.dot(a.astype(np.float64), b))}


@spec("trace")
def _(rng):
    i = f32(rng, 7, 7)
    return {"I": i}, {"T": as32(np.trace(i.astype(np.float64)))}


@spec("diagonal")
def _(rng):
    i = f32(rng, 7, 7)
    return {"I": i}, {"D": np.diagonal(i).copy()}


@spec("maxplus")
def _(rng):
    a, b = f32(rng, 5, 7), f32(rng, 7, 6)
    return {"A": a, "B": b}, {"C": (a[:, :, None] + b[None, :, :]).max(axis=1)}


# ---------------------------------------------------------------------------
# Convolutions.


@spec("conv1d")
def _(rng):
    i, w = f32(rng, 2, 13, 3), f32(rng, 3, 3, 4)
    # A 1-D convolution is a 2-D one over a height-1 image.
    o = conv_nhwc(i[:, None], w[None])[:, 0]
    return {"I": i, "W": w}, {"O": as32(o)}


@spec("conv2d_valid")
def _(rng):
    i, f = f32(rng, 2, 7, 9, 3), f32(rng, 3, 2, 3, 5)
    return {"I": i, "F": f}, {"O": as32(conv_nhwc(i, f))}


@spec("conv_relu")
def _(rng):
    d, k = f32(rng, 2, 7, 5, 3), f32(rng, 3, 3, 4, 3)
    # K is [I, J, CO, CI]; "same" padding of 1 for the 3x3 window, then ReLU.
    o = conv_nhwc(d, k.transpose(0, 1, 3, 2), pad=((1, 1), (1, 1)))
    return {"D": d, "K": k}, {"R": as32(np.maximum(o, 0))}


@spec("conv2d_stride2")
def _(rng):
    i, f = f32(rng, 2, 7, 8, 3), f32(rng, 3, 3, 3, 4)
    return {"I": i, "F": f}, {"O": as32(conv_nhwc(i, f, stride=(2, 2)))}


@spec("conv2d_dilation2")
def _(rng):
    i, f = f32(rng, 2, 9, 8, 3), f32(rng, 3, 2, 3, 4)
    return {"I": i, "F": f}, {"O": as32(conv_nhwc(i, f, dilation=(2, 2)))}


@spec("conv3d")
def _(rng):
    i, f = f32(rng, 2, 5, 6, 7, 2), f32(rng, 2, 3, 2, 2, 3)
    return {"I": i, "F": f}, {"O": as32(conv3d_ndhwc(i, f))}


@spec("depthwise_conv2d")
def _(rng):
    i, f = f32(rng, 2, 7, 6, 3), f32(rng, 3, 2, 3)
    x = i.astype(np.float64)
    oh, ow = 7 - 3 + 1, 6 - 2 + 1
    o = np.zeros((2, oh, ow, 3))
    for a in range(3):
        for b in range(2):
            o += x[:, a:a + oh, b:b + ow, :] * f[a, b]
    return {"I": i, "F": f}, {"O": as32(o)}


@spec("pointwise_conv")
def _(rng):
    i, f = f32(rng, 2, 5, 7, 3), f32(rng, 3, 4)
    return {"I": i, "F": f}, {"O": as32(np.einsum("nhwc,cd->nhwd", i.astype(np.float64), f))}


# ---------------------------------------------------------------------------
# Pooling.


@spec("maxpool_2x2")
def _(rng):
    i = f32(rng, 2, 7, 9, 3)
    return {"I": i}, {"O": as32(pool_nhwc(i, (2, 2), (2, 2), ((0, 0), (0, 0)), np.fmax))}


@spec("maxpool_3x3_same")
def _(rng):
    i = f32(rng, 2, 7, 8, 3)
    ph, oh = same_pad(7, 3, 2)
    pw, ow = same_pad(8, 3, 2)
    o = pool_nhwc(i, (3, 3), (2, 2), (ph, pw), np.fmax)
    assert o.shape == (2, oh, ow, 3)
    return {"I": i}, {"O": as32(o)}


@spec("avgpool_2x2")
def _(rng):
    i = f32(rng, 2, 7, 9, 3)
    return {"I": i}, {"O": as32(pool_nhwc(i, (2, 2), (2, 2), ((0, 0), (0, 0)), np.add) / 4)}


@spec("global_avg_pool")
def _(rng):
    i = f32(rng, 2, 5, 7, 3)
    return {"I": i}, {"O": as32(i.astype(np.float64).mean(axis=(1, 2)))}


# ---------------------------------------------------------------------------
# Normalisation and activations.


def softmax_ref(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@spec("softmax")
def _(rng):
    x = f32(rng, 5, 13, lo=-4, hi=4)
    return {"X": x}, {"Y": as32(softmax_ref(x))}


@spec("builtin_softmax")
def _(rng):
    x = f32(rng, 5, 13, lo=-4, hi=4)
    return {"X": x}, {"Y": as32(softmax_ref(x)), "L": as32(np.log(softmax_ref(x)))}


@spec("relu")
def _(rng):
    x = f32(rng, 3, 5, 7)
    return {"X": x}, {"Y": np.maximum(x, np.float32(0))}


@spec("sigmoid")
def _(rng):
    x = f32(rng, 5, 7, lo=-6, hi=6)
    return {"X": x}, {"Y": as32(1 / (1 + np.exp(-x.astype(np.float64))))}


@spec("tanh")
def _(rng):
    x = f32(rng, 5, 7, lo=-3, hi=3)
    return {"X": x}, {"Y": as32(np.tanh(x.astype(np.float64)))}


@spec("leaky_relu")
def _(rng):
    x = f32(rng, 5, 7)
    return {"X": x}, {"Y": as32(np.where(x < 0, 0.1 * x.astype(np.float64), x))}


@spec("batch_norm")
def _(rng):
    x = f32(rng, 2, 5, 7, 3)
    mean, var = f32(rng, 3), f32(rng, 3, lo=0.1, hi=2.0)
    gamma, beta = f32(rng, 3), f32(rng, 3)
    y = (x.astype(np.float64) - mean) / np.sqrt(var.astype(np.float64) + 0.001) * gamma + beta
    return {"X": x, "Mean": mean, "Var": var, "Gamma": gamma, "Beta": beta}, {"Y": as32(y)}


@spec("layer_norm")
def _(rng):
    x, gamma, beta = f32(rng, 5, 13, lo=-2, hi=3), f32(rng, 13), f32(rng, 13)
    xd = x.astype(np.float64)
    y = (xd - xd.mean(axis=1, keepdims=True)) / np.sqrt(xd.var(axis=1, keepdims=True) + 1e-5)
    return {"X": x, "Gamma": gamma, "Beta": beta}, {"Y": as32(y * gamma + beta)}


@spec("binary_crossentropy")
def _(rng):
    p = f32(rng, 13, lo=0.05, hi=0.95)
    t = rng.integers(0, 2, 13).astype(np.float32)
    pd = p.astype(np.float64)
    e = -t * np.log(pd) - (1 - t) * np.log(1 - pd)
    return {"P": p, "T": t}, {"L": as32(e.mean())}


# ---------------------------------------------------------------------------
# Reductions.


@spec("sum_axis")
def _(rng):
    x = f32(rng, 5, 7, 3)
    return {"X": x}, {"O": as32(x.astype(np.float64).sum(axis=1))}


@spec("mean_axes")
def _(rng):
    x = f32(rng, 5, 7, 3)
    return {"X": x}, {"M": as32(x.astype(np.float64).mean(axis=(0, 2)))}


@spec("max_axis")
def _(rng):
    x = f32(rng, 13, 7)
    return {"X": x}, {"O": x.max(axis=1)}


@spec("min_axis")
def _(rng):
    x = f32(rng, 13, 7)
    return {"X": x}, {"O": x.min(axis=0)}


@spec("prod_reduce")
def _(rng):
    x = f32(rng, 5, 13, lo=0.5, hi=1.5)
    return {"X": x}, {"O": as32(x.astype(np.float64).prod(axis=1))}


@spec("argmax")
def _(rng):
    x = f32(rng, 13, 7)
    return {"X": x}, {"AM": np.argmax(x, axis=1).astype(np.int32)}


@spec("cumsum")
def _(rng):
    i = f32(rng, 5, 13)
    c = as32(np.cumsum(i.astype(np.float64), axis=1))
    return {"I": i}, {"O": c, "P": c}


@spec("cumprod")
def _(rng):
    i = f32(rng, 13, lo=0.5, hi=1.5)
    return {"I": i}, {"O": as32(np.cumprod(i.astype(np.float64)))}


@spec("variable_input")
def _(rng):
    i = f32(rng, 3, 5, 7)
    return {"I": i}, {"O": np.asarray(i.min())}


@spec("interleave_max")
def _(rng):
    # All values negative, so an unreached slot left at the max's identity
    # (or at any row maximum) is told apart from the required 0.
    i = f32(rng, 5, 7, lo=-2, hi=-1)
    o = np.zeros(10, np.float32)
    o[0::2] = i.max(axis=1)
    return {"I": i}, {"O": o}


# ---------------------------------------------------------------------------
# Data movement.


@spec("transpose")
def _(rng):
    i = f32(rng, 5, 7)
    return {"I": i}, {"O": i.T.copy()}


@spec("concat")
def _(rng):
    a, b = f32(rng, 5, 3), f32(rng, 5, 7)
    return {"A": a, "B": b}, {"O": np.concatenate([a, b], axis=1)}


@spec("slice")
def _(rng):
    i = f32(rng, 13, 7)
    return {"I": i}, {"O": i[1::2, 2:-1].copy()}


@spec("subsample")
def _(rng):
    i = f32(rng, 13, 5)
    return {"I": i}, {"O": i[::2].copy()}


@spec("zero_pad")
def _(rng):
    i = f32(rng, 5, 7)
    return {"I": i}, {"O": np.pad(i, ((1, 1), (2, 2)))}


@spec("pad_to_multiple")
def _(rng):
    i = f32(rng, 13)
    return {"I": i}, {"O": np.pad(i, (0, 3))}


@spec("reverse")
def _(rng):
    i = f32(rng, 5, 7)
    return {"I": i}, {"R0": i[::-1].copy(), "R1": i[:, ::-1].copy()}


@spec("gather")
def _(rng):
    d = f32(rng, 7, 5)
    idx = i32(rng, 4, 3, lo=0, hi=6)
    idx[0, 0], idx[3, 2] = -3, 11  # out of range: clamped to the first / last row
    return {"D": d, "Idx": idx}, {"O": d[np.clip(idx, 0, 6)]}


@spec("scatter")
def _(rng):
    e = f32(rng, 13, 3)
    idx = i32(rng, 13, lo=0, hi=6)
    idx[2], idx[5] = -1, 9  # out of range: clamped to the first / last row
    o = np.zeros((7, 3))
    np.add.at(o, np.clip(idx, 0, 6), e.astype(np.float64))
    return {"E": e, "Idx": idx, "V": np.zeros(7, np.float32)}, {"O": as32(o)}


@spec("one_hot")
def _(rng):
    idx = i32(rng, 13, lo=-1, hi=5)  # -1 and 5 are not classes: all-false rows
    return {"Idx": idx, "Depth": np.zeros(5, np.float32)}, {
        "O": idx[:, None] == np.arange(5)[None, :]}


@spec("upsample_nearest")
def _(rng):
    i = f32(rng, 5, 7)
    return {"I": i}, {"O": np.repeat(np.repeat(i, 2, axis=0), 2, axis=1)}


@spec("upsample_zero_insert")
def _(rng):
    i = f32(rng, 5, 7)
    o = np.zeros((10, 7), np.float32)
    o[0::2] = i
    return {"I": i}, {"O": o}


@spec("repeat")
def _(rng):
    i = f32(rng, 2, 5, 3)
    return {"I": i}, {"O": np.repeat(i, 3, axis=1)}


@spec("reshape")
def _(rng):
    i = f32(rng, 5, 7, 3)
    return {"I": i}, {"O": i.reshape(35, 3), "F": i.reshape(105)}


@spec("shape")
def _(rng):
    i = f32(rng, 5, 7, 3)
    return {"I": i}, {"S": np.array([5, 7, 3], np.int32)}


@spec("index_tril")
def _(rng):
    i = f32(rng, 5, 7)
    rows, cols = np.indices((5, 7), dtype=np.int32)
    return {"I": i}, {"G": rows * 100 + cols, "L": np.tril(i)}


# ---------------------------------------------------------------------------
# Elementwise expressions, broadcasting and types.


@spec("bias_broadcast")
def _(rng):
    x, bias, s = f32(rng, 2, 5, 7, 3), f32(rng, 3), f32(rng, 7, 1)
    return {"X": x, "Bias": bias, "S": s}, {"Y": x + bias, "Z": x * s}


@spec("axpy")
def _(rng):
    alpha, x, y = np.asarray(np.float32(1.75)), f32(rng, 13), f32(rng, 13)
    return {"Alpha": alpha, "X": x, "Y": y}, {"Z": as32(1.75 * x.astype(np.float64) + y)}


@spec("select")
def _(rng):
    f = rng.random((5, 7)) < 0.5
    a, b = f32(rng, 5, 7), f32(rng, 5, 7)
    return {"F": f, "A": a, "B": b}, {"O": np.where(f, a, b)}


@spec("attributes_escapes")
def _(rng):
    a, b = f32(rng, 13), f32(rng, 13)
    return {"lower": a, "B": b}, {"R": as32(a.astype(np.float64) * b * 0.25)}


@spec("int_arith")
def _(rng):
    a = i32(rng, 13, lo=-100, hi=100)
    b = i32(rng, 13, lo=-5, hi=5)
    b[3], b[7] = 0, 0  # integer division by zero gives 0
    a[4], b[4] = -7, 2  # -7 / 2 == -3 (truncation, not floor)
    d = i32(rng, 13, lo=1, hi=7) * np.where(rng.random(13) < 0.5, -1, 1).astype(np.int32)
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    return {"A": a, "B": b, "D": d}, {
        "Q": trunc_div(a, b).astype(np.int32),
        "R": np.fmod(a, d).astype(np.int32),  # C remainder: sign of the dividend
        "S": ((a & 255) << 3).astype(np.int32),
        "T": ((a & 1023) >> 2).astype(np.int32),
        "U": ((~a & 15) | b).astype(np.int32),
        "V": (a64 * b64 - 3).astype(np.int32),
    }


@spec("compare")
def _(rng):
    a, b = i32(rng, 5, 7, lo=-3, hi=3), i32(rng, 7, lo=-3, hi=3)
    return {"A": a, "B": b}, {
        "GT": a > b, "LT": a < b, "GE": a >= b, "LE": a <= b, "EQ": a == b, "NE": a != b}


@spec("logical_ops")
def _(rng):
    a, b = i32(rng, 13, lo=-2, hi=2), i32(rng, 13, lo=-2, hi=2)
    return {"A": a, "B": b}, {"L": ((a > 0) & ~(b > 0)) | (a == b), "Z": a == 0}


@spec("precedence")
def _(rng):
    a, b = i32(rng, 13, lo=-20, hi=20), i32(rng, 13, lo=-20, hi=20)
    a[0], b[0] = 12, 5  # C's grouping of | and ^ would give 13 here, Tile's gives 1
    first = np.where(a > 0, b, a)
    return {"A": a, "B": b}, {
        "X": ((a & 12) | b) ^ a,
        "C": np.where(first != 0, a, b).astype(np.int32),
        "S": ((-a * 2 + 3) & 126).astype(np.int32),
    }


@spec("f16_ops", tol=(1e-2, 1e-2))
def _(rng):
    a, b = f32(rng, 5, 7).astype(np.float16), f32(rng, 7).astype(np.float16)
    ad = a.astype(np.float64)
    return {"A": a, "B": b}, {
        "C": (ad * b + 0.5).astype(np.float16),
        "R": ad.sum(axis=1).astype(np.float16),
    }


@spec("f64_ops", tol=(1e-12, 1e-13))
def _(rng):
    a, b = rng.uniform(-1, 1, 13), rng.uniform(-1, 1, 13)
    return {"A": a, "B": b}, {"C": a * 0.1 + np.exp(b), "D": np.asarray(np.dot(a, b))}


@spec("math_fns")
def _(rng):
    x = f32(rng, 13)
    p = f32(rng, 13, lo=0.1, hi=3.0)
    xd, pd = x.astype(np.float64), p.astype(np.float64)
    outs = {
        "E": np.exp(xd), "L": np.log(pd), "Sq": np.sqrt(pd), "Pw": np.power(pd, xd),
        "Th": np.tanh(xd), "Sn": np.sin(xd), "Cs": np.cos(xd), "Tn": np.tan(xd),
        "Sh": np.sinh(xd), "Ch": np.cosh(xd), "As": np.arcsin(xd), "Ac": np.arccos(xd),
        "At": np.arctan(xd), "Ef": np.vectorize(math.erf)(xd),
    }
    return {"X": x, "P": p}, {k: as32(v) for k, v in outs.items()}


@spec("rounding")
def _(rng):
    halves = np.array([2.5, -2.5, 0.5, -0.5, 1.5, -1.5, 0.25, -0.75], np.float32)
    x = np.concatenate([halves, f32(rng, 7, lo=-4, hi=4)])
    y = f32(rng, 15, lo=-4, hi=4)
    return {"X": x, "Y": y}, {
        "Ab": np.abs(x), "Fl": np.floor(x), "Ce": np.ceil(x),
        "Rd": as32(round_half_away(x)), "Mn": np.minimum(x, y),
        "Mx": np.maximum(x, np.float32(0.25)),
    }


@spec("casts")
def _(rng):
    special = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, 300.7, -300.7, 127.9, 128.5,
                        -128.9, -129.5, 255.9, 256.1, -0.9, 0.9, -2.5, 2.5, 0.0], np.float32)
    x = np.concatenate([special, f32(rng, 13, lo=-400, hi=400)])
    k = i32(rng, x.size, lo=-3, hi=3)
    return {"X": x, "K": k}, {
        "I32": saturate(x, np.int32), "I8": saturate(x, np.int8), "U8": saturate(x, np.uint8),
        "I64": k.astype(np.int64), "F32": k.astype(np.float32), "F64": x.astype(np.float64),
        "B": k != 0,
    }


@spec("prng")
def _(rng):
    state = rng.integers(16, 2**32, (3, 2048), dtype=np.uint32)
    value, new_state = taus88(state, 45 * 50)  # 2250 > 2048: some lanes step twice
    return {"S": state}, {"V": value.reshape(45, 50), "NS": new_state}
