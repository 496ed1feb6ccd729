#!/usr/bin/env python3
"""Fits the polynomial of Tilec's inline f32 tanh (hal/llvm/inline_math.cc).

    /usr/bin/python3 hal/llvm/fit/fit_tanh.py   # prints the C++ table and the measured error

  tanh|x| = -m / (2 + m),  m = expm1(-2 t),  t = min(|x|, 9.1)
  expm1(z) = 2^n * e + (2^n - 1),  n = round(z / ln 2),  e = expm1(r),  r = z - n ln 2
  (ln 2 rounded to f32 in one FMA: |n| <= 26 keeps r within 5e-8, and 2^n scales
  that error down to below 0.05 ULP of tanh; r is computed negated, u = -r)
  expm1(r) = r + r^2 * M(r),  |r| <= ln(2)/2          M of degree DEGREE
The quotient has no cancellation anywhere (m is in (-1, 0], 2 + m in (1, 2]),
so tanh keeps expm1's relative accuracy down to the smallest x: there is no
second polynomial for small arguments and no select between two. Lawson's
reweighted least squares (hal/llvm/fit/fit_erf.py's) fits M for the relative error of
expm1(r); the script then evaluates the f32 steps (Cody-Waite, FMA Horner
steps, the division, each rounded to f32) on 500,000 inputs and prints the
largest error in ULPs against math.tanh rounded to f32. The JIT's own code is
measured by tests/unit/vector_math_test.cc.
"""
import math

import numpy as np

from fit_erf import F32, fma, horner, lawson, ulps

DEGREE = 4
CLAMP = 9.1  # tanh rounds to 1 in f32 from 9.01 on


def fit_m():
    half = math.log(2) / 2
    r = np.linspace(-half, half, 8001)
    r = r[np.abs(r) > 1e-6]
    f = (np.expm1(r) - r) / r**2
    design = np.vstack([r**k for k in range(DEGREE + 1)]).T
    # Relative error of r + r^2 M against expm1(r): r^2 * err(M) / |expm1(r)|.
    return lawson(design, f, lambda w: w * r**2 / np.abs(np.expm1(r)))


def tanh32(m, x):
    """InlineTanh's f32 steps."""
    t = np.minimum(np.abs(x), F32(CLAMP)).astype(F32)
    w = (t + t).astype(F32)  # 2t, exact
    k = np.rint((t * F32(2 / math.log(2))).astype(F32)).astype(F32)  # -n
    u = fma(k, F32(-math.log(2)), w)  # -r: one step, |n| <= 26
    mneg = [c if i % 2 == 0 else -c for i, c in enumerate(m)]  # M(r) = M'(-r)
    e = fma((u * u).astype(F32), horner(mneg, u), -u)
    p = (2.0 ** -k).astype(F32)
    em = fma(p, e, (p - F32(1)).astype(F32))
    d = fma(p, e, (p + F32(1)).astype(F32))  # 2 + m with one rounding
    q = (-em / d).astype(F32)
    return np.where(np.isnan(x), x, np.copysign(q, x)).astype(F32)


def main():
    m, err = fit_m()
    rng = np.random.default_rng(1)
    xs = np.concatenate([rng.uniform(-10, 10, 300000), rng.uniform(-1, 1, 100000),
                         rng.uniform(-0.01, 0.01, 50000),
                         np.exp(rng.uniform(-90, 0, 50000)) * rng.choice([-1, 1], 50000)]).astype(F32)
    ref = np.array([math.tanh(float(v)) for v in xs], dtype=F32)
    u = ulps(tanh32(m, xs), ref)
    print(f"// fit, relative: expm1(r) {err:.1e}")
    print(f"// tanh's f32 evaluation, {len(xs)} inputs: max {u.max()} ULP (at x = {xs[u.argmax()]}), "
          f"mean {u.mean():.3f}")
    print("constexpr float kTanhExpm1[] = {" + ", ".join(f"{float(F32(v))!r}f" for v in m) + "};")


if __name__ == "__main__":
    main()
