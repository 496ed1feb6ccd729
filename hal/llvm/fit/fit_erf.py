#!/usr/bin/env python3
"""Fits the coefficients of Tilec's inline f32 erf (hal/llvm/inline_math.cc).

    /usr/bin/python3 hal/llvm/fit/fit_erf.py      # prints the C++ tables and the measured error

erf(x) for f32 in two pieces, both polynomials (no division), chosen per lane:
  |x| <  1:  erf(x) = x * P(x^2)                 P of degree 6, fitted for relative error
  |x| >= 1:  erf(x) = 1 - C(min(|x|, 3.92) - m)  C of degree 12 fits erfc on [1, 3.92]
             for absolute error (m the interval's middle); from 3.92 on, erf rounds to 1
and erf(-x) = -erf(x). The fits are iteratively reweighted least squares
(Lawson's algorithm towards the minimax fit) in double against Python's
math.erf; the script then evaluates the f32 arithmetic the JIT emits (FMA
Horner steps, rounded to f32 at each step) on 500,000 inputs and prints the
largest error in ULPs against math.erf rounded to f32.
"""
import math

import numpy as np

F32 = np.float32
SPLIT = 1.0
XMAX = 3.92  # erfc(3.92) < 2^-25: erf rounds to 1 from here on
SMALL_DEGREE = 6
BIG_DEGREE = 12


def lawson(design, target, weight_of, iters=60):
    w = np.ones(len(target))
    for _ in range(iters):
        sw = weight_of(w)
        coef, *_ = np.linalg.lstsq(design * sw[:, None], target * sw, rcond=None)
        err = np.abs(design @ coef - target) * weight_of(np.ones(len(target)))
        w = w * (err / err.max()) ** 0.3 + 1e-12
        w /= w.max()
    return coef, err.max()


def fit_small():
    x = np.linspace(1e-4, SPLIT, 6000)
    t = x * x
    f = np.array([math.erf(v) / v for v in x])
    design = np.vstack([t**k for k in range(SMALL_DEGREE + 1)]).T
    return lawson(design, f, lambda w: w / f)  # relative error


def fit_big():
    x = np.linspace(SPLIT, XMAX, 6000)
    mid = (SPLIT + XMAX) / 2
    u = x - mid
    f = np.array([math.erfc(v) for v in x])
    design = np.vstack([u**k for k in range(BIG_DEGREE + 1)]).T
    coef, err = lawson(design, f, lambda w: w)  # absolute error
    return coef, err, mid


def fma(a, b, c):
    return (np.float64(a) * np.float64(b) + np.float64(c)).astype(F32)


def horner(cs, t):
    r = np.full_like(t, F32(cs[-1]))
    for c in cs[-2::-1]:
        r = fma(r, t, F32(c))
    return r


def erf32(p, c, mid, x):
    """The f32 steps inline_math.cc emits."""
    ax = np.abs(x)
    small = (ax * horner(p, (ax * ax).astype(F32))).astype(F32)
    u = (np.where(ax < F32(XMAX), ax, F32(XMAX)) - F32(mid)).astype(F32)
    big = (F32(1) - horner(c, u)).astype(F32)
    r = np.minimum(np.where(ax < F32(SPLIT), small, big), F32(1))
    return np.where(np.isnan(x), x, np.copysign(r, x)).astype(F32)


def ulps(a, b):
    def ordered(v):
        i = v.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(ordered(a) - ordered(b))


def main():
    p, small_err = fit_small()
    c, big_err, mid = fit_big()
    rng = np.random.default_rng(1)
    xs = np.concatenate([rng.uniform(-5, 5, 300000), rng.uniform(-1, 1, 100000),
                         10.0 ** rng.uniform(-38, 0, 50000), -(10.0 ** rng.uniform(-38, 0, 50000))]).astype(F32)
    ref = np.array([math.erf(float(v)) for v in xs], dtype=F32)
    u = ulps(erf32(p, c, mid, xs), ref)
    print(f"// fit: |x| < {SPLIT} relative {small_err:.1e}; |x| >= {SPLIT} absolute {big_err:.1e}")
    print(f"// f32 evaluation, {len(xs)} inputs: max {u.max()} ULP (at x = {xs[u.argmax()]}), mean {u.mean():.3f}")
    print("constexpr float kErfSmall[] = {" + ", ".join(f"{float(F32(v))!r}f" for v in p) + "};")
    print("constexpr float kErfcBig[] = {" + ", ".join(f"{float(F32(v))!r}f" for v in c) + "};")
    print(f"constexpr float kErfcBigMiddle = {float(F32(mid))!r}f;")


if __name__ == "__main__":
    main()
