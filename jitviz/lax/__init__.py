"""`jitviz.lax`: the primitives with strict dtypes (no implicit promotion), and structured
control flow (`cond`, `switch`, `select`, `while_loop`, `fori_loop`, `scan`), as `jax.lax`.

    >>> lax.add(1, 1.0)
    TypeError: add requires arguments to have the same dtypes, got int32, float32.
"""
from __future__ import annotations

import enum

import numpy as np

from ..core.ir import Literal as _Literal, ShapedArray
from ..core.trace import Tracer, stage as _stage
from . import primitives as P
from .control_flow import cond, fori_loop, scan, switch, while_loop  # noqa: F401
from .control_flow import map  # noqa: F401,A004  (lax.map, as in JAX)
from .sort import sort, sort_key_val  # noqa: F401
from .stop_gradient import stop_gradient  # noqa: F401
from .erf import erf, erf_inv, erfc  # noqa: F401
from .scans import associative_scan, cumlogsumexp, top_k  # noqa: F401
from .bits import clz, population_count, shift_right_logical  # noqa: F401
from .in_dim import (collapse, dynamic_index_in_dim, dynamic_slice_in_dim,  # noqa: F401
                     dynamic_update_index_in_dim, dynamic_update_slice_in_dim, full_like,
                     index_in_dim, reciprocal, reduce, slice_in_dim)
from .windows import (ConvDimensionNumbers, conv, conv_dimension_numbers,  # noqa: F401
                      conv_general_dilated, conv_transpose, conv_with_general_padding, pad,
                      padtype_to_pads, reduce_window)
from . import linalg  # noqa: F401  (lax.linalg, as in JAX)
from .linalg import FftType, fft  # noqa: F401
from .special import (betainc, bessel_i0e, bessel_i1e, digamma, igamma,  # noqa: F401
                      igamma_grad_a, igammac, lgamma, polygamma, random_gamma_grad, zeta)
from .composites import batch_matmul, broadcast_to_rank, split, tile  # noqa: F401


def aval_of(x) -> ShapedArray:
    """The abstract value of a tracer, array or scalar (without binding anything)."""
    if isinstance(x, Tracer):
        return x.aval
    from ..core.trace import concrete_aval
    return concrete_aval(x, "an operand")[1]


def _unary(prim):
    def op(x):
        return prim.bind(x)
    op.__name__ = prim.name
    op.__doc__ = f"Elementwise `{prim.name}` (lax semantics: no dtype promotion)."
    return op


def _binary(prim):
    def op(x, y):
        return prim.bind(x, y)
    op.__name__ = prim.name
    op.__doc__ = f"Elementwise `{prim.name}`; both operands must have the same dtype."
    return op


neg, sign, floor, ceil, is_finite = [_unary(p) for p in (
    P.neg_p, P.sign_p, P.floor_p, P.ceil_p, P.is_finite_p)]
exp, exp2, log, log1p, expm1, tanh, logistic = [_unary(p) for p in (
    P.exp_p, P.exp2_p, P.log_p, P.log1p_p, P.expm1_p, P.tanh_p, P.logistic_p)]
sin, cos, tan, asin, acos, atan = [_unary(p) for p in (
    P.sin_p, P.cos_p, P.tan_p, P.asin_p, P.acos_p, P.atan_p)]
sinh, cosh, asinh, acosh, atanh = [_unary(p) for p in (
    P.sinh_p, P.cosh_p, P.asinh_p, P.acosh_p, P.atanh_p)]
sqrt, rsqrt, cbrt, square, abs, real, imag = [_unary(p) for p in (
    P.sqrt_p, P.rsqrt_p, P.cbrt_p, P.square_p, P.abs_p, P.real_p, P.imag_p)]
bitwise_not = _unary(P.not_p)
add, sub, mul, div, rem, atan2, nextafter = [_binary(p) for p in (
    P.add_p, P.sub_p, P.mul_p, P.div_p, P.rem_p, P.atan2_p, P.nextafter_p)]
