"""sin, cos, tan (with a large-argument reduction table) and atan, asin, acos, atan2 for
vecmath.py, float32 and float64, branch-free so that loops calling them vectorize."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from . import vector_isa
from .vecmath_core import as_int, fma, horner, inline

# --- sin, cos, tan --------------------------------------------------------------------------
# Both types reduce in float64: |x| = (q + y) pi/2 with q an integer (only q mod 4 matters)
# and |y| <= 1/2, then r = y pi/2 in [-pi/4, pi/4] goes to the sin and cos polynomials.
#
# Large arguments (Payne-Hanek, without branches): write |x| = M 2^s with M an integer of at
# most 24 (float32) or 53 (float64) bits. Then |x| 2/pi mod 4 = M G_s mod 4 with
# G_s = (2^s 2/pi) mod 4, because M times a multiple of 4 is a multiple of 4. G_s depends
# only on the exponent, so a table indexed by the exponent bits holds it, cut into chunks
# (from the exact bits of 2/pi computed below with integers); each chunk times M is exact
# (float32: a 24-bit M times chunks of at most 29 bits) or split exactly by an FMA (float64),
# and the integer parts of the partial products are dropped (modulo 4) as soon as they
# appear, so the fraction keeps every bit it needs: the float64 closest to a multiple of
# pi/2 leaves about 2^-61 of it, the float32 one about 2^-30.


def _two_over_pi_bits(bits: int) -> int:
    """floor(2/pi * 2^bits), from Machin's pi = 16 atan(1/5) - 4 atan(1/239) in integers."""
    prec = bits + 64

    def atan_inv(n):  # atan(1/n) 2^prec, by its alternating series
        total, term, k, sign = 0, (1 << prec) // n, 1, 1
        while term:
            total += sign * (term // k)
            term //= n * n
            k, sign = k + 2, -sign
        return total
    pi = 16 * atan_inv(5) - 4 * atan_inv(239)
    return (1 << (prec + bits + 1)) // pi


def _chunks(s_values, cuts, rest):
    """Per exponent s: G_s = (2^s 2/pi) mod 4 as exact float64 chunks of `cuts` bits each,
    from weight 2^1 down; with `rest`, one more: everything below them, rounded to 53
    significant bits (so tiny G_s keep their precision)."""
    B, W = 1400, 400  # 2/pi to 2^-1400; G_s kept to weight 2^-400
    g = _two_over_pi_bits(B)
    rows = []
    for s in s_values:
        v = (g >> (B - s - W)) % (1 << (W + 2))  # G_s 2^W: bits of weight 2^1 .. 2^-W
        row, top = [], W + 2
        for n in cuts:
            top -= n
            row.append(float((v >> top) % (1 << n)) * 2.0 ** (top - W))
        if rest:
            row.append((v % (1 << top)) / (1 << W))  # int / int: correctly rounded
        rows.append(row)
    return np.array(rows).T.copy()


# float32: s = max(e, 1) - 150 for exponent bits e; chunks of 29 and 26 bits and the rest
_TRIG32 = _chunks([max(e, 1) - 150 for e in range(256)], (29, 26), rest=True)
_T32_0, _T32_1, _T32_2 = _TRIG32[0], _TRIG32[1], _TRIG32[2]
# float64: s = max(e, 1) - 1075; four chunks of 53 bits
_TRIG64 = _chunks([max(e, 1) - 1075 for e in range(2048)], (53, 53, 53, 53), rest=False)
_T64_0, _T64_1, _T64_2, _T64_3 = _TRIG64[0], _TRIG64[1], _TRIG64[2], _TRIG64[3]
_PIO2_1 = np.float64(1.5707963267948966)  # pi/2 = _PIO2_1 + _PIO2_2 + _PIO2_3 (+2^-160)
_PIO2_2 = np.float64(6.123233995736766e-17)
_PIO2_3 = np.float64(-1.4973849048591698e-33)
_TWO_OVER_PI = np.float64(0.6366197723675814)
_CW_LIMIT = np.float64(2.0 ** 30)  # below it, Cody-Waite: n exact, n pi/2 to 160 bits


@inline
def _two_sum(a, b):
    """(s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth; any magnitudes)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@inline
def _mod4(j):
    """j mod 4 for an integral float (exact: a power-of-two scaling and a floor)."""
    return j - 4.0 * np.floor(j * 0.25)


@inline
def _cody_waite(a):
    """(r_hi, r_lo, q) for 0 <= a < 2^40 (float64): n = rint(a 2/pi) is exact, a - n C1 is
    exact (both multiples of C1's last bit, the result below 1; a itself for n = 0), n C2 is
    split exactly by an FMA and n C3 rounded far below the result; pi/2 - C1 - C2 - C3 is
    2^-160, so n times it stays below the float64 closest approach to a multiple of pi/2
    (float64 uses it below 2^30, float32 below 2^40: near 2^52 the rounded
    product a 2/pi may round n the wrong way)."""
    n = np.rint(a * _TWO_OVER_PI)
    r1 = fma(n, -_PIO2_1, a)
    p = n * _PIO2_2
    hi, lo = _two_sum(r1, -p)
    lo = (lo - fma(n, _PIO2_2, -p)) - n * _PIO2_3
    r = hi + lo
    return r, lo - (r - hi), np.int64(_mod4(n))


_F32_PIO2 = tuple(np.float32(v) for v in (1.5707963705062866, -4.371138828673793e-08,
                                            -1.7151245100058819e-15))  # 3 x 24 bits
_F32_CW_LIMIT = np.float32(2.0 ** 16)


@inline
def reduce_f32(x):
    """(r, 0, q) with |x| = q pi/2 + r, |r| <= pi/4 (float32), q mod 4.

    Below 2^16 Cody-Waite in float32 (16 lanes per AVX-512 vector): pi/2 in three 24-bit
    pieces; |x| - n C1 is exact (multiples of C1's last bit, the result below 1), the two
    other FMAs round relative to the result, and n (pi/2 - C1 - C2 - C3) < 2^16 2^-73 stays
    far below the closest approach of a float32 to a multiple of pi/2 there.

    Above, the table in float64: M c0 < 2^26 is a multiple of 2^-27: exact; its fraction
    f0 plus M c1 (< 2^-3, a multiple of 2^-53) fits 53 bits: exact; M c2 < 2^-29 is rounded
    at 2^-82. Every lane computes both (the table loads are masked gathers, the price of
    being right for every float32)."""
    a = abs(x)
    n = np.rint(a * np.float32(0.63661975))
    r = fma(n, -_F32_PIO2[0], a)
    r = fma(n, -_F32_PIO2[1], r)
    r = fma(n, -_F32_PIO2[2], r)
    big = a >= _F32_CW_LIMIT
    ph_q, y = _payne_hanek_f32(a, big)
    r = np.float32(y * _PIO2_1) if big else r
    return r, np.float32(0), (np.int64(ph_q) if big else np.int64(n)) & 3


@inline
def _payne_hanek_f32(a, big):
    """(q, y) with |a| 2/pi = q + y (mod 4), q integral (a float), |y| <= 1/2 (float64), for
    the lanes where `big` holds (the table loads are masked; 0 elsewhere): reduce_f32's
    large-argument half."""
    ix = as_int(a)
    e = np.uint32(ix >> 23)
    m = np.float64((ix & np.int32(0x7FFFFF)) | np.int32(0x800000))
    c0 = _T32_0[e] if big else 0.0
    c1 = _T32_1[e] if big else 0.0
    c2 = _T32_2[e] if big else 0.0
    p0 = m * c0
    j0 = np.rint(p0)
    s1 = fma(m, c1, p0 - j0)
    j1 = np.rint(s1)
    return _mod4(j0) + j1, fma(m, c2, s1 - j1)


@inline
def reduce_f64(x):
    """(r_hi, r_lo, q) with |x| = q pi/2 + r_hi + r_lo, |r_hi| <= pi/4 (about 2^-106
    relative), q mod 4. Below 2^30 Cody-Waite: n = rint(|x| 2/pi), |x| - n C1 exact (both
    multiples of C1's last bit, result below 1), n C2 split exactly by an FMA and n C3
    rounded far below the result. Above, the table (4 chunks of G_s, every product split
    exactly, the fraction accumulated as a double-double). Both run; a select keeps one."""
    a = abs(x)
    cw_hi, cw_lo, cw_q = _cody_waite(a)
    # Payne-Hanek: y = M (g0 + g1 + g2 + g3) mod 4, in units of pi/2 (masked table loads)
    big = a >= _CW_LIMIT
    ix = as_int(a)
    e = np.uint64(ix >> 52)
    m = np.float64((ix & np.int64(0xFFFFFFFFFFFFF)) | np.int64(0x10000000000000))
    g0 = _T64_0[e] if big else 0.0
    g1 = _T64_1[e] if big else 0.0
    g2 = _T64_2[e] if big else 0.0
    g3 = _T64_3[e] if big else 0.0
    p0 = m * g0
    e0 = fma(m, g0, -p0)
    j0, je = np.rint(p0), np.rint(e0)
    p1 = m * g1
    e1 = fma(m, g1, -p1)
    j1 = np.rint(p1)
    h, l = _two_sum((p0 - j0) + (e0 - je), p1 - j1)  # the first sum: multiples of 2^-51
    jh = np.rint(h)
    h, t = _two_sum(h - jh, e1)
    l = l + t
    p2 = m * g2
    h, t = _two_sum(h, p2)
    l = l + t + (fma(m, g2, -p2) + m * g3)
    y = h + l
    l = l - (y - h)
    jy = np.rint(y)
    y = y - jy
    ph_q = np.int64(_mod4(j0) + _mod4(je) + j1 + jh + jy)
    ph_hi = y * _PIO2_1
    ph_lo = fma(y, _PIO2_1, -ph_hi) + (y * _PIO2_2 + l * _PIO2_1)
    return (ph_hi if big else cw_hi), (ph_lo if big else cw_lo), (ph_q if big else cw_q) & 3


@inline
def reduce_f32_fast(x):
    """reduce_f32 for |x| < 2^16 only (no table): what kernels run on blocks without a
    larger argument (see trig_big_f32)."""
    a = abs(x)
    n = np.rint(a * np.float32(0.63661975))
    r = fma(n, -_F32_PIO2[0], a)
    r = fma(n, -_F32_PIO2[1], r)
    r = fma(n, -_F32_PIO2[2], r)
    return r, np.float32(0), np.int32(n) & np.int32(3)


@inline
def reduce_f64_fast(x):
    """reduce_f64 for |x| < 2^30 only (Cody-Waite, no table)."""
    r, l, q = _cody_waite(abs(x))
    return r, l, q & 3


@inline
def trig_big_f32(x):
    """Whether sin/cos/tan of x need the table (|x| >= 2^16; inf too; NaN not)."""
    return abs(x) >= _F32_CW_LIMIT


@inline
def trig_big_f64(x):
    return abs(x) >= _CW_LIMIT


def _make_trig(F, S, C, reduce, TP=None, TQ=None):
    """sin/cos/tan from a reduction giving (r_hi, r_lo, q) in F; S and C are the tails of
    sin and cos on [-pi/4, pi/4] (fitted; float32's shorter); TP and TQ, where given, those
    of tan's rational form (tan r = r + r z P(z) / Q(z), z = r^2), else tan is sin / cos."""
    ONE, HALF, INF = F(1), F(0.5), F(np.inf)
    S, C = tuple(F(v) for v in S), tuple(F(v) for v in C)

    @inline
    def sin_cos(x):
        """(sin |x|, cos |x|) before the quadrant: sin(r + l) = r + (r^3 S(r^2) + l (1 -
        r^2/2)), cos(r + l) = 1 - r^2/2 + (r^4 C(r^2) - r l), 1 - r^2/2 summed fdlibm's way
        (w = 1 - r^2/2 rounded, its error ((1 - w) - r^2/2) added back)."""
        r, l, q = reduce(x)
        z = r * r
        s = r + fma(r * z, horner(z, S), l * (ONE - HALF * z))
        hz = HALF * z
        w = ONE - hz
        co = w + (((ONE - w) - hz) + fma(z * z, horner(z, C), -r * l))
        return s, co, q

    @inline
    def sin(x):
        s, co, q = sin_cos(x)
        y = (s if (q & 1) == 0 else co)
        y = -y if q >= 2 else y
        y = y if abs(x) < INF else x - x  # inf and NaN: NaN
        return y * np.copysign(F(1), x)  # sin(-x) = -sin(x), sin(-0.0) = -0.0

    @inline
    def cos(x):
        s, co, q = sin_cos(x)
        y = (co if (q & 1) == 0 else s)
        y = -y if (q == 1) | (q == 2) else y
        return y if abs(x) < INF else x - x

    @inline
    def tan(x):
        s, co, q = sin_cos(x)
        odd = (q & 1) == 1
        y = (-co if odd else s) / (s if odd else co)
        y = y if abs(x) < INF else x - x
        return y * np.copysign(F(1), x)

    if TP is not None:
        TP, TQ = tuple(F(v) for v in TP), tuple(F(v) for v in TQ)

        @inline
        def tan(x):  # noqa: F811 (the quotient of the rational form, where it is fitted)
            """tan(r + l) = (r + l) + r z P(z) / Q(z), z = r^2 (fitted), as T / Q with T =
            r Q + (r z P + l Q) (l's own term, l tan^2 r, is below 2^-54 of the result); in
            the odd quadrants -1 / tan: -Q / T. One quotient either way, and two short
            polynomials where sin and cos took two long ones and fdlibm's correction."""
            r, l, q = reduce(x)
            z = r * r
            p, d = horner(z, TP), horner(z, TQ)
            t = fma(r, d, fma(r * z, p, l * d))
            odd = (q & 1) == 1
            y = (-d if odd else t) / (t if odd else d)
            y = y if abs(x) < INF else x - x
            return y * np.copysign(ONE, x)

    return SimpleNamespace(sin=sin, cos=cos, tan=tan)


_S32 = (-0.16666653676325885, 0.008332091723465274, -0.00019505112957313446)
_C32 = (0.04166664287824948, -0.001388718094345492, 2.4417797848746966e-05)
_S64 = (-0.16666666666666666, 0.00833333333333333, -0.0001984126984126533,
        2.755731922100938e-06, -2.5052107374327893e-08, 1.6058857433244174e-10,
        -7.629381270907599e-13, 2.1164514690671243e-15)
_C64 = (0.041666666666666664, -0.0013888888888889126, 2.48015873017672e-05,
        -2.755731929005414e-07, 2.0876769470666093e-09, -1.147184646260371e-11,
        4.8020293262854093e-14)
# tan r = r + r z P(z) / Q(z) on |r| <= pi/4 (`scripts/fit_vecmath.py`: TAN64, 2^-53.6)
_TP64 = (0.3333333333333331, 0.07979583427591888, -0.005992832062216666,
         6.100574903408475e-05)
_TQ64 = (1.0, -0.16061249717224146, -0.11563825922256592, 0.006833783441763613,
         -6.329564516449868e-05)
TRIG_F32 = _make_trig(np.float32, _S32, _C32, reduce_f32)
TRIG_F64 = _make_trig(np.float64, _S64, _C64, reduce_f64, _TP64, _TQ64)
# the same without the large-argument table, for blocks whose arguments are all below it
TRIG_F32_FAST = _make_trig(np.float32, _S32, _C32, reduce_f32_fast)
TRIG_F64_FAST = _make_trig(np.float64, _S64, _C64, reduce_f64_fast, _TP64, _TQ64)


def _make_tan32_table():
    """float32 tan by 32 points of its period (AVX-512's permutes: vector_isa.table), as
    NumPy's SVML loop computes it (its structure; our tables and code): |x| = n pi/32 + r,
    |r| <= pi/64, x0 = (n mod 32) pi/32, t = tan r = r + r^3 (1/3 + 2 r^2/15) (2^-30), and
    tan(x0 + r) = (A + B t) / (B - A t) with (A, B) = (tan x0, 1) where |x0 mod pi| <= pi/4,
    else (1, cot x0): no quotient near a pole of tan x0. A and B are rounded to float32 and
    their remainders enter through t, scaled (E = A_lo / B, F = B_lo / A), so that each of the
    numerator and the denominator takes one rounding that matters. One division, no sine and
    cosine polynomials: about 40 instructions per 16 values where those took 60.

    Below 2^16 the reduction is Cody-Waite by pi/32 (reduce_f32's pieces of pi/2 over 16:
    every FMA rounds relative to its result). Above (the full function only), reduce_f32's
    Payne-Hanek fraction y of pi/2, in float64, gives n = 16 (q + y) and r = (16 y - rint(16
    y)) pi/32. tan_fast is the first alone (elementwise kernels run it blockwise)."""
    F, L = np.float32, np.longdouble
    pi = L("3.14159265358979323846264338327950288")
    a_k, b_k = [], []
    for k in range(32):
        x0 = L(k) * pi / 32
        if k < 8 or k > 24:
            a_k.append(np.tan(x0)), b_k.append(L(1))
        else:  # (cot(pi/2) is 0 exactly)
            a_k.append(L(1)), b_k.append(L(0) if k == 16 else np.cos(x0) / np.sin(x0))
    a_hi, b_hi = [F(v) for v in a_k], [F(v) for v in b_k]
    # (a zero A or B is exact, with a zero remainder beside it)
    e_k = [float(F((a - L(h)) / b)) if b != 0 else 0.0 for a, h, b in zip(a_k, a_hi, b_k)]
    f_k = [float(F((b - L(h)) / a)) if a != 0 else 0.0 for b, h, a in zip(b_k, b_hi, a_k)]
    A, B, E, FK = (vector_isa.table([float(v) for v in col], F) for col in (a_hi, b_hi, e_k, f_k))
    C1, C2, C3 = (F(v / 16) for v in _F32_PIO2)
    SCALE, ONE, INF = F(32 / np.pi), F(1), F(np.inf)
    Q = (F(1 / 3), F(2 / 15))
    PIO32 = np.float64(np.pi / 32)

    @inline
    def formula(x, a, r, k):
        z = r * r
        tl = r * z * horner(z, Q)
        av, bv = A(k), B(k)
        y = fma(bv, r + (tl + E(k)), av) / fma(-av, r + (tl - FK(k)), bv)
        y = y if a < INF else x - x  # inf and NaN: NaN
        return y * np.copysign(ONE, x)  # tan(-x) = -tan(x), tan(-0.0) = -0.0

    @inline
    def cody_waite(a):
        n = np.rint(a * SCALE)
        r = fma(n, -C1, a)
        r = fma(n, -C2, r)
        return fma(n, -C3, r), np.int32(n)

    @inline
    def tan_fast(x):
        a = abs(x)
        r, k = cody_waite(a)
        return formula(x, a, r, k)

    @inline
    def tan(x):
        a = abs(x)
        r, k = cody_waite(a)
        big = a >= _F32_CW_LIMIT
        q, y = _payne_hanek_f32(a, big)
        y16 = y * 16.0  # (exact)
        j = np.rint(y16)
        big_r = np.float32((y16 - j) * PIO32)
        big_k = np.int32(np.int64(q) * 16 + np.int64(j))
        return formula(x, a, big_r if big else r, big_k if big else k)

    return tan, tan_fast


if vector_isa.available():
    TRIG_F32.tan, TRIG_F32_FAST.tan = _make_tan32_table()


# --- arctan, arcsin, arccos, arctan2 ----------------------------------------------------------

def make_inverse_trig(c):
    F, PA, PS = c.F, c.ATAN, c.ASIN
    ZERO, HALF, ONE, INF, NAN = c.ZERO, c.HALF, c.ONE, c.INF, c.NAN
    PIO2_HI, PIO2_LO, PI_HI, PI_LO = c.PIO2_HI, c.PIO2_LO, c.PI_HI, c.PI_LO
    PIO4_HI, PIO4_LO = F(c.PIO2_HI * 0.5), F(c.PIO2_LO * 0.5)
    TAN3PIO8, TANPIO8 = F(2.414213562373095), F(0.41421356237309503)
    QUARTER, RATIO_BIG = F(0.25), F(np.finfo(F).max / 4)

    @inline
    def atan_abs(a):
        """atan(a) for a >= 0: a = tan(b + u) with b in {0, pi/4, pi/2} chosen so that
        |t| = |tan u| <= tan(pi/8): t = a, (a - 1) / (a + 1) or -1 / a (one division for
        all three), then atan t = t + t^3 A(t^2) (fitted); b in two pieces."""
        top, mid = a > TAN3PIO8, a > TANPIO8
        # fma(a, 0, 1) is 1 for every a below tan(pi/8): a divisor LLVM cannot fold (with a
        # literal 1 it divides twice, -1 / a and (a - 1) / (a + 1), and selects)
        t = (-ONE if top else (a - ONE if mid else a)) / \
            (a if top else (a + ONE if mid else fma(a, ZERO, ONE)))
        z = t * t
        b_hi = PIO2_HI if top else (PIO4_HI if mid else ZERO)
        b_lo = PIO2_LO if top else (PIO4_LO if mid else ZERO)
        return b_hi + (t + fma(t * z, horner(z, PA), b_lo))

    @inline
    def atan_ratio_core(num, den):
        """atan(num / den) for 0 <= num <= den, den > 0 and finite below RATIO_BIG: u = num
        / den is in [0, 1], so atan_abs's reduction is t = u or (u - 1) / (u + 1), that is
        num / den or (num - den) / (num + den) (num - den exact when num >= den / 2), with
        one division."""
        mid = num > TANPIO8 * den
        t = (num - den if mid else num) / (num + den if mid else den)
        z = t * t
        b_hi = PIO4_HI if mid else ZERO
        b_lo = PIO4_LO if mid else ZERO
        return b_hi + (t + fma(t * z, horner(z, PA), b_lo))

    @inline
    def atan_ratio(num, den):
        """atan_ratio_core for any 0 <= num <= den. Both near the largest float: both
        scaled by 1/4 first (exact), so num + den stays finite; both infinite: atan(1);
        num = 0: 0 (even 0/0)."""
        inf2 = (num == INF) & (den == INF)
        num, den = (ONE, ONE) if inf2 else (num, den)
        big = den > RATIO_BIG
        num, den = (num * QUARTER, den * QUARTER) if big else (num, den)
        r = atan_ratio_core(num, den)
        return ZERO if num == ZERO else r

    @inline
    def atan(x):
        return np.copysign(atan_abs(abs(x)), x)  # y >= 0: copysign is sign(x) * y

    @inline
    def asin_parts(a):
        """(p, big): for a <= 1/2, p = asin(a) = a + a^3 B(a^2) (fitted); above,
        p = asin(sqrt((1 - a) / 2)) (1 - a exact) and asin(a) = pi/2 - 2p."""
        big = a > HALF
        z = HALF * (ONE - a) if big else a * a
        sq = np.sqrt(z) if big else a
        return fma(sq * z, horner(z, PS), sq), big

    @inline
    def asin(x):
        a = abs(x)
        p, big = asin_parts(a)
        y = PIO2_HI - ((p + p) - PIO2_LO) if big else p
        y = y if a <= ONE else NAN
        return np.copysign(y, x) if a == a else x

    @inline
    def acos(x):
        """pi/2 - asin(x) for |x| <= 1/2; 2p for x > 1/2 and pi - 2p below -1/2 (p as in
        asin_parts: no cancellation near +-1); pi and pi/2 in two pieces."""
        a = abs(x)
        p, big = asin_parts(a)
        neg = x < ZERO
        y = (PI_HI - ((p + p) - PI_LO) if neg else p + p) if big else \
            PIO2_HI - (np.copysign(p, x) - PIO2_LO)
        y = y if a <= ONE else NAN
        return y if a == a else x

    @inline
    def place(r, swap, y, x):
        """atan2 from r = atan(min / max) of |y|, |x|: pi/2 - r when |y| > |x|, pi - r when
        x < 0 (-0.0 included), both: pi/2 + r; sign of y. pi and pi/2 in two pieces."""
        left = np.copysign(ONE, x) < ZERO
        b_hi = (PIO2_HI if swap else PI_HI) if left else (PIO2_HI if swap else ZERO)
        b_lo = (PIO2_LO if swap else PI_LO) if left else (PIO2_LO if swap else ZERO)
        v = b_hi + ((-r if swap != left else r) + b_lo)
        return np.copysign(v, y)

    @inline
    def atan2(y, x):
        """atan(min / max) of |y|, |x| (atan_ratio: one division), placed by octant (`place`).
        Equal infinities give atan(1), a zero numerator 0 (even 0/0), as C's atan2."""
        ay, ax = abs(y), abs(x)
        swap = ay > ax
        r = atan_ratio(ax if swap else ay, ay if swap else ax)
        v = place(r, swap, y, x)
        return v if (x == x) & (y == y) else x + y

    @inline
    def atan2_fast(y, x):
        """atan2 where atan2_special is false: no infinity, NaN, huge ratio or 0/0 to
        handle (elementwise kernels run it blockwise, as pow_f32_fast)."""
        ay, ax = abs(y), abs(x)
        swap = ay > ax
        return place(atan_ratio_core(ax if swap else ay, ay if swap else ax), swap, y, x)

    @inline
    def atan2_special(y, x):
        """Whether atan2(y, x) needs its special cases: a NaN, an infinity or a value
        beyond RATIO_BIG in either, or both zero."""
        return ~(abs(y) <= RATIO_BIG) | ~(abs(x) <= RATIO_BIG) | ((y == ZERO) & (x == ZERO))

    return SimpleNamespace(atan=atan, asin=asin, acos=acos, atan2=atan2,
                           atan2_fast=atan2_fast, atan2_special=atan2_special)


