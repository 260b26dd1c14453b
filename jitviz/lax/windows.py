"""Windowed operations, as `jax.lax`'s: `pad`, `reduce_window` (and so the pooling layers of
flax / haiku / stax, `reduce_window(x, -inf, lax.max, ...)`), `conv_general_dilated`, `conv`,
`conv_with_general_padding`, `conv_dimension_numbers` and `padtype_to_pads`.

All are compositions of existing primitives (no primitive of their own), so they trace, jit,
differentiate and vmap on every backend with the rules those primitives already have:

- `pad`: `concatenate` with filled blocks (negative widths: a `slice`), interior padding by
  `stack`ing fill blocks after each element and trimming the last ones;
- `reduce_window`: the operand padded with `init_value` (base dilation = interior padding),
  then one strided `slice` per window position, folded with `computation` from `init_value`
  (a 3x3 window: 9 slices);
- `conv_general_dilated`: im2col — one strided `slice` of the padded (and lhs-dilated),
  channels-last input per kernel position, `stack`ed into a (positions, kernel * channels)
  matrix, and a single matrix-product `dot_general` with the kernel (feature groups are a
  batch dimension of it; batch groups become feature groups, as XLA defines them). One
  BLAS-sized product rather than a loop of small ones; the stacked patches cost kernel-size
  times the input's memory.

The jaxprs show those primitives, not JAX's `pad` / `reduce_window_max` / `conv_general_dilated`
equations. Derivatives at ties of `max` / `min` windows follow `lax.max`'s (shared between the
tied elements), where JAX's `reduce_window_max` sends all of it to one element.
"""
from __future__ import annotations

import math
import operator
from collections import namedtuple

import numpy as np



def _aval(x):
    from . import aval_of
    return aval_of(x)


def _ints(name, values, n):
    """`values` as n Python ints, or JAX's TypeError naming the argument."""
    values = tuple(operator.index(v) for v in values)
    if len(values) != n:
        raise TypeError(f"{name} must have one entry per dimension ({n}), got {len(values)}")
    return values


# --- pad ---------------------------------------------------------------------------------------

def pad(operand, padding_value, padding_config):
    """`jax.lax.pad`: `padding_config` is one `(low, high, interior)` per dimension; low and
    high may be negative (they then remove elements), interior inserts that many padding
    values between neighbouring elements."""
    from . import aval_of, convert_element_type
    av = aval_of(operand)
    pv = aval_of(padding_value)
    if pv.shape != ():
        raise TypeError(f"pad: padding_value must be a scalar, got shape {pv.shape}")
    if pv.dtype != av.dtype and not pv.weak_type:
        raise TypeError(f"pad: padding_value's dtype {pv.dtype} must be the operand's "
                        f"{av.dtype}")
    if (pv.dtype, pv.weak_type) != (av.dtype, av.weak_type):
        padding_value = convert_element_type(padding_value, av.dtype, av.weak_type)
    config = [tuple(operator.index(v) for v in c) for c in padding_config]
    if len(config) != av.ndim or any(len(c) != 3 for c in config):
        raise ValueError(f"pad: padding_config needs one (low, high, interior) triple per "
                         f"dimension ({av.ndim}), got {padding_config}")
    if any(i < 0 for _, _, i in config):
        raise ValueError(f"pad: interior padding must be non-negative, got {padding_config}")
    x = operand
    for axis, (lo, hi, interior) in enumerate(config):
        x = _pad_axis(x, padding_value, axis, lo, hi, interior)
    return x


def _filled(shape, value):
    """A block of `shape` filled with the scalar `value`."""
    from . import broadcast_in_dim
    return broadcast_in_dim(value, tuple(shape), ())