bitwise_and, bitwise_or, bitwise_xor = [_binary(p) for p in (P.and_p, P.or_p, P.xor_p)]
shift_left, shift_right_arithmetic = _binary(P.shift_left_p), _binary(P.shift_right_arithmetic_p)
eq, ne, lt, le, gt, ge = [_binary(p) for p in (P.eq_p, P.ne_p, P.lt_p, P.le_p, P.gt_p, P.ge_p)]


def _lexicographic(compare):
    """`compare` (lt, gt, ...) extended to complex numbers as JAX orders them where it does
    (jnp's comparisons, lax.max/min): by the real parts, then by the imaginary parts, with
    JAX's formula, so a NaN part makes the comparison false. Real operands go to `compare`
    itself, whose primitive refuses complex ones."""
    def op(x, y):
        if aval_of(x).dtype.kind != "c":
            return compare(x, y)
        rx, ry = real(x), real(y)
        return select(eq(rx, ry), compare(imag(x), imag(y)), compare(rx, ry))
    op.__name__ = compare.__name__
    return op


def _extremum(prim, compare):
    """lax.max/lax.min. max_p and min_p order no complex numbers; for those JAX picks x where
    `_lexicographic(compare)` holds, else y (a NaN part compares false, so the other operand
    wins, where np.maximum would give the NaN)."""
    pick_x = _lexicographic(compare)

    def op(x, y):
        ax, ay = aval_of(x), aval_of(y)
        if ax.dtype.kind != "c" or ax.dtype != ay.dtype:
            return prim.bind(x, y)
        # max_p's shape (a scalar, or size-1 dimensions, broadcast; its errors): select
        # wants one shape
        shape = P.broadcast_shapes_scalar(prim.name, ax.shape, ay.shape)
        x, y = [a if aval_of(a).shape == shape else
                broadcast_in_dim(a, shape, tuple(range(len(shape) - aval_of(a).ndim,
                                                       len(shape))))
                for a in (x, y)]
        return select(pick_x(x, y), x, y)
    op.__name__ = prim.name
    op.__doc__ = f"Elementwise `{prim.name}`; both operands must have the same dtype."
    return op


max, min = _extremum(P.max_p, gt), _extremum(P.min_p, lt)


def complex(x, y):
    """`jax.lax.complex`: x + iy elementwise, from float32 or float64 parts of one dtype (an
    infinite or NaN part stays as it is, where x + 1j * y would mix it into the other)."""
    return P.complex_p.bind(x, y)


def conj(x):
    """The complex conjugate. JAX also accepts a real float operand: its result is that
    value as a complex number, with a +0 imaginary part (nothing is negated)."""
    dt = aval_of(x).dtype
    if dt.kind == "f":
        return convert_element_type(x, np.complex128 if dt == np.float64 else np.complex64,
                                    aval_of(x).weak_type)
    return P.conj_p.bind(x)


def pow(x, y):
    """`x ** y` elementwise. As in JAX, an integer exponent may go with a float base: it is
    converted to the base's dtype (pow_p itself takes one dtype), keeping its weak type."""
    xd, yd = aval_of(x).dtype, aval_of(y).dtype
    if xd.kind in "fc" and yd.kind in "iu":
        y = convert_element_type(y, xd, aval_of(y).weak_type)
    return P.pow_p.bind(x, y)


