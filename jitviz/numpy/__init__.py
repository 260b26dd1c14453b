"""`jitviz.numpy` (import as `jnp`): NumPy's API, traced when tracing, with JAX's dtype rules.

Outside a trace the functions run at once and return `jitviz.Array` (a NumPy array). Plain
NumPy called on traced values is traced too (NEP 13/18), so existing NumPy code runs as is.
"""
from __future__ import annotations

import numpy as _np

from .. import dtypes as _dtypes
from ..array import Array
from .creation import (arange, array, asarray, empty, empty_like, eye, full, full_like,
                       identity, linspace, ones, ones_like, zeros, zeros_like)
from .indexing import argwhere, nonzero, take, where
from .linalg import dot, inner, matmul, outer, tensordot, trace, vdot
from . import fft, linalg  # noqa: F401  (jnp.fft, jnp.linalg)
from .reductions import (all, amax, amin, any, argmax, argmin, average, count_nonzero,
                         cumprod, cumsum, max, mean, min, prod, ptp, std, sum, var)
from .shape import (atleast_1d, atleast_2d, broadcast_arrays, broadcast_to, column_stack,
                    concat, concatenate, expand_dims, flip, fliplr, flipud, hstack, moveaxis,
                    ndim, permute_dims, ravel, repeat, reshape, shape, size, squeeze, stack,
                    swapaxes, tile, transpose, vstack)
from .ufuncs import (abs, absolute, acos, acosh, add, arccos, arccosh, arcsin, arcsinh,
                     arctan, arctan2, arctanh, around, asin, asinh, atan, atan2, atanh,
                     bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clip, conj,
                     conjugate, copysign, cos, cosh, deg2rad, degrees, divide, exp, exp2, expm1,
                     fix, float_power, floor, floor_divide, fmax, fmin, fmod, heaviside, hypot,
                     imag, invert, isfinite, isinf, isnan, isneginf, isposinf, left_shift, less,
                     less_equal, log, log1p, log2, log10, logaddexp, logical_and, logical_not,
                     logical_or, logical_xor, maximum, minimum, mod, multiply, negative,
                     nextafter, not_equal, positive, pow, power, rad2deg, radians, real,
                     reciprocal, remainder, right_shift, rint, round, sign, signbit, sin, sinc,
                     sinh, sqrt, square, subtract, tan, tanh, true_divide, trunc, equal,
                     greater, greater_equal)
from .ufuncs import divmod_ as divmod  # noqa: A001
from .einsum import apply_along_axis, einsum, vectorize
from .sorting import (argsort, median, nanmedian, nanpercentile, nanquantile, percentile,
                      quantile, sort)
from .extra import (array_split, atleast_3d, block, broadcast_shapes, cross, diag, diag_indices,
                    diag_indices_from, diagonal, diff, dsplit, ediff1d, fill_diagonal, hsplit,
                    indices, isin, kron, meshgrid, pad, piecewise, put_along_axis, roll, rot90,
                    select, split, take_along_axis, tril, tril_indices, tril_indices_from, triu,
                    triu_indices, triu_indices_from, vander, vsplit)
from .setops import (intersect1d, lexsort, setdiff1d, setxor1d, union1d, unique, unique_all,
                     unique_counts, unique_inverse, unique_values)
from .histograms import (bincount, digitize, histogram, histogram2d, histogram_bin_edges,
                         histogramdd, interp, searchsorted)
from .index_tricks import (c_, index_exp, ix_, mgrid, ogrid, r_, ravel_multi_index, s_,
                           unravel_index)
from .arraymanip import (append, apply_over_axes, array_equiv, choose, compress, delete,
                         diagflat, dstack, extract, flatnonzero, fromfunction, insert,
                         mask_indices, matrix_transpose, place, put, resize, rollaxis, tri,
                         trim_zeros, unstack)
from .numerics import (argpartition, cumulative_prod, cumulative_sum, gradient, matvec,
                       nancumprod, nancumsum, partition, sort_complex, trapezoid, unwrap,
                       vecdot, vecmat)
from .ufuncs_more import (bartlett, bitwise_count, bitwise_invert, bitwise_left_shift,
                          bitwise_right_shift, blackman, fabs, frexp, hamming, hanning, i0,
                          iscomplex, iscomplexobj, isreal, isrealobj, kaiser, logaddexp2,
                          packbits, spacing, unpackbits)
from .dtype_utils import (ComplexWarning, array_repr, array_str, can_cast, character, flexible,
                          generic, get_printoptions, isdtype, iterable, object_, printoptions,
                          promote_types, set_printoptions)
from .polynomial import (poly, polyadd, polyder, polydiv, polyfit, polyint, polymul,
                         polysub, roots)
