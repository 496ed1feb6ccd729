#!/usr/bin/env python3
"""Fits the tables of Tilec's inline f32 pow on 16-lane AVX-512 vectors (hal/llvm/inline_math.cc, PowByTable).

    /usr/bin/python3 hal/llvm/fit/fit_pow_table.py   # prints the C++ tables and the measured error

For normal x > 0, from the bits (OFF = 0x3F400000, 0.75):
  k = (bits(x) - OFF) >> 23,  m = x / 2^k in [0.75, 1.5),  i = ((bits(x) - OFF) >> 18) & 31
  r = m * c[i] - 1   (one FMA, exact: c[i] has so few significant bits that
                      m * c[i] - 1 fits in 24; the script checks every m)
  log2 m = T[i] + r * (C0H + C0L) + r^2 * Q(r),  T[i] = -log2 c[i] as two f32 (TH, TL)
Intervals 15 and 16 hold m = 1 and have c = 1, T = 0, so r = m - 1 there.
The sum TH + r * C0H is carried as an f32 pair (Fast2Sum: |TH| is at least
|r * C0H| wherever TH is not 0, checked below), as are y * k and y * log2 m,
so z = y * log2 x reaches 2^z with an error near 2^-28 while |y * log2 m| <= 8.
2^z = 2^(n/32) * 2^g, n = round(32 z), |g| <= 1/64: E[n mod 32] = 2^(j/32) as
two f32 (EH, EL), 2^g - 1 = g * X(g), and 2^(n div 32) by the exponent bits.
Q and X are fitted by Lawson's reweighted least squares (hal/llvm/fit/fit_erf.py's);
the script then evaluates the f32 steps and prints the largest error in
ULPs against pow in f64 rounded to f32.
"""
import math
import struct

import numpy as np

from fit_erf import F32, fma, horner, lawson, ulps

