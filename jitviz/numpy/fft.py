"""`jnp.fft` (as `jax.numpy.fft`): the transforms over any axes, composed from the `fft`
primitive (`jitviz.lax.fft`), which transforms the trailing 1 to 3 axes: the axes asked for
are moved last, cropped or zero-padded to the lengths `s`/`n`, transformed (more than three
axes as several transforms, as JAX), scaled by `norm` and moved back.

    jnp.fft.fft(x), ifft, rfft, irfft, hfft, ihfft    one axis (n, axis, norm)
    fft2, ifft2, rfft2, irfft2                         two axes (s, axes=(-2, -1), norm)
    fftn, ifftn, rfftn, irfftn                         any axes (s, axes, norm)
    fftfreq, rfftfreq, fftshift, ifftshift
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes
from ..lax.linalg import FftType
from ..lax.linalg import fft as _lax_fft
from ._core import aval, promote

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _jnp():
    from .. import numpy as jnp
    return jnp


def _transform_trailing(x, fft_type, lengths):
    """The primitive over the trailing len(lengths) axes; JAX's split for more than 3."""
    jnp = _jnp()
    if len(lengths) <= 3:
        return _lax_fft(x, fft_type, tuple(lengths))
    n = 2 if len(lengths) == 4 else 3
    nd = aval(x).ndim
    src = tuple(range(nd - len(lengths), nd - n))
    dst = tuple(range(nd - len(lengths) + n, nd))
    if fft_type in (FftType.RFFT, FftType.FFT):
        x = _lax_fft(x, fft_type, tuple(lengths)[-n:])
        x = jnp.moveaxis(x, src, dst)
        x = _transform_trailing(x, FftType.FFT, lengths[:-n])
        return jnp.moveaxis(x, dst, src)
    x = jnp.moveaxis(x, src, dst)
    x = _transform_trailing(x, FftType.IFFT, lengths[:-n])
    x = jnp.moveaxis(x, dst, src)
    return _lax_fft(x, fft_type, tuple(lengths)[-n:])


def _norm_factor(lengths, func_name, norm, dtype):
    if norm is None or norm == "backward":
        return None
    size = float(math.prod(lengths))
    inverse = func_name.startswith("i")
    if norm == "ortho":
        factor = math.sqrt(size) if inverse else 1 / math.sqrt(size)
    elif norm == "forward":
        factor = size if inverse else 1 / size
    else:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or '
                         '"forward".')
    return np.asarray(factor, np.finfo(dtype).dtype)


