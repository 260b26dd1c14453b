"""Numba helpers the generated CPU kernels call (as `rt.name`), each matching the NumPy
implementation of its primitive in `jitviz/lax/` (`elementwise.py`, `reductions.py`, ...).

They live in one importable module so Numba can cache kernels that use them. Most are tiny
scalar functions that LLVM inlines into the kernel loop. The elementary functions
(`rt.exp_f32`, `rt.tanh_f32`, `rt.log_f64`, ...) are vecmath.py's, branch-free so that loops
calling them vectorize (libm's do not), re-exported here; helpers that rules register with
their lowerings join them at first use (`provide`).
"""
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .vecmath import *  # noqa: F401,F403  (rt.tanh_f32, ...: the vectorized math functions)
from . import vector_isa
from .vecmath_core import ieee_max, ieee_min

# No `cache=True`: Numba's own disk cache loads machine code unverified. Kernels calling these
# have their code linked in; for drivers calling them, cache.py gives them its verified cache.
_jit = njit(cache=False, error_model="numpy", nogil=True, fastmath=False)  # (why: vecmath_core)
_inline = njit(cache=False, error_model="numpy", nogil=True, forceinline=True, fastmath=False)


# --- bit casts ---------------------------------------------------------------------------

@intrinsic
def i32_as_f32(typingctx, x):
    """Reinterpret the bits of an int32 as a float32 (vectorizes, unlike a 1-element view)."""
    if x != types.int32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.int32), codegen


# --- integer arithmetic with NumPy/XLA semantics -----------------------------------------

@_inline
def idiv(a, b):
    """lax.div on integers: rounds toward zero; x / 0 is -1 (all bits set, which the
    caller's cast makes the largest unsigned value) and INT_MIN / -1 wraps to INT_MIN
    (XLA's results, which the interpreter gives too)."""
    if b == 0:
        return ~(a - a)  # -1 in a's own integer type (a - 1 would mix in a signed literal)
    if b == -1:
        return -a  # the caller's cast wraps -INT_MIN to INT_MIN
    # floor division, then toward zero: abs(INT_MIN) would overflow
    q = a // b
    # q + 1 written without a literal (an int literal would mix a signed type into an
    # unsigned one, and Numba would unify them as float64)
    return q - ~(a - a) if (a - q * b != 0) and ((a < 0) != (b < 0)) else q