def _pad_axis(x, value, axis, lo, hi, interior):
    from . import concatenate, reshape, stack
    shape = list(_aval(x).shape)
    n = shape[axis]
    if interior and n > 1:
        fill = _filled(shape, value)
        spread = stack([x] + [fill] * interior, axis + 1)  # each element, then its padding
        shape[axis] = n * (interior + 1)
        x = reshape(spread, shape)
        x = _slice_axis(x, axis, 0, n + (n - 1) * interior)
        shape[axis] = n + (n - 1) * interior
    if lo < 0:
        x = _slice_axis(x, axis, -lo, shape[axis])
        shape[axis] += lo
        lo = 0
    if hi < 0:
        x = _slice_axis(x, axis, 0, shape[axis] + hi)
        shape[axis] += hi
        hi = 0
    if shape[axis] < 0:
        raise ValueError("pad: negative padding removes more elements than the dimension has")
    parts = []
    for width in (lo, None, hi):
        if width is None:
            parts.append(x)
        elif width:
            block = list(shape)
            block[axis] = width
            parts.append(_filled(block, value))
    return concatenate(parts, axis) if len(parts) > 1 else x


def _slice_axis(x, axis, start, limit, stride=1):
    from . import slice as lax_slice
    shape = _aval(x).shape
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return lax_slice(x, starts, limits, None if stride == 1 else strides)


# --- padding strings ---------------------------------------------------------------------------

