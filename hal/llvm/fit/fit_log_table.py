#!/usr/bin/env python3
"""Fits the tables of Tilec's inline f32 log on 16-lane AVX-512 vectors (hal/llvm/inline_math.cc).

    /usr/bin/python3 hal/llvm/fit/fit_log_table.py   # prints the C++ tables and the measured error

For normal x > 0, from the bits (OFF = 0x3F330000, about 0.699):
  k = (bits(x) - OFF) >> 23,  z = x / 2^k in [0.699, 1.398),  i = ((bits(x) - OFF) >> 19) & 15
  r = z * c[i] - 1   (one FMA: the product is exact inside it, r rounded once)
  log(x) = k * ln2 + L[i] + r + r^2 * P(r),   L[i] = -log(c[i])
Interval 9 holds z = 1 and has c = 1, L = 0, so r = z - 1 is exact there and x
near 1 keeps its relative accuracy. Every other c[i] is searched near
1/centre for an f32 whose log is within 2^-36 of an f32 (L[i]), so one
vpermps per table gives c and L with no low part. With |k| >= 1 the result is
at least 0.33 in magnitude, so k * ln2 is one FMA with ln 2 rounded to f32.
P is fitted by Lawson's reweighted least squares (hal/llvm/fit/fit_erf.py's) for the
relative error of log1p(r); the script then evaluates the f32 steps on
500,000 inputs and prints the largest error in ULPs against math.log
rounded to f32.
"""
import math
import struct

import numpy as np

from fit_erf import F32, fma, horner, lawson, ulps

OFF = 0x3F330000
DEGREE = 3  # P
SEARCH = 1 << 14  # f32 neighbours of 1/centre tried on each side


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def f32_of(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def tables():
    c, neg_log = [], []
    for i in range(16):
        lo, hi = f32_of(OFF + (i << 19)), f32_of(OFF + ((i + 1) << 19))
        if lo <= 1.0 < hi:
            c.append(1.0), neg_log.append(0.0)
            continue
        centre = f32_bits(float(F32(2.0 / (lo + hi))))
        best = min(range(centre - SEARCH, centre + SEARCH),
                   key=lambda b: abs(float(F32(-math.log(f32_of(b)))) + math.log(f32_of(b))))
        c.append(f32_of(best)), neg_log.append(float(F32(-math.log(f32_of(best)))))
    return c, neg_log


def r_range(c):
    r = []
    for i in range(16):
        lo, hi = f32_of(OFF + (i << 19)), f32_of(OFF + ((i + 1) << 19))
        r += [lo * c[i] - 1, hi * c[i] - 1]
    return min(r), max(r)


def fit_p(rmin, rmax):
    r = np.linspace(rmin, rmax, 6001)
    r = r[np.abs(r) > 1e-7]
    f = (np.log1p(r) - r) / r**2
    design = np.vstack([r**k for k in range(DEGREE + 1)]).T
    return lawson(design, f, lambda w: w * r**2 / np.abs(np.log1p(r)))


def log32(c, neg_log, p, x):
    """The f32 steps inline_math.cc emits."""
    ix = x.view(np.int32).astype(np.int64)
    t = ix - OFF
    k = (t >> 23).astype(F32)
    i = (t >> 19) & 15
    z = (ix - ((t >> 23) << 23)).astype(np.int32).view(F32)
    r = fma(z, np.array(c, dtype=F32)[i], F32(-1))
    q = fma((r * r).astype(F32), horner(p, r), r)
    s = (np.array(neg_log, dtype=F32)[i] + q).astype(F32)
    return fma(k, F32(math.log(2)), s)


def main():
    c, neg_log = tables()
    rmin, rmax = r_range(c)
    p, err = fit_p(rmin, rmax)
    worst_l = max(abs(l + math.log(ci)) for ci, l in zip(c, neg_log))
    rng = np.random.default_rng(1)
    xs = np.concatenate([np.exp(rng.uniform(-87, 88, 300000)), rng.uniform(0.9, 1.1, 100000),
                         rng.uniform(0.5, 2, 100000)]).astype(F32)
    ref = np.array([math.log(float(v)) for v in xs], dtype=F32)
    u = ulps(log32(c, neg_log, p, xs), ref)
    print(f"// r in [{rmin:.4f}, {rmax:.4f}]; fit of log1p(r), relative: {err:.1e}; "
          f"largest |L + log c|: {worst_l:.1e}")
    print(f"// f32 evaluation, {len(xs)} inputs: max {u.max()} ULP (at x = {xs[u.argmax()]}), mean {u.mean():.3f}")
    print("constexpr float kLogC[] = {" + ", ".join(f"{float(F32(v))!r}f" for v in c) + "};")
    print("constexpr float kLogNegLogC[] = {" + ", ".join(f"{float(F32(v))!r}f" for v in neg_log) + "};")
    print("constexpr float kLog1pP[] = {" + ", ".join(f"{float(F32(v))!r}f" for v in p) + "};")


if __name__ == "__main__":
    main()