@_inline
def irem(a, b):
    """lax.rem on integers (C's %): the sign of the dividend; x rem 0 is x, as XLA."""
    if b == 0:
        return a
    if b == -1:
        return a - a  # INT_MIN rem -1 is 0 (a floor division would overflow)
    r = a - (a // b) * b  # Python's %: the divisor's sign; abs(INT_MIN) would overflow
    return r - b if r != 0 and (a < 0) != (b < 0) else r


@_inline
def shl(a, b, bits):
    """np.left_shift: shifting by the bit width or more (or a negative amount) gives 0."""
    return a << b if 0 <= b < bits else a - a


@_inline
def shr(a, b, bits):
    """np.right_shift (arithmetic): an oversized shift gives -1 for negatives, else 0."""
    if 0 <= b < bits:
        return a >> b
    # ~0 and 0 of a's own type: `a - a - 1` would mix in an int64 literal, and Numba would
    # unify a uint64 result with it as float64 (losing low bits on the other branch too)
    return ~(a - a) if a < 0 else a - a


@_inline
def cdiv(a, b):
    """Complex division that gives inf/nan for a zero divisor (as NumPy) instead of raising."""
    if b == 0:
        re = a.real / b.real if a.real != 0 else np.nan
        im = a.imag / b.real if a.imag != 0 else np.nan
        return complex(re, im) if a != 0 else complex(np.nan, np.nan)
    return a / b


# --- argmax / argmin over the middle axis of (pre, n, post) ------------------------------

def _make_arg_reduce(better):
    @_jit
    def arg_reduce(x3, out2):
        """First index of the best value along axis 1 (`better(v, best)`: larger for argmax,
        smaller for argmin); a NaN counts as the best, as in np.argmax/np.argmin."""
        pre, n, post = x3.shape
        for i in range(pre):
            for k in range(post):
                best = x3[i, 0, k]
                at = 0
                if best == best:
                    for j in range(1, n):
                        v = x3[i, j, k]
                        if v != v:
                            at = j
                            break
                        if better(v, best):
                            best = v
                            at = j
                out2[i, k] = at
    return arg_reduce


@_inline
def _greater(a, b):
    return a > b


@_inline
def _less(a, b):
    return a < b


argmax3 = _make_arg_reduce(_greater)
argmin3 = _make_arg_reduce(_less)

_SEARCH_BLOCK = 64


def _make_arg_rows(best_of):
    @_jit
    def arg_rows(x3, out2):
        """arg_reduce of a contiguous (pre, n, 1) array of numbers, vectorized: each row's
        best value by `best_of` (fmax/fmin: a NaN wins), then the first index holding it
        (-0.0 == +0.0, as np.argmax compares), searched a block of values at a time: an OR
        of compares vectorizes where a loop that stops at the first hit does not; a row
        with a NaN looks for its first NaN. argmax over the rows of 1000x1000 float32 on
        the AVX2-only CPU, one core: 1219 -> 167 us (NumPy 97-132, jax.jit 1356)."""
        pre, n = x3.shape[0], x3.shape[1]
        x2 = x3.reshape((pre, n))
        full = n - n % _SEARCH_BLOCK
        for i in range(pre):
            m = x2[i, 0]
            for j in range(1, n):
                m = best_of(m, x2[i, j])
            at = 0
            if m != m:
                for j in range(n):
                    if x2[i, j] != x2[i, j]:
                        at = j
                        break
            else:
                b = 0
                while b < full:
                    hit = np.int32(0)
                    for j in range(b, b + _SEARCH_BLOCK):
                        hit |= np.int32(x2[i, j] == m)
                    if hit != 0:
                        break
                    b += _SEARCH_BLOCK
                for j in range(b, n):
                    if x2[i, j] == m:
                        at = j
                        break
            out2[i, 0] = at
    return arg_rows


argmax_rows = _make_arg_rows(ieee_max)
argmin_rows = _make_arg_rows(ieee_min)


def _make_arg_cols(best_of, better):
    @_jit
    def arg_cols(x3, out2):
        """arg_reduce of a contiguous (pre, n, post) array of numbers along its middle axis,
        vectorized over the `post` columns: each column's best so far by `best_of` (a NaN
        stays once it comes; -0.0 against +0.0 may change the value, never the index, as
        they tie) and its index moved by arithmetic, `at + (j - at) * took`, where `took`
        is `better` or the first NaN. (LLVM sees that as a select stored back where its
        operand was loaded and makes it a masked store, `vpmaskmovd` on AVX2, which is slow
        on the AVX2-only Zen 3 here: argmax over axis 0 of 1000x1000 float32 1538-1570 ->
        569-827 us, NumPy 874-1108, jax.jit 1287; ping-pong arrays to avoid it kept the loop
        scalar: 1512-2344 us.)"""
        pre, n, post = x3.shape
        best = np.empty(post, x3.dtype)
        at = np.empty(post, np.int32)
        for i in range(pre):
            for k in range(post):
                best[k] = x3[i, 0, k]
                at[k] = np.int32(0)
            for j in range(1, n):
                for k in range(post):
                    v, b = x3[i, j, k], best[k]
                    took = better(v, b) | ((v != v) & (b == b))
                    best[k] = best_of(b, v)
                    at[k] += (np.int32(j) - at[k]) * np.int32(took)
            for k in range(post):
                out2[i, k] = at[k]
    return arg_cols


argmax_cols = _make_arg_cols(ieee_max, _greater)
argmin_cols = _make_arg_cols(ieee_min, _less)


# --- cumulative ops along the middle axis of (pre, n, post), in place ---------------------

def _make_cumulative(op):
    @_jit
    def cumulative(x3, reverse):
        pre, n, post = x3.shape
        for i in range(pre):
            for k in range(post):
                if reverse:
                    for j in range(n - 2, -1, -1):
                        x3[i, j, k] = op(x3[i, j + 1, k], x3[i, j, k])
                else:
                    for j in range(1, n):
                        x3[i, j, k] = op(x3[i, j - 1, k], x3[i, j, k])
    return cumulative


@_inline
def _add(a, b):
    return a + b


@_inline
def _mul(a, b):
    return a * b


@_inline
def fmax(a, b):
    """np.maximum as XLA computes it: a NaN wins and +0.0 beats -0.0 (IEEE 754-2019
    maximum), by LLVM's llvm.maximum (integers: a compare and select). Not a select of
    `a > b` and tests: in `acc[i] = max(acc[i], x)` LLVM turned a select that may store back
    the value it loaded into a conditional store, and without AVX-512's masked stores the
    loop stayed scalar (max over axis 0 of 1000x1000 float32: 488 -> 83 us on AVX2; clip of
    1M float32 155 -> 132 us). tests/test_cpu_reductions.py checks every pair of specials."""
    return ieee_max(a, b)


@_inline
def fmin(a, b):
    """np.minimum's twin: a NaN wins; -0.0 beats +0.0."""
    return ieee_min(a, b)


def _make_extremum(range_op, portable):
    """fmax/fmin for one float type: on AVX-512DQ one `vrange` (the extremum of numbers,
    signed zeros ordered) and a NaN test on both operands (vrange returns the number where
    the other is a quiet NaN); four instructions where `portable`'s selects took seven. Max
    over axis 0 of 10000x100 float32: 131 -> 78 us."""
    if not vector_isa.available_dq():
        return portable

    @_inline
    def extremum(a, b):
        r = range_op(a, b)
        return a + b if (a != a) | (b != b) else r
    return extremum


# (the kernels call these by dtype: rules.py's `extremum`)
fmax_f32 = _make_extremum(vector_isa.range_max_f32, fmax)
fmin_f32 = _make_extremum(vector_isa.range_min_f32, fmin)
fmax_f64 = _make_extremum(vector_isa.range_max_f64, fmax)
fmin_f64 = _make_extremum(vector_isa.range_min_f64, fmin)


@_inline
def _max(a, b):
    return fmax(a, b)


@_inline
def _min(a, b):
    return fmin(a, b)


@_inline
def _bool_or(a, b):
    return a or b


@_inline
def _bool_and(a, b):
    return a and b


cumsum3 = _make_cumulative(_add)
cumprod3 = _make_cumulative(_mul)
cummax3 = _make_cumulative(_max)
cummin3 = _make_cumulative(_min)
cumor3 = _make_cumulative(_bool_or)  # cummax/cumsum of booleans
cumand3 = _make_cumulative(_bool_and)


# --- gather / scatter over (pre, m, post) rows with flat indices --------------------------

@_jit
def gather3(x3, flat, out3):
    pre, m, post = x3.shape
    for i in range(pre):
        for j in range(flat.shape[0]):
            r = flat[j]
            for k in range(post):
                out3[i, j, k] = x3[i, r, k]


def _make_scatter(op):
    @_jit
    def scatter(out3, flat, upd3):
        """Updates in order; a row index of -1 (out of bounds) is dropped."""
        pre, m, post = out3.shape
        for i in range(pre):
            for j in range(flat.shape[0]):
                r = flat[j]
                if r < 0:
                    continue
                for k in range(post):
                    out3[i, r, k] = op(out3[i, r, k], upd3[i, j, k])
    return scatter


@_inline
def _second(a, b):
    return b


scatter_set3 = _make_scatter(_second)
scatter_add3 = _make_scatter(_add)
scatter_mul3 = _make_scatter(_mul)
scatter_max3 = _make_scatter(_max)
scatter_min3 = _make_scatter(_min)
scatter_or3 = _make_scatter(_bool_or)
scatter_and3 = _make_scatter(_bool_and)


# --- batched matrix products (B, M, K) x (B, K, N) ---------------------------------------

@_jit
def matmul3_blas(a3, b3, out3):
    """BLAS gemm through Numba's np.dot (float and complex)."""
    for i in range(a3.shape[0]):
        np.dot(a3[i], b3[i], out3[i])


@_jit
def matmul3_loops(a3, b3, out3):
    """Integer and boolean products: loops (BLAS has none), accumulating in the output type."""
    bsz, m, kk = a3.shape
    n = b3.shape[2]
    for i in range(bsz):
        for r in range(m):
            for c in range(n):
                out3[i, r, c] = 0
            for k in range(kk):
                a = a3[i, r, k]
                for c in range(n):
                    out3[i, r, c] += a * b3[i, k, c]


# --- float16 (Numba has no half type: kernels see uint16 bits and compute in float32) -----

@intrinsic
def f32_as_i32(typingctx, x):
    if x != types.float32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.int32(types.float32), codegen


@_inline
def half_to_float(bits):
    """IEEE binary16 bits -> float32 (exact)."""
    h = np.int32(bits)
    sign = np.int32((h & 0x8000) << 16)
    e = (h >> 10) & 0x1F
    m = h & 0x3FF
    if e == 0:  # zero or subnormal: m * 2**-24
        f = np.float32(m) * np.float32(5.9604644775390625e-08)
        return -f if sign else f
    if e == 31:  # inf or nan
        return i32_as_f32(np.int32(sign | 0x7F800000 | (m << 13)))
    return i32_as_f32(np.int32(sign | ((e + 112) << 23) | (m << 13)))


@_inline
def float_to_half(f):
    """float32 -> binary16 bits, rounding to nearest even (as NumPy's npy_float_to_half)."""
    x = f32_as_i32(np.float32(f))
    sign = np.uint16((x >> 16) & 0x8000)
    x = x & 0x7FFFFFFF
    if x >= 0x7F800000:  # inf or nan
        return np.uint16(sign | 0x7C00 | (0x200 if x > 0x7F800000 else 0))
    if x >= 0x477FF000:  # rounds to inf
        return np.uint16(sign | 0x7C00)
    if x < 0x38800000:  # subnormal half (or zero): round |f| * 2**24 to an integer
        m = np.int32(np.rint(i32_as_f32(np.int32(x)) * np.float32(16777216.0)))
        return np.uint16(sign | m)
    m = x + 0xFFF + ((x >> 13) & 1)
    return np.uint16(sign | ((m - 0x38000000) >> 13))


@_inline
def round_f16(f):
    """Round a float32 to the nearest float16 value (kept as float32)."""
    return half_to_float(float_to_half(f))


# --- reductions along the innermost axis -------------------------------------------------
# Kernels reduce a row in blocks of BLOCK values. Within a block a sum (product) accumulates
# through `add_reassoc` (`mul_reassoc`): an add that LLVM may reorder, and only that add, so
# the block loop vectorizes into several vector accumulators (each value still goes through
# IEEE float arithmetic; NaN and inf propagate as in any order). Blocks are combined pairwise
# through a small stack (cascade summation), so the error grows like log(n), as NumPy's
# pairwise sum's, not like n.

BLOCK = 128


def _reassoc(name):
    @intrinsic
    def op(typingctx, a, b):
        if a != b or a not in (types.float32, types.float64):
            return None

        def codegen(context, builder, signature, args):
            return getattr(builder, name)(args[0], args[1], flags=("reassoc",))
        return a(a, b), codegen
    return op


add_reassoc = _reassoc("fadd")
add_reassoc.__doc__ = "a + b, which LLVM may reassociate with the adds around it (a reduction)."
mul_reassoc = _reassoc("fmul")
mul_reassoc.__doc__ = "a * b, which LLVM may reassociate with the products around it."


def _make_cascade(op):
    @_inline
    def push(stack, levels, top, value):
        level = 0
        while top > 0 and levels[top - 1] == level:
            value = op(stack[top - 1], value)
            top -= 1
            level += 1
        stack[top] = value
        levels[top] = level
        return top + 1

    @_inline
    def total(stack, top, identity):
        if top == 0:
            return identity
        value = stack[top - 1]
        for t in range(top - 2, -1, -1):
            value = op(stack[t], value)
        return op(identity, value)
    return push, total


cascade_push_add, cascade_total_add = _make_cascade(_add)
cascade_push_mul, cascade_total_mul = _make_cascade(_mul)


# max/min over the innermost axis: each value updates lane `j` of a lane array (an elementwise
# loop, which LLVM vectorizes; a NaN-propagating max as a running scalar reduction does not),
# and the lanes are combined by halving at the end. NaN propagates (a NaN lane stays NaN, a
# NaN value enters its lane). The lane array lives on the stack (`stack_array`), so LLVM keeps
# it in vector registers across a row instead of loading and storing it per block. The
# renderer picks the count (render.py: `max_min_lanes`).


@intrinsic
def stack_array(typingctx, n, dtype):
    """An uninitialized 1-d array of `n` (a literal) values of `dtype`, on the stack.
    Unlike np.empty (a heap allocation LLVM must assume escapes), its elements can live in
    registers; it must not outlive the kernel (it is never returned or stored)."""
    if not isinstance(n, types.IntegerLiteral) or not isinstance(dtype, types.NumberClass):
        return None
    size, dt = n.literal_value, dtype.dtype
    arrty = types.Array(dt, 1, "C")

    def codegen(context, builder, signature, args):
        from numba.core import cgutils
        from numba.np.arrayobj import make_array, populate_array
        ty = context.get_data_type(dt)  # the storage type (bool: a byte)
        data = cgutils.alloca_once(builder, ty, size=size)
        intp = context.get_value_type(types.intp)
        itemsize = context.get_abi_sizeof(ty)
        ary = make_array(arrty)(context, builder)
        populate_array(ary, data=data, shape=[intp(size)], strides=[intp(itemsize)],
                       itemsize=intp(itemsize), meminfo=None)
        return ary._getvalue()
    return arrty(n, dtype), codegen


@intrinsic
def nonneg(typingctx, i):
    """i, telling LLVM that i >= 0 (llvm.assume). An index it cannot prove non-negative
    gets Python's wrap-around (x[i + n] for i < 0), which turns a loop's contiguous loads
    into gathers; the tail of a blocked row, which starts at a run-time offset, needs this."""
    if not isinstance(i, types.Integer) or not i.signed:
        return None

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic(
            "llvm.assume", (), ir.FunctionType(ir.VoidType(), [ir.IntType(1)]))
        builder.call(fn, [builder.icmp_signed(">=", args[0], args[0].type(0))])
        return args[0]
    return i(i), codegen


@intrinsic
def nan_like(typingctx, x):
    """A quiet NaN of x's float type (np.nan is a float64, which would widen float32 code)."""
    if not isinstance(x, types.Float):
        return None

    def codegen(context, builder, signature, args):
        return context.get_constant(signature.return_type, float("nan"))
    return x(x), codegen


@_inline
def lane_max(lanes, nans, j, v):
    """The lane update: lane j takes v unless it is larger (v on ties, as NumPy's SIMD loops
    give between -0.0 and +0.0): one vector max. A NaN is not carried through the lane (that
    takes compare-and-blend sequences) but recorded in `nans`, and the total is then NaN."""
    m = lanes[j]
    lanes[j] = m if m > v else v
    nans[j] |= np.uint8(v != v)


@_inline
def lane_min(lanes, nans, j, v):
    m = lanes[j]
    lanes[j] = m if m < v else v
    nans[j] |= np.uint8(v != v)


# Combining lanes at the end: the same results as lane_max/lane_min, as a single select.
# (The nested select of lane_max, once the combining is scalar code, becomes branches on the
# data, which mispredict.)

@_inline
def _lanes_max(m, v):
    return m if (m > v) | (m != m) else v


@_inline
def _lanes_min(m, v):
    return m if (m < v) | (m != m) else v


# A threaded reduction over every axis cuts its outer axis (n0 long, `size` values in all)
# into chunks, one thread each, and combines their results in order: the chunk count comes
# from the shape alone, so the result does not depend on the number of threads. 2^16 values
# at least per chunk (below that the wake-up costs more than the chunk), 64 chunks at most
# (more than any core count it targets, and few results to combine in order), and no more
# chunks than the outer axis has entries.
REDUCE_CHUNK_MIN, REDUCE_CHUNKS_MAX = 65536, 64


@_inline
def reduce_chunks(n0, size):
    return max(1, min(REDUCE_CHUNKS_MAX, n0, size // REDUCE_CHUNK_MIN))


# A threaded reduction over a leading axis that keeps the last one (a column sum) splits its
# columns instead: one block per thread, of COLUMN_BLOCK columns at least (whole cache lines
# of the output row for any dtype: two threads never write to one line). Each column is
# still reduced by one thread over the rows in order, so the blocks change no bits. Blocks
# as wide as they can be: each reads a segment of every row, and narrow segments of a large
# array (128 columns of 4096x4096) missed the TLB and the prefetcher on every row, which
# made two threads no faster than one.
COLUMN_BLOCK = 128


@intrinsic
def thread_count(typingctx):
    """Numba's thread count (numba.get_num_threads()) by the threading layer's symbol:
    Numba's own overload reads it through a ctypes pointer, which keeps a kernel out of
    the disk cache (Numba's private `_iget_num_threads` calls the symbol too; a private
    name is not ours to depend on). Only a kernel with a `prange` may call it, in its own
    text: loading such a kernel from the cache launches the threading layer first
    (Numba's reload hook for parfors), which defines the symbol; a cached helper that
    called it was loaded without, and LLVM aborted the process ("Symbol not found:
    get_num_threads")."""
    numba.get_num_threads()  # launches the threading layer, which registers the symbol

    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(  # C's int, as ctypes declares it
            builder.module, ir.FunctionType(ir.IntType(32), []), "get_num_threads")
        return builder.sext(builder.call(fn, []), ir.IntType(64))
    return types.int64(), codegen


@_inline
def column_blocks(n, threads):
    return max(1, min(threads, n // COLUMN_BLOCK))


@_inline
def column_start(c, blocks, n):
    c = np.int64(c)  # (a prange index may be unsigned: mixed with signed, Numba goes float)
    return n if c == blocks else c * (n // COLUMN_BLOCK) // blocks * COLUMN_BLOCK


@_inline
def ipow(x, n):
    """x**n for a constant n >= 1 by repeated squaring from the exponent's highest bit: the
    order of XLA's integer_pow (and of the kernels' inline form for small n), in a loop of
    about log2(n) steps, which LLVM unrolls for the constant n."""
    r = x
    bit = 62
    while bit >= 0 and not (n >> bit) & 1:
        bit -= 1
    bit -= 1
    while bit >= 0:
        r = r * r
        if (n >> bit) & 1:
            r = r * x
        bit -= 1
    return r


@_inline
def lanes_fill(lanes, identity):
    for j in range(lanes.shape[0]):
        lanes[j] = identity


def _make_lanes_total(op):
    @_inline
    def total(lanes, nans, identity):
        """Combine all lanes (a power-of-two count), starting from identity: NaN if a lane
        saw one, else halving: lane j with lane j + h for h = n/2, n/4, ..., 1. Each step
        reads two contiguous halves (vector registers, a vector max); pairing neighbours
        (2j with 2j + 1) instead made LLVM combine them one by one, about 170 cycles a row.
        A max over 10000 rows of 100 (a copy of the kernel's loops): 64 lanes paired 367 us,
        halved 242 us, 32 lanes halved 110 us (render.py's count for such rows). Which of
        -0.0 and +0.0 a tie returns depends on the order (NumPy's does on its loop's too)."""
        seen = np.uint8(0)
        for j in range(nans.shape[0]):
            seen |= nans[j]
        if seen:
            return nan_like(identity)
        h = lanes.shape[0] // 2
        while h > 0:
            for j in range(h):
                lanes[j] = op(lanes[j], lanes[j + h])
            h //= 2
        return op(identity, lanes[0])
    return total


lanes_total_max = _make_lanes_total(_lanes_max)
lanes_total_min = _make_lanes_total(_lanes_min)


# --- helpers registered with lowerings ------------------------------------------------------

def provide(name: str, fn) -> None:
    """Make `fn`, a helper a rule was registered with (`register_lowering(..., helpers=)`,
    e.g. jitviz.random's Threefry), callable as `rt.<name>` in generated code: compiled by
    Numba once, on first use. A name this module already gives another function is an
    error, not a silent replacement."""
    current = globals().get(name)
    if current is None:
        globals()[name] = _jit(fn)
    elif getattr(current, "py_func", None) is not fn:
        raise ValueError(f"the CPU runtime already has rt.{name}; register the helper of "
                         f"{fn.__module__}.{fn.__qualname__} under another name")
