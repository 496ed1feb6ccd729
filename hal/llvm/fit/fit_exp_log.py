#!/usr/bin/env python3
"""Fits the polynomials of Tilec's inline f32 exp and pow (hal/llvm/inline_math.cc).

    /usr/bin/python3 hal/llvm/fit/fit_exp_log.py   # prints the C++ tables and the measured error

  e^r = 1 + r * E(r),  |r| <= ln(2)/2   E of degree 5: exp's e^r after Cody-Waite
  2^f = 1 + f * X(f),  |f| <= 1/2       X of degree 5: pow's 2^f
  log2(m) = c0*s + s^3 * T(s^2),  s = (m - 1)/(m + 1),  m in [sqrt(1/2), sqrt(2)]
                                        T of degree 2: the tail of pow's f32 log2
The constant terms are exactly 1 (so e^0 = 2^0 = 1 and pow(2, 3) = 8 come out
exact) and c0 = 2/ln 2 is carried as two floats by the caller. Fits are
Lawson's reweighted least squares towards the minimax fit (hal/llvm/fit/fit_erf.py's) for
relative error, in double; the script then evaluates exp's f32 steps (Cody-Waite
and FMA Horner steps rounded to f32) on 400,000 inputs and prints the largest
error in ULPs against math.exp rounded to f32. pow's error is measured by
tests/unit/vector_math_test.cc on the JIT's own code.
"""
import math

import numpy as np

from fit_erf import F32, horner, lawson, ulps

DEGREE = 5       # E and X; with the constant 1 the polynomials are of degree 6
TAIL_DEGREE = 2  # T


def fit_one_plus(base, half):
    """b^v = 1 + v * P(v) on |v| <= half, for relative error of b^v."""
    v = np.linspace(-half, half, 6001)
    v = v[np.abs(v) > 1e-9]
    f = (base ** v - 1) / v
    design = np.vstack([v**k for k in range(DEGREE + 1)]).T
    # Relative error of 1 + v*P against b^v: |v| * err(P) / b^v.
    return lawson(design, f, lambda w: w * np.abs(v) / base ** v)


def fit_tail():
    s = np.linspace(1e-4, (math.sqrt(2) - 1) / (math.sqrt(2) + 1), 6000)
    c0 = 2 / math.log(2)
    log2m = np.log2((1 + s) / (1 - s))
    f = (log2m - c0 * s) / s**3
    w2 = s * s
    design = np.vstack([w2**k for k in range(TAIL_DEGREE + 1)]).T
    # Relative error of the whole log2 m: s^3 * err(T) / log2 m.
    return lawson(design, f, lambda w: w * s**3 / log2m)


def exp32(e, x):
    """InlineExp's f32 steps for |x| < 87."""
    n = np.rint((x * F32(1.4426950408889634)).astype(F32))
    r = (np.float64(n) * F32(-0.693145751953125) + x).astype(F32)
    r = (np.float64(n) * F32(-1.4286068203094172e-06) + r).astype(F32)
    p = (np.float64(horner(e, r)) * r + F32(1)).astype(F32)
    return (p * (2.0 ** n).astype(F32)).astype(F32)


def main():
    e, e_err = fit_one_plus(math.e, math.log(2) / 2)
    x, x_err = fit_one_plus(2.0, 0.5)
    t, t_err = fit_tail()
    rng = np.random.default_rng(1)
    xs = np.concatenate([rng.uniform(-86.9, 86.9, 300000), rng.uniform(-1, 1, 100000)]).astype(F32)
    ref = np.array([math.exp(float(v)) for v in xs], dtype=F32)
    u = ulps(exp32(e, xs), ref)
    print(f"// fits, relative: e^r {e_err:.1e}, 2^f {x_err:.1e}, log2 m (tail) {t_err:.1e}")
    print(f"// exp's f32 evaluation, {len(xs)} inputs: max {u.max()} ULP (at x = {xs[u.argmax()]}), "
          f"mean {u.mean():.3f}")
    for name, c in (("kExpR", e), ("kExp2F", x), ("kLog2Tail", t)):
        print(f"constexpr float {name}[] = {{" + ", ".join(f"{float(F32(v))!r}f" for v in c) + "};")


if __name__ == "__main__":
    main()