OFF = 0x3F400000
C0 = 1 / math.log(2)
C0H = float(F32(C0))
C0L = float(F32(C0 - C0H))
SHIFT = 1.5 * 2.0**18  # x + SHIFT rounds x to a multiple of 1/32 for |x| < 2^17
Q_DEGREE = 3
X_DEGREE = 2
# The tier's bound on |y * log2 m|: up to 16 the error stays below 0.7 ULP of
# the exact power (the script's last lines), at 32 it nears 1, at 96 2.3.
PRODUCT_LIMIT = 16


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def f32_of(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def interval(i):
    return f32_of(OFF + (i << 18)), f32_of(OFF + ((i + 1) << 18))


def all_m(i):
    bits = np.arange(OFF + (i << 18), OFF + ((i + 1) << 18), dtype=np.uint32)
    return bits.view(F32)


def exact_r(m, c):
    """Whether m * c - 1 is an f32 for every m (the FMA then rounds nothing)."""
    r = m.astype(np.float64) * c - 1.0
    return bool(np.all(r.astype(F32).astype(np.float64) == r))


def tables():
    c, th, tl, rmin, rmax = [], [], [], 0.0, 0.0
    for i in range(32):
        lo, hi = interval(i)
        m = all_m(i)
        if lo <= 1.0 < hi or hi == 1.0:
            ci = 1.0
        else:
            # Of the c whose r is exact (few significant bits), the one with the smallest |r|.
            best, widest = None, None
            for bits in range(3, 10):
                step = 2.0 ** (math.floor(math.log2(2 / (lo + hi))) - bits + 1)
                for d in (-1, 0, 1):
                    cand = round(2 / (lo + hi) / step + d) * step
                    w = max(abs(lo * cand - 1), abs(hi * cand - 1))
                    if (widest is None or w < widest) and exact_r(m, cand):
                        best, widest = cand, w
            assert best is not None, i
            ci = best
        assert exact_r(m, ci), i
        r = m.astype(np.float64) * ci - 1
        rmin, rmax = min(rmin, r.min()), max(rmax, r.max())
        t = -math.log2(ci)
        c.append(ci), th.append(float(F32(t))), tl.append(float(F32(t - float(F32(t)))))
        if th[-1] != 0.0:
            p = np.abs((r.astype(F32) * F32(C0H)).astype(F32))
            assert abs(th[-1]) >= p.max(), (i, th[-1], p.max())
        th[-1] = abs(th[-1]) if th[-1] == 0 else th[-1]
    return c, th, tl, rmin, rmax


def exp2_tables():
    hi = [float(F32(2 ** (j / 32))) for j in range(32)]
    return hi, [float(F32(2 ** (j / 32) - h)) for j, h in enumerate(hi)]


def fit_q(rmin, rmax):
    r = np.linspace(rmin, rmax, 8001)
    r = r[np.abs(r) > 1e-6]
    f = (np.log1p(r) / math.log(2) - C0 * r) / r**2
    design = np.vstack([r**k for k in range(Q_DEGREE + 1)]).T
    return lawson(design, f, lambda w: w * r**2 / np.abs(np.log1p(r) / math.log(2)))


def fit_x():
    g = np.linspace(-1 / 64 - 1e-4, 1 / 64 + 1e-4, 4001)
    g = g[np.abs(g) > 1e-7]
    f = np.expm1(g * math.log(2)) / g
    design = np.vstack([g**k for k in range(X_DEGREE + 1)]).T
    return lawson(design, f, lambda w: w * np.abs(g) / np.exp2(g))


def pow32(tab, q, xc, x, y):
    """The f32 steps inline_math.cc emits; returns the value and the lanes it holds for."""
    c, th, tl = (np.array(v, dtype=F32) for v in tab)
    ix = x.view(np.int32).astype(np.int64)
    t = ix - OFF
    k = (t >> 23).astype(F32)
    i = (t >> 18) & 31
    m = ((t & 0x7FFFFF) + OFF).astype(np.int32).view(F32)
    r = fma(m, c[i], F32(-1))
    p = (r * F32(C0H)).astype(F32)
    pe = fma(r, F32(C0H), -p)
    s = (th[i] + p).astype(F32)
    se = (p - (s - th[i]).astype(F32)).astype(F32)
    lo = fma(r, horner([C0L] + list(q), r), ((tl[i] + pe).astype(F32) + se).astype(F32))
    a = (y * k).astype(F32)
    ae = fma(y, k, -a)
    tt = (y * s).astype(F32)
    te = fma(y, lo, fma(y, s, -tt))
    zs = (a + (tt + te).astype(F32)).astype(F32)
    kd = (zs + F32(SHIFT)).astype(F32)
    nd = (kd - F32(SHIFT)).astype(F32)
    g = ((((a - nd).astype(F32) + tt).astype(F32)) + (te + ae).astype(F32)).astype(F32)
    e = (g * horner(xc, g)).astype(F32)
    kb = kd.view(np.int32).astype(np.int64)
    j = kb & 31
    eh, el = (np.array(v, dtype=F32) for v in exp2_tables())
    v = (eh[j] + fma(eh[j], e, el[j])).astype(F32)
    out = ((v.view(np.int32).astype(np.int64) + (((kb & ~31) << 18) & 0xFFFFFFFF)) & 0xFFFFFFFF)
    out = out.astype(np.uint32).view(F32)
    ok = (np.abs(tt) <= PRODUCT_LIMIT) & (np.abs(zs) <= 125)
    return out, ok


def main():
    c, th, tl, rmin, rmax = tables()
    q, qerr = fit_q(rmin, rmax)
    xc, xerr = fit_x()
    q = [float(F32(v)) for v in q]
    xc = [float(F32(v)) for v in xc]
    rng = np.random.default_rng(1)
    n = 400000
    xs = np.concatenate([rng.uniform(0.5, 4, n), np.exp2(rng.uniform(-60, 60, n)), rng.uniform(0.98, 1.02, n),
                         rng.uniform(1, 5, n)]).astype(F32)
    ys = np.concatenate([rng.uniform(-16, 16, n), rng.uniform(-2, 2, n), rng.uniform(-300, 300, n),
                         rng.normal(0, 1, n)]).astype(F32)
    got, ok = pow32((c, th, tl), q, xc, xs, ys)
    ref = np.power(xs.astype(np.float64), ys.astype(np.float64)).astype(F32)
    u = ulps(got[ok], ref[ok])
    w = int(u.argmax())
    exact = np.power(xs.astype(np.float64), ys.astype(np.float64))[ok]
    frac = np.abs(got[ok].astype(np.float64) - exact) / np.spacing(exact.astype(F32)).astype(np.float64)
    print(f"// r in [{rmin:.4f}, {rmax:.4f}]; fit of log2(1 + r): {qerr:.1e} relative; of 2^g: {xerr:.1e}")
    print(f"// f32 evaluation, {ok.sum()} of {len(xs)} inputs in the tier: max {u.max()} ULP "
          f"(pow({xs[ok][w]}, {ys[ok][w]})), mean {u.mean():.3f}; {frac.max():.2f} ULP from the exact power")
    for limit in (8, 16, 32, 96):
        xb = rng.uniform(0.5, 2, 2000000).astype(F32)
        yb = rng.uniform(-3000, 3000, 2000000).astype(F32)
        gb, _ = pow32((c, th, tl), q, xc, xb, yb)
        lm = np.abs(yb * np.log2(xb.astype(np.float64)))
        sel = (lm <= limit) & (lm > limit / 2) & (np.abs(yb * np.log2(xb.astype(np.float64))) <= 124)
        eb = np.power(xb.astype(np.float64), yb.astype(np.float64))[sel]
        fb = np.abs(gb[sel].astype(np.float64) - eb) / np.spacing(eb.astype(F32)).astype(np.float64)
        print(f"// |y * log2 m| in ({limit // 2}, {limit}]: max {fb.max():.2f} ULP from the exact power")
    print("constexpr float kPowC[] = {" + ", ".join(f"{v!r}f" for v in c) + "};")
    print("constexpr float kPowNegLog2C[] = {" + ", ".join(f"{v!r}f" for v in th) + "};")
    print("constexpr float kPowNegLog2CLow[] = {" + ", ".join(f"{v!r}f" for v in tl) + "};")
    print("constexpr float kPowLog2Q[] = {" + ", ".join(f"{v!r}f" for v in q) + "};")
    print("constexpr float kPowExp2G[] = {" + ", ".join(f"{v!r}f" for v in xc) + "};")
    hi, lo = exp2_tables()
    print("constexpr float kPowExp2J[] = {" + ", ".join(f"{v!r}f" for v in hi) + "};")
    print("constexpr float kPowExp2JLow[] = {" + ", ".join(f"{v!r}f" for v in lo) + "};")


if __name__ == "__main__":
    main()