def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """`jax.lax.padtype_to_pads`: the (low, high) pads 'SAME', 'SAME_LOWER' or 'VALID' mean."""
    if not isinstance(padding, str):
        raise TypeError(f"padding must be 'SAME', 'SAME_LOWER' or 'VALID', got {padding!r}")
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID' or 'SAME', got "
                           f"{padding}.")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out = -(-n // s)
        total = max((out - 1) * s + w - n, 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if kind == "SAME" else (big, small))
    return pads


def _pads(name, padding, in_shape, window_shape, strides):
    if isinstance(padding, str):
        return padtype_to_pads(in_shape, window_shape, strides, padding)
    pads = [tuple(operator.index(v) for v in p) for p in padding]
    if len(pads) != len(in_shape) or any(len(p) != 2 for p in pads):
        raise ValueError(f"{name}: padding must be a string or one (low, high) pair per "
                         f"spatial dimension ({len(in_shape)}), got {padding}")
    return pads


def _dilated(size, dilation):
    return 0 if size == 0 else (size - 1) * dilation + 1


# --- reduce_window -----------------------------------------------------------------------------

def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """`jax.lax.reduce_window`: `computation` folded over each window of `operand` (a pytree
    of arrays with matching `init_value`s), starting from `init_value`; out-of-bounds window
    positions (padding, base dilation) read `init_value`."""
    from ..tree import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten(operand)
    inits, init_tree = tree_flatten(init_value)
    if init_tree != tree:
        raise TypeError(f"reduce_window: init_value's structure {init_tree} must match "
                        f"operand's {tree}")
    if not leaves:
        raise TypeError("reduce_window: operand has no arrays")
    shape = _aval(leaves[0]).shape
    if any(_aval(x).shape != shape for x in leaves):
        raise TypeError("reduce_window: the operands must have the same shape, got "
                        + ", ".join(str(_aval(x).shape) for x in leaves))
    nd = len(shape)
    dims = _ints("window_dimensions", window_dimensions, nd)
    strides = _ints("window_strides", window_strides or (1,) * nd, nd)
    base = _ints("base_dilation", base_dilation or (1,) * nd, nd)
    wdil = _ints("window_dilation", window_dilation or (1,) * nd, nd)
    if any(v < 1 for v in dims + strides + base + wdil):
        raise ValueError("reduce_window: window dimensions, strides and dilations must be "
                         "positive")
    dilated_shape = [_dilated(n, b) for n, b in zip(shape, base)]
    eff = [_dilated(w, d) for w, d in zip(dims, wdil)]
    pads = _pads("reduce_window", padding, dilated_shape, eff, strides)
    padded = [pad(x, _as_scalar(v, x), [(lo, hi, b - 1) for (lo, hi), b in zip(pads, base)])
              for x, v in zip(leaves, inits)]
    full = _aval(padded[0]).shape
    out_shape = [max(0, (n - e) // s + 1) if n >= e else 0
                 for n, e, s in zip(full, eff, strides)]

    def window_slice(x, offset):
        starts = [o * d for o, d in zip(offset, wdil)]
        limits = [st + (m - 1) * s + 1 if m else st for st, m, s in zip(starts, out_shape,
                                                                          strides)]
        from . import slice as lax_slice
        return lax_slice(x, starts, limits, strides)

    acc = [_filled(out_shape, _as_scalar(v, x)) for x, v in zip(padded, inits)]
    for offset in np.ndindex(*dims):
        window = [window_slice(x, offset) for x in padded]
        out = computation(tree_unflatten(tree, acc), tree_unflatten(tree, window))
        acc, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"reduce_window: computation returned {out_tree}, expected the "
                            f"operand's structure {tree}")
    return tree_unflatten(tree, acc)


def _as_scalar(value, like):
    """`init_value` as a scalar of the operand's dtype (a Python number takes it)."""
    from . import aval_of, convert_element_type
    av, target = aval_of(value), aval_of(like)
    if av.shape != ():
        raise TypeError(f"reduce_window: init_value must be a scalar, got shape {av.shape}")
    if av.dtype != target.dtype and not av.weak_type:
        raise TypeError(f"reduce_window: init_value's dtype {av.dtype} must be the "
                        f"operand's {target.dtype}")
    if (av.dtype, av.weak_type) != (target.dtype, target.weak_type):
        value = convert_element_type(value, target.dtype, target.weak_type)
    return value


# --- convolutions ------------------------------------------------------------------------------

ConvDimensionNumbers = namedtuple("ConvDimensionNumbers", ["lhs_spec", "rhs_spec", "out_spec"])
ConvDimensionNumbers.__doc__ = """`jax.lax.ConvDimensionNumbers`: for lhs, rhs and the output,
the positions of (batch, feature, spatial...) / (out feature, in feature, spatial...)."""


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """`jax.lax.conv_dimension_numbers`: `None` (NC..., OI..., NC...), a triple of layout
    strings such as ('NHWC', 'HWIO', 'NHWC'), or a ConvDimensionNumbers, as index specs."""
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got {nd} and "
                        f"{len(rhs_shape)}.")
    if dimension_numbers is None:
        spec = tuple(range(nd))
        return ConvDimensionNumbers(spec, spec, spec)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(dimension_numbers) != 3:
        raise TypeError("dimension_numbers must be None, a ConvDimensionNumbers or a triple of "
                        f"layout strings, got {dimension_numbers!r}")
    if all(isinstance(s, str) for s in dimension_numbers):
        lhs, rhs, out = dimension_numbers
        for s in dimension_numbers:
            if len(s) != nd:
                raise TypeError(f"convolution dimension_numbers {s!r} must have {nd} letters, "
                                "one per dimension")
        spatial = [c for c in rhs if c not in "OI"]  # the kernel's order defines the spatial one

        def spec(layout, first, second):
            return (layout.index(first), layout.index(second)) + tuple(
                layout.index(c) for c in spatial)
        try:
            return ConvDimensionNumbers(spec(lhs, "N", "C"), spec(rhs, "O", "I"),
                                        spec(out, "N", "C"))
        except ValueError:
            raise TypeError(f"convolution dimension_numbers {dimension_numbers!r}: lhs and out "
                            "need N and C, rhs O and I, and the same spatial letters") from None
    return ConvDimensionNumbers(*[tuple(operator.index(i) for i in s) for s in dimension_numbers])


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """`jax.lax.conv_general_dilated`: an N-d convolution (cross-correlation, as XLA's) with
    strides, padding ('SAME', 'VALID', 'SAME_LOWER' or (low, high) pairs), lhs (input)
    and rhs (kernel) dilation, any layout, and feature / batch groups."""
    from . import transpose
    la, ra = _aval(lhs), _aval(rhs)
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    if la.dtype != ra.dtype:
        raise TypeError(f"conv_general_dilated requires arguments to have the same dtypes, got "
                        f"{la.dtype}, {ra.dtype}.")
    # channels last, the layout the patches are gathered in: (N, spatial..., C)
    x = transpose(lhs, (dn.lhs_spec[0],) + tuple(dn.lhs_spec[2:]) + (dn.lhs_spec[1],))
    w = transpose(rhs, dn.rhs_spec)  # (O, I, spatial...)
    nsp = la.ndim - 2
    G, B = operator.index(feature_group_count), operator.index(batch_group_count)
    N, C = _aval(x).shape[0], _aval(x).shape[-1]
    O, I = _aval(w).shape[:2]
    if G < 1 or B < 1 or (G > 1 and B > 1):
        raise ValueError("conv_general_dilated: feature_group_count and batch_group_count must "
                         f"be positive and not both above 1, got {G} and {B}")
    if C != I * G:
        raise ValueError(f"conv_general_dilated: lhs feature dimension ({C}) must equal rhs "
                         f"input feature dimension ({I}) times feature_group_count ({G})")
    if O % (G * B):
        raise ValueError(f"conv_general_dilated: rhs output feature dimension ({O}) must be a "
                         f"multiple of feature_group_count * batch_group_count ({G * B})")
    if N % B:
        raise ValueError(f"conv_general_dilated: lhs batch dimension ({N}) must be a multiple "
                         f"of batch_group_count ({B})")
    strides = _ints("window_strides", window_strides, nsp)
    ldil = _ints("lhs_dilation", lhs_dilation or (1,) * nsp, nsp)
    rdil = _ints("rhs_dilation", rhs_dilation or (1,) * nsp, nsp)
    if B > 1:
        # XLA's batch groups: group b is the b-th block of the batch, paired with the b-th
        # block of output features; as feature groups over (N / B, B * C)
        x = _batch_groups_as_features(x, B)
        G = B
    out = _conv_channels_last(x, w, strides, padding, ldil, rdil, G, precision,
                              preferred_element_type)  # (N, out..., O)
    # output axis j holds the logical dimension whose out_spec entry is j; the result holds
    # N at 0, O at the end, spatial dimension i at i - 1
    where = [0, nsp + 1] + list(range(1, nsp + 1))
    return transpose(out, tuple(where[int(i)] for i in np.argsort(dn.out_spec)))


