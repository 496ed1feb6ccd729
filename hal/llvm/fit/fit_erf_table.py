#!/usr/bin/env python3
"""Fits the table of Tilec's inline f32 erf on 16-lane AVX-512 vectors (hal/llvm/inline_math.cc).

    /usr/bin/python3 hal/llvm/fit/fit_erf_table.py   # prints the C++ table and the measured error

erf(x) for f32 by one polynomial per interval of width 1/4 on [0, 4):
  y = 4 * min(|x|, 3.92),  i = floor(y),  u = y - i in [0, 1)   (all exact)
  erf(|x|) = c_0[i] + u * (c_1[i] + u * (... c_D[i]))            D = DEGREE
  erf(x) = copysign(min(that, 1), x)
Each coefficient is one 16-entry table, a zmm register: a lane's c_k[i] is one
vpermps. Interval 0 has c_0 = 0 and is fitted for relative error (erf(x)/x is
smooth), so tiny and subnormal x keep their accuracy; the others for
absolute error. From 3.92 on, erf rounds to 1 (hal/llvm/fit/fit_erf.py). Lawson's
reweighted least squares (hal/llvm/fit/fit_erf.py's) per interval; the script then
evaluates the f32 steps (FMA Horner steps rounded to f32) on 500,000 inputs
and prints the largest error in ULPs against math.erf rounded to f32.
"""
import math

import numpy as np

from fit_erf import F32, XMAX, fma, lawson, ulps

DEGREE = 5
INTERVALS = 16
SCALE = 4  # intervals per unit of x


def fit_interval(i):
    hi = min(1.0, XMAX * SCALE - i)
    u = np.linspace(0, hi, 3001)
    x = (i + u) / SCALE
    f = np.array([math.erf(v) for v in x])
    if i == 0:  # erf(x) = u * Q(u), relative error
        u, x, f = u[1:], x[1:], f[1:]
        design = np.vstack([u**k for k in range(1, DEGREE + 1)]).T
        coef, err = lawson(design, f, lambda w: w / f)
        return np.concatenate([[0.0], coef]), err
    design = np.vstack([u**k for k in range(DEGREE + 1)]).T
    return lawson(design, f, lambda w: w)


def erf32(table, x):
    """The f32 steps inline_math.cc emits on 16-lane vectors."""
    ax = np.abs(x)
    y = (np.where(ax < F32(XMAX), ax, F32(XMAX)) * F32(SCALE)).astype(F32)
    i = np.floor(y).astype(F32)
    u = (y - i).astype(F32)
    idx = i.astype(np.int64)
    r = table[DEGREE][idx].astype(F32)
    for k in range(DEGREE - 1, -1, -1):
        r = fma(r, u, table[k][idx])
    r = np.minimum(r, F32(1))
    return np.where(np.isnan(x), x, np.copysign(r, x)).astype(F32)


def main():
    fits = [fit_interval(i) for i in range(INTERVALS)]
    table = np.array([[F32(c[k]) for c, _ in fits] for k in range(DEGREE + 1)], dtype=F32)
    rng = np.random.default_rng(1)
    xs = np.concatenate([rng.uniform(-5, 5, 300000), rng.uniform(-1, 1, 100000),
                         10.0 ** rng.uniform(-38, 0, 50000), -(10.0 ** rng.uniform(-38, 0, 50000))]).astype(F32)
    ref = np.array([math.erf(float(v)) for v in xs], dtype=F32)
    u = ulps(erf32(table, xs), ref)
    print(f"// fit: interval 0 relative {fits[0][1]:.1e}, others absolute {max(e for _, e in fits[1:]):.1e}")
    print(f"// f32 evaluation, {len(xs)} inputs: max {u.max()} ULP (at x = {xs[u.argmax()]}), mean {u.mean():.3f}")
    print(f"constexpr float kErfTable[{DEGREE + 1}][{INTERVALS}] = {{")
    for k in range(DEGREE + 1):
        print("    {" + ", ".join(f"{float(v)!r}f" for v in table[k]) + "},")
    print("};")


if __name__ == "__main__":
    main()