def _fft_core(func_name, fft_type, a, s, axes, norm):
    """JAX's `_fft_core`: checks, moves, crops/pads, transforms, scales."""
    jnp = _jnp()
    full_name = f"jax.numpy.fft.{func_name}"
    (arr,) = promote(a)
    if s is not None:
        s = tuple(map(operator.index, s))
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    ndim = aval(arr).ndim
    orig_axes = axes
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = tuple(axes)
    if len(axes) != len(set(a % ndim if ndim else a for a in axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    if orig_axes is not None:
        new_axes = tuple(range(ndim - len(axes), ndim))
        arr = jnp.moveaxis(arr, axes, new_axes)
        axes = new_axes
    shape = aval(arr).shape
    if s is not None:
        in_s = list(shape)
        for axis, n in zip(axes, s):
            in_s[axis] = n
        if fft_type == FftType.IRFFT:
            in_s[-1] = in_s[-1] // 2 + 1
        arr = arr[tuple(slice(n) for n in in_s)]
        pad = [(0, n - m) for n, m in zip(in_s, aval(arr).shape)]
        if any(after for _, after in pad):
            arr = jnp.pad(arr, pad)
        lengths = list(s)
    elif fft_type == FftType.IRFFT:
        lengths = [shape[axis] for axis in axes[:-1]]
        if axes:
            lengths.append(max(0, 2 * (shape[axes[-1]] - 1)))
    else:
        lengths = [shape[axis] for axis in axes]
    out = _transform_trailing(arr, fft_type, lengths) if axes else arr
    factor = _norm_factor(lengths, func_name, norm, aval(out).dtype)
    if factor is not None:
        out = out * factor
    if orig_axes is not None:
        out = jnp.moveaxis(out, axes, orig_axes)
    return out


def _one_axis(func_name, fft_type, a, n, axis, norm):
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"jax.numpy.fft.{func_name} does not support multiple axes. Please "
                         f"use jax.numpy.fft.{func_name}n. Got axis = {list(axis)}.")
    return _fft_core(func_name, fft_type, a, None if n is None else [n], [axis], norm)


def _two_axes(func_name, fft_type, a, s, axes, norm):
    if axes is not None and len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = "
                         f"{list(axes)}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft(a, n=None, axis=-1, norm=None):
    return _one_axis("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
    return _one_axis("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
    return _one_axis("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
    return _one_axis("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a, n=None, axis=-1, norm=None):
    """The FFT of a Hermitian-symmetric signal (given by its first half): real output."""
    jnp = _jnp()
    (a,) = promote(a)
    conj_a = jnp.conj(a)
    nn = (aval(conj_a).shape[axis] - 1) * 2 if n is None else n
    out = _one_axis("hfft", FftType.IRFFT, conj_a, n, axis, norm)
    return out * np.asarray(nn, aval(out).dtype)


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of `hfft`: the first half of the spectrum of a real signal."""
    jnp = _jnp()
    (a,) = promote(a)
    nn = aval(a).shape[axis] if n is None else n
    out = _one_axis("ihfft", FftType.RFFT, a, n, axis, norm)
    return jnp.conj(out) * np.asarray(1 / nn, np.finfo(aval(out).dtype).dtype)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    return _two_axes("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return _two_axes("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return _two_axes("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return _two_axes("irfft2", FftType.IRFFT, a, s, axes, norm)


def fftn(a, s=None, axes=None, norm=None):
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


for _f, _what in [(fft, "the discrete Fourier transform along `axis`"),
                  (ifft, "the inverse discrete Fourier transform along `axis`"),
                  (rfft, "the FFT of a real signal: the n // 2 + 1 non-negative frequencies"),
                  (irfft, "the inverse of `rfft`: a real signal of length n"),
                  (fft2, "the 2-D FFT over `axes`"), (ifft2, "the inverse 2-D FFT"),
                  (rfft2, "the 2-D FFT of a real array"), (irfft2, "the inverse of `rfft2`"),
                  (fftn, "the N-D FFT over `axes` (all by default)"),
                  (ifftn, "the inverse N-D FFT"), (rfftn, "the N-D FFT of a real array"),
                  (irfftn, "the inverse of `rfftn`")]:
    _f.__doc__ = f"`jnp.fft.{_f.__name__}`: {_what} (`norm`: 'backward', 'ortho', 'forward')."


def _freq_setup(name, n, d, dtype):
    """(result dtype, computation dtype) of fftfreq/rfftfreq, after JAX's checks that `n`
    and `d` are single values."""
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. Got n "
                         f"= {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single value. "
                         f"Got d = {list(d)}.")
    out_dtype = dtypes.default_float() if dtype is None else np.dtype(dtype)
    return out_dtype, np.finfo(out_dtype if out_dtype.kind in "fc" else
                               dtypes.default_float()).dtype


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """`jnp.fft.fftfreq`: the sample frequencies [0, 1, ..., -2, -1] / (d n)."""
    jnp = _jnp()
    out_dtype, dtype = _freq_setup("fftfreq", n, d, dtype)
    i = jnp.arange(n, dtype=dtype)
    k = (i + n // 2) % n - n // 2
    return (k / jnp.asarray(d * n, dtype=dtype)).astype(out_dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """`jnp.fft.rfftfreq`: the non-negative sample frequencies [0, 1, ..., n // 2] / (d n)."""
    jnp = _jnp()
    out_dtype, dtype = _freq_setup("rfftfreq", n, d, dtype)
    k = jnp.arange(0, n // 2 + 1, dtype=dtype)
    return (k / jnp.asarray(d * n, dtype=dtype)).astype(out_dtype)


def _shift(x, axes, sign):
    jnp = _jnp()
    (x,) = promote(x)
    shape = aval(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
        shift = [sign * (n // 2) for n in shape]
    elif isinstance(axes, int):
        shift = sign * (shape[axes] // 2)
    else:
        shift = [sign * (shape[ax] // 2) for ax in axes]
    return jnp.roll(x, shift, axes)


def fftshift(x, axes=None):
    """`jnp.fft.fftshift`: the zero frequency moved to the centre of `axes` (all)."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    """`jnp.fft.ifftshift`: the inverse of `fftshift`."""
    return _shift(x, axes, -1)