class RoundingMethod(enum.IntEnum):
    """lax.round's rounding methods, as JAX names them."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=0):
    """Round to nearest: 0 = half away from zero (lax default), 1 = half to even."""
    return P.round_p.bind(x, rounding_method=int(rounding_method))


def integer_pow(x, y: int):
    return P.integer_pow_p.bind(x, y=int(y))


def convert_element_type(x, new_dtype, weak_type: bool = False):
    """Cast to `new_dtype` (a 64-bit one is 32-bit without x64, with JAX's warning).
    Concrete values are converted at once (no equation)."""
    new_dtype = _requested(new_dtype, "convert_element_type")
    if not isinstance(x, Tracer):
        from ..array import as_array
        # the primitive's own impl: saturating float -> int, as under jit (not NumPy's wrap);
        # staged inside a trace, as JAX binds the primitive there even for a constant
        return _stage(as_array(P.convert_element_type_p.impl(
            np.asarray(x), new_dtype=new_dtype, weak_type=bool(weak_type)), weak_type))
    if x.dtype == new_dtype and x.weak_type == weak_type:
        return x
    if isinstance(x._var, _Literal):
        # a literal converts to a literal, as JAX's constant folding of this primitive
        # does: `x ** jnp.isneginf(b)` of a bool b prints `pow a 0.0:f32[]`
        return convert_element_type(x._var.val, new_dtype, weak_type)
    return P.convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type))


def select_n(which, *cases):
    return P.select_n_p.bind(which, *cases)


def select(pred, on_true, on_false):
    """`on_true` where `pred`, else `on_false` (recorded as `select_n pred on_false on_true`)."""
    return P.select_n_p.bind(pred, on_false, on_true)


def clamp(lo, x, hi):
    return P.clamp_p.bind(lo, x, hi)


def broadcast_in_dim(x, shape, broadcast_dimensions):
    if not shape and not broadcast_dimensions and aval_of(x).shape == ():
        return x  # a scalar "broadcast" to a scalar: no equation, as in JAX
    return P.broadcast_in_dim_p.bind(x, shape=tuple(int(d) for d in shape),
                                     broadcast_dimensions=tuple(broadcast_dimensions))


def broadcast(x, sizes):
    """Add leading dimensions `sizes`."""
    nd = np.ndim(x) if not isinstance(x, Tracer) else x.ndim
    shape = tuple(sizes) + tuple(aval_of(x).shape)
    return broadcast_in_dim(x, shape, tuple(range(len(sizes), len(sizes) + nd)))


def expand_dims(x, dimensions):
    if not dimensions:
        return x
    shape = list(aval_of(x).shape)
    out_ndim = len(shape) + len(dimensions)
    dims = sorted(d % out_ndim for d in dimensions)
    for d in dims:
        shape.insert(d, 1)
    kept = [i for i in range(out_ndim) if i not in dims]
    return broadcast_in_dim(x, shape, kept)


def reshape(x, new_sizes, dimensions=None):
    new_sizes = tuple(int(d) for d in new_sizes)
    if dimensions is not None:  # JAX's meaning: transpose by `dimensions` first
        x = transpose(x, dimensions)
    if isinstance(x, Tracer) and x.shape == new_sizes:
        return x
    return P.reshape_p.bind(x, new_sizes=new_sizes, dimensions=None)


def transpose(x, permutation):
    permutation = tuple(int(p) for p in permutation)
    from ..array import Array
    if isinstance(x, (Tracer, Array)) and permutation == tuple(range(x.ndim)):
        return x  # as JAX: an Array, even a constant inside a trace, is its own transpose
    return P.transpose_p.bind(x, permutation=permutation)


def squeeze(x, dimensions):
    return P.squeeze_p.bind(x, dimensions=tuple(int(d) for d in dimensions))


def rev(x, dimensions):
    return P.rev_p.bind(x, dimensions=tuple(dimensions))


def concatenate(operands, dimension):
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]  # nothing to join (as JAX)
    return P.concatenate_p.bind(*operands, dimension=int(dimension))


def stack(operands, axis):
    """Join same-typed operands along a new axis `axis` (JAX 0.10's `stack` primitive)."""
    return P.stack_p.bind(*operands, axis=int(axis))


def slice(x, start_indices, limit_indices, strides=None):
    if aval_of(x).ndim == 0:
        return x  # nothing to slice (JAX returns the operand)
    ints = lambda xs: tuple(int(i) for i in xs)
    return P.slice_p.bind(x, start_indices=ints(start_indices), limit_indices=ints(limit_indices),
                          strides=None if strides is None else ints(strides))


def normalize_index(i, size):
    """A start index counted from the end when negative, as JAX's dynamic_slice does:
    `select_n(i < 0, i, i + size)` for a traced index (a weak one is made strong for the
    add), plain Python arithmetic for a concrete one."""
    if not isinstance(i, Tracer):
        i = int(i)
        return np.int32(i + size if i < 0 else i)
    dt = i.dtype
    negative = lt(i, np.array(0, dt)[()])
    return select_n(negative, i, add(convert_element_type(i, dt, False), np.array(size, dt)))


def dynamic_slice(x, start_indices, slice_sizes):
    shape = aval_of(x).shape
    starts = [normalize_index(i, d) for i, d in zip(start_indices, shape)]
    return P.dynamic_slice_p.bind(x, *starts, slice_sizes=tuple(int(i) for i in slice_sizes))


def dynamic_update_slice(x, update, start_indices):
    # negative starts count from the end, as in JAX (then the primitive clamps)
    starts = [normalize_index(i, d) for i, d in zip(start_indices, aval_of(x).shape)]
    return P.dynamic_update_slice_p.bind(x, update, *starts)


def iota(dtype, size):
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension):
    return P.iota_p.bind(dtype=_requested(dtype, "broadcasted_iota"),
                         shape=tuple(int(d) for d in shape), dimension=int(dimension))


def _requested(dtype, where):
    """A dtype named in a `lax` call, as JAX canonicalizes it (32-bit without x64, warning
    where JAX warns)."""
    from .. import dtypes
    return dtypes.requested_dtype(dtype, where)


def full(shape, fill_value, dtype=None):
    """An array of `shape` (a sequence, or one int as JAX takes it) filled with `fill_value`
    (a `broadcast_in_dim` of a scalar)."""
    shape = tuple(shape) if np.iterable(shape) else (int(shape),)
    if dtype is not None:
        fill_value = convert_element_type(fill_value, dtype)
    elif not isinstance(fill_value, Tracer):
        dt, weak = aval_of(fill_value).dtype, aval_of(fill_value).weak_type
        fill_value = convert_element_type(fill_value, dt, weak)
    # staged, as jnp.full: inside a trace JAX's result is a tracer even for a constant fill,
    # so `jnp.pow(v, v)` of `v = lax.full((), -8)` is `pow`, not a static negative exponent
    # for integer_pow (jaxdiff seed 35005449)
    return _stage(broadcast_in_dim(fill_value, shape, ()))


def _reducer(prim):
    def op(x, axes):
        return prim.bind(x, axes=tuple(int(a) for a in axes))
    op.__name__ = prim.name
    return op


reduce_sum, reduce_prod, reduce_max, reduce_min, reduce_and, reduce_or = [_reducer(p) for p in (
    P.reduce_sum_p, P.reduce_prod_p, P.reduce_max_p, P.reduce_min_p, P.reduce_and_p,
    P.reduce_or_p)]


def _ordered(x):
    """float16 compared as float32 (exact, same order, NaN kept): Numba's kernels have no
    float16 arithmetic."""
    if aval_of(x).dtype == np.float16:
        return convert_element_type(x, np.float32, aval_of(x).weak_type)
    return x


def argmax(x, axis, index_dtype):
    return P.argmax_p.bind(_ordered(x), axes=(int(axis),), index_dtype=np.dtype(index_dtype))


def argmin(x, axis, index_dtype):
    return P.argmin_p.bind(_ordered(x), axes=(int(axis),), index_dtype=np.dtype(index_dtype))


def cumsum(x, axis=0, reverse=False):
    return P.cumsum_p.bind(x, axis=int(axis), reverse=bool(reverse))


def cumprod(x, axis=0, reverse=False):
    return P.cumprod_p.bind(x, axis=int(axis), reverse=bool(reverse))


def _numeric_only(name, x, axis):
    """JAX's lax.cummax/cummin take numbers only (the primitives here also serve booleans,
    for jitviz's own rules); the axis is checked first, as JAX does."""
    P._check_cumulative_axis(aval_of(x), int(axis))
    P._check_kind(name, aval_of(x).dtype, P.NUMERIC)


def cummax(x, axis=0, reverse=False):
    _numeric_only("cummax", x, axis)
    return P.cummax_p.bind(x, axis=int(axis), reverse=bool(reverse))


def cummin(x, axis=0, reverse=False):
    _numeric_only("cummin", x, axis)
    return P.cummin_p.bind(x, axis=int(axis), reverse=bool(reverse))


class Precision(enum.Enum):
    """`jax.lax.Precision`: the precision asked of a product's operands (`DEFAULT`, `HIGH`,
    `HIGHEST`, or the strings JAX takes for them). jitviz's CPU products are float32 or
    wider whatever is asked; the choice is kept in the program and printed as JAX prints it."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "fastest": cls.DEFAULT, "bfloat16": cls.DEFAULT,
                 "high": cls.HIGH, "bfloat16_3x": cls.HIGH, "tensorfloat32": cls.HIGH,
                 "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        if isinstance(value, str) and value.lower() in names:
            return names[value.lower()]
        return None

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name


def canonicalize_precision(precision):
    """None, or a (lhs, rhs) pair of `Precision`s, as JAX keeps it in a `dot_general`."""
    if precision is None:
        return None
    if isinstance(precision, (str, Precision)):
        return (Precision(precision),) * 2
    if isinstance(precision, (tuple, list)) and len(precision) == 2 and (
            all(isinstance(p, Precision) for p in precision) or
            all(isinstance(p, str) for p in precision)):  # JAX refuses a mixed pair
        return tuple(Precision(p) for p in precision)
    names = [p.name.lower() for p in Precision]
    raise ValueError(f"Precision argument must be None, a string in {names}, a lax.Precision "
                     f"value or a tuple of two lax.Precision values or strings; got "
                     f"{precision!r}.")


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    precision = canonicalize_precision(precision)
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    in_dt = aval_of(lhs).dtype
    # a 64-bit type without x64 is its 32-bit one, with JAX's warning naming `dot`
    pet = (_requested(preferred_element_type, "dot") if preferred_element_type is not None
           else in_dt)
    if in_dt.kind in "iu" and pet.kind in "iu" and pet.itemsize < in_dt.itemsize:
        # JAX's rule for integers only (a narrower float accumulation is allowed)
        raise TypeError(f"`preferred_element_type` must not be narrower than the original "
                        f"type, got preferred_element_type of {pet.name} for result type of "
                        f"{in_dt.name}.")
    if in_dt.kind in "fc" and pet.kind in "iub":
        # a float product asked for as integers: computed in floats, then converted as
        # convert_element_type converts (saturating, as XLA does), on every backend
        out = P.dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=precision,
                                   preferred_element_type=in_dt)
        return convert_element_type(out, pet, aval_of(out).weak_type)
    if pet != in_dt:
        # a wider or float accumulation (float16 summed in float32, int32 products in
        # float32): the operands are converted first, as XLA accumulates in that type
        lhs, rhs = (convert_element_type(v, pet, aval_of(v).weak_type) for v in (lhs, rhs))
    return P.dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=precision,
                                preferred_element_type=pet)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix products contracting the last axis of lhs with the first of rhs."""
    la, ra = aval_of(lhs), aval_of(rhs)
    if la.ndim not in (1, 2) or ra.ndim not in (1, 2):
        raise TypeError(f"lax.dot takes 1-d or 2-d operands, got {la.shape} and {ra.shape}")
    return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


def gather(x, indices, axes):
    return P.gather_p.bind(x, *indices, axes=tuple(axes))


def scatter(x, updates, indices, axes, mode="set"):
    return P.scatter_p.bind(x, updates, *indices, axes=tuple(axes), mode=mode)

# collectives over a named vmap axis (vmap(f, axis_name='i')): jitviz/transforms/collectives.py
from ..transforms.collectives import (all_gather, axis_index, pmax, pmean, pmin,  # noqa: E402
                                      psum)

# the primitives themselves under JAX's names (`lax.add_p`, `lax.cond_p`), for interpreters
# and rules written against JAX's (`eqn.primitive is lax.exp_p`)
def _export_primitives():
    import importlib
    from ..core.registry import Primitive
    found = {}
    # by module path: the package's `sort` and `erf` are the functions, not the modules
    for name in (".primitives", ".control_flow", ".sort", ".erf", ".stop_gradient",
                 "..transforms.collectives"):
        module = importlib.import_module(name, __name__)
        found.update({k: v for k, v in vars(module).items()
                      if k.endswith("_p") and isinstance(v, Primitive)})
    globals().update({k: v for k, v in found.items() if k not in globals()})


_export_primitives()