from .mathextra import (angle, convolve, corrcoef, correlate, cov, gcd, geomspace, lcm, ldexp,
                        logspace, modf, nan_to_num, nanargmax, nanargmin, nanmax, nanmean,
                        nanmin, nanprod, nanstd, nansum, nanvar, polyval)

pi, e, inf, nan, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.euler_gamma
newaxis = None
ndarray = Array
dtype = _np.dtype
iinfo, finfo = _np.iinfo, _np.finfo
result_type_np = _np.result_type


class _ScalarType:
    """`jnp.float32(x)`: a cast that works on tracers; also usable as a dtype."""

    def __init__(self, np_type):
        self.dtype = _np.dtype(np_type)
        self.__name__ = self.dtype.name

    def __call__(self, x):
        """jnp.float32(x): x as a strongly typed array of this dtype (even a weak one of
        the same dtype, as JAX converts it)."""
        from ._core import to_dtype
        dt = _dtypes.requested_dtype(self.dtype, "asarray")  # float32 without x64, as JAX
        return to_dtype(asarray(x, dt), dt, False)

    def __repr__(self):
        return f"jnp.{self.dtype.name}"

    def __eq__(self, other):
        try:
            return self.dtype == _np.dtype(other)
        except TypeError:
            return False

    def __hash__(self):
        return hash(self.dtype)


bool_ = _ScalarType(_np.bool_)
int8, int16, int32, int64 = (_ScalarType(t) for t in (_np.int8, _np.int16, _np.int32, _np.int64))
uint8, uint16, uint32, uint64 = (_ScalarType(t) for t in
                                 (_np.uint8, _np.uint16, _np.uint32, _np.uint64))
float16, float32, float64 = (_ScalarType(t) for t in (_np.float16, _np.float32, _np.float64))
complex64, complex128 = _ScalarType(_np.complex64), _ScalarType(_np.complex128)
# JAX's other names for them (int_, uint, float_ and complex_ are the 64-bit types)
bool = bool_  # noqa: A001
int_, uint, float_, complex_ = int64, uint64, float64, complex128
single, double, csingle, cdouble = float32, float64, complex64, complex128
# abstract categories, for jnp.issubdtype(x.dtype, jnp.floating)
floating, integer, inexact, number = _np.floating, _np.integer, _np.inexact, _np.number
signedinteger, unsignedinteger, complexfloating = \
    _np.signedinteger, _np.unsignedinteger, _np.complexfloating


def issubdtype(arg1, arg2):
    return _np.issubdtype(_dtype_like(arg1), _dtype_like(arg2))


def _dtype_like(arg):
    """A dtype, or a NumPy class (a category such as jnp.integer, or a scalar type) as
    it is: on a class, `.dtype` is NumPy's attribute descriptor, not a dtype."""
    return arg if isinstance(arg, type) else getattr(arg, "dtype", arg)


def result_type(*args):
    from ._core import aval
    return _dtypes.result_type(*[(aval(a).dtype, aval(a).weak_type) for a in args])[0]


def astype(x, dtype, copy=False):
    from ._core import converted, to_dtype
    return converted(to_dtype(x, _dtypes.canonical_creation_dtype(dtype, "astype")), x)


def copy(a):
    return array(a, copy=True)


def isscalar(element):
    return _np.isscalar(element) or (hasattr(element, "shape") and element.shape == ())


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all(isclose(a, b, rtol, atol, equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b| (rtol and atol in a's dtype), as JAX corrects it: an
    infinity is close only to the same infinity, a NaN to nothing (unless equal_nan)."""
    from ._core import to_dtype
    a, b = _promote_inexact(a, b)
    dt = result_type(a)
    real_dtype = _np.real(_np.zeros((), dt)).dtype
    tol = add(to_dtype(atol, real_dtype), multiply(to_dtype(rtol, real_dtype), absolute(b)))
    out = less_equal(absolute(subtract(a, b)), tol)
    a_inf, b_inf = isinf(a), isinf(b)
    out = logical_and(out, logical_not(logical_or(a_inf, b_inf)))
    out = logical_or(out, logical_and(logical_and(a_inf, b_inf), equal(a, b)))
    a_nan, b_nan = isnan(a), isnan(b)
    out = logical_and(out, logical_not(logical_or(a_nan, b_nan)))
    if equal_nan:
        out = logical_or(out, logical_and(a_nan, b_nan))
    return out


def array_equal(a1, a2, equal_nan=False):
    if shape(a1) != shape(a2):
        return asarray(False)
    return all(equal(a1, a2) if not equal_nan else
               logical_or(equal(a1, a2), logical_and(isnan(a1), isnan(a2))))


def _promote_inexact(*args):
    from ._core import promote
    return promote(*args, inexact=True)


from . import _methods  # noqa: E402,F401  (installs operators and methods on tracers)