def _batch_groups_as_features(x, groups):
    """(N, spatial..., C) -> (N / groups, spatial..., groups * C), feature b * C + c."""
    from . import reshape, transpose
    N, *sp, C = _aval(x).shape
    nsp = len(sp)
    x = reshape(x, (groups, N // groups, *sp, C))
    x = transpose(x, (1,) + tuple(range(2, 2 + nsp)) + (0, 2 + nsp))
    return reshape(x, (N // groups, *sp, groups * C))


def _conv_channels_last(x, w, strides, padding, ldil, rdil, groups, precision,
                        preferred_element_type):
    """The convolution of x (N, spatial..., C) with w (O, I, spatial...) into
    (N, out..., O).

    The patches are gathered channels-last, (N * out positions, K kernel positions * C), so
    the product is one plain matrix product (BLAS) against the kernel as (K * C, O); feature
    groups add a leading batch dimension to it."""
    from . import dot_general, reshape, slice as lax_slice, stack, transpose
    N, *in_sp, C = _aval(x).shape
    O, I, *k_sp = _aval(w).shape
    nsp = len(k_sp)
    dil_in = [_dilated(n, d) for n, d in zip(in_sp, ldil)]
    eff = [_dilated(k, d) for k, d in zip(k_sp, rdil)]
    pads = _pads("conv_general_dilated", padding, dil_in, eff, strides)
    zero = np.zeros((), _aval(x).dtype)[()]
    x = pad(x, zero, [(0, 0, 0)] + [(lo, hi, d - 1) for (lo, hi), d in zip(pads, ldil)]
            + [(0, 0, 0)])
    full = _aval(x).shape[1:1 + nsp]
    out_sp = [max(0, (n - e) // s + 1) if n >= e else 0 for n, e, s in zip(full, eff, strides)]
    patches = []
    for offset in np.ndindex(*k_sp):
        starts = [0] + [o * d for o, d in zip(offset, rdil)] + [0]
        limits = [N] + [st + (m - 1) * s + 1 if m else st
                        for st, m, s in zip(starts[1:], out_sp, strides)] + [C]
        patches.append(lax_slice(x, starts, limits, [1] + list(strides) + [1]))
    K, M, Cg, Og = math.prod(k_sp), N * math.prod(out_sp), C // groups, O // groups
    cols = stack(patches, 1 + nsp) if K > 1 else patches[0]  # (N, out..., K, C)
    # the kernel as (G, K * C/G, O/G), rows in the patches' (K, C/G) order
    kernel = transpose(reshape(w, (groups, Og, I, K)), (0, 3, 2, 1))
    kernel = reshape(kernel, (groups, K * Cg, Og))
    if groups == 1:
        out = dot_general(reshape(cols, (M, K * C)), reshape(kernel, (K * C, O)),
                          (((1,), (0,)), ((), ())), precision, preferred_element_type)
    else:
        cols = transpose(reshape(cols, (M, K, groups, Cg)), (2, 0, 1, 3))
        out = dot_general(reshape(cols, (groups, M, K * Cg)), kernel,
                          (((2,), (1,)), ((0,), (0,))), precision, preferred_element_type)
        out = transpose(out, (1, 0, 2))  # (M, G, O/G): output features group-major
    return reshape(out, (N, *out_sp, O))


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """`jax.lax.conv_with_general_padding`: conv_general_dilated in the NC.../OI... layout."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """`jax.lax.conv`: conv_general_dilated in the NC.../OI... layout, no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


# layouts conv_transpose assumes when none are given (channels last, as JAX's)
_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def _transpose_pads(k, s, padding):
    """(before, after) padding of the dilated input that makes a transposed convolution of
    kernel size k and stride s undo the forward convolution `padding` described (JAX's and
    Keras' Conv2DTranspose output sizes)."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    elif isinstance(padding, tuple) and len(padding) == 2:
        before, after = k - padding[0] - 1, k - padding[1] - 1
        total = before + after
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return before, total - before


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """`jax.lax.conv_transpose` (what flax's ConvTranspose calls): a convolution of the
    stride-dilated input, padded so that 'SAME' / 'VALID' give the forward convolution's
    input size back; `transpose_kernel=True` flips the kernel's spatial axes and swaps its
    feature axes (the exact gradient of a forward convolution)."""
    from . import rev, transpose
    nd = _aval(lhs).ndim
    if _aval(rhs).ndim != nd or nd < 2:
        raise TypeError(f"conv_transpose: lhs and rhs must have the same number (>= 2) of "
                        f"dimensions, got {_aval(lhs).shape} and {_aval(rhs).shape}")
    if dimension_numbers is None:
        if nd not in _TRANSPOSE_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_LAYOUTS[nd]
    dn = conv_dimension_numbers(_aval(lhs).shape, _aval(rhs).shape, dimension_numbers)
    k_sp = [_aval(rhs).shape[i] for i in dn.rhs_spec[2:]]
    strides = _ints("strides", strides, nd - 2)
    rdil = _ints("rhs_dilation", rhs_dilation or (1,) * (nd - 2), nd - 2)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        per_dim = [padding] * (nd - 2) if isinstance(padding, str) else \
            [tuple(p) for p in padding]
        pads = [_transpose_pads(_dilated(k, r), s, p)
                for k, r, s, p in zip(k_sp, rdil, strides, per_dim)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(nd))
        o, i = dn.rhs_spec[0], dn.rhs_spec[1]
        perm[o], perm[i] = i, o
        rhs = transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * (nd - 2), pads, strides, rdil, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)
