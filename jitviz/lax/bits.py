"""`lax.population_count`, `lax.clz` and `lax.shift_right_logical`, as `jax.lax`'s, composed
from existing primitives: the operand's bits are read as the *signed* integer of the same width
(`convert_element_type` keeps the bits between same-width integers) and every right shift is
the arithmetic one followed by a mask that clears the copies of the sign bit, which makes it
logical. (Signed, because the CPU backend's right shift of uint64 values loses their low bits:
its helper's result type unifies with float64.) population_count is the classic SWAR bit count
(pairs, nibbles, bytes, then one multiply summing the bytes into the top one); clz smears the
highest set bit into every lower position and counts the ones it did not set.
"""
from __future__ import annotations

import numpy as np

from . import primitives as P

_SIGNED = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _integer_operand(name, x):
    from . import aval_of
    av = aval_of(x)
    P._check_kind(name, av.dtype, P.INT + P.UINT)
    return av


def _as_signed(x, av):
    from . import convert_element_type
    return convert_element_type(x, _SIGNED[av.dtype.itemsize], False)


def _back(u, av):
    from . import convert_element_type
    return convert_element_type(u, av.dtype, av.weak_type)


def _const(value, dt):
    return np.asarray(value, dt)[()]


def _repeat_byte(byte, dt):
    """The byte repeated over dt's width, as a (wrapped) scalar of the signed dtype dt."""
    nbytes = np.dtype(dt).itemsize
    return np.frombuffer(bytes([byte]) * nbytes, dt)[0]


def _popcount_signed(u, dt):
    """The bit count of u's bits (u of the signed dtype dt). Every mask's top bit is clear,
    so each masked arithmetic shift is a logical one; after the first step no field reaches
    the sign bit."""
    nbytes = np.dtype(dt).itemsize
    shr, band = P.shift_right_arithmetic_p.bind, P.and_p.bind
    u = P.sub_p.bind(u, band(shr(u, _const(1, dt)), _repeat_byte(0x55, dt)))
    m2 = _repeat_byte(0x33, dt)
    u = P.add_p.bind(band(u, m2), band(shr(u, _const(2, dt)), m2))
    u = band(P.add_p.bind(u, shr(u, _const(4, dt))), _repeat_byte(0x0F, dt))
    if nbytes == 1:
        return u
    # every byte now holds its count (<= 64); the product by 0x0101.. (wrapping) sums them
    # into the top byte, whose sign bit stays clear
    u = P.mul_p.bind(u, _repeat_byte(0x01, dt))
    return shr(u, _const(8 * (nbytes - 1), dt))


def population_count(x):
    """`jax.lax.population_count`: the number of set bits of each integer (same dtype)."""
    av = _integer_operand("population_count", x)
    dt = _SIGNED[av.dtype.itemsize]
    return _back(_popcount_signed(_as_signed(x, av), dt), av)


def clz(x):
    """`jax.lax.clz`: the number of leading zero bits of each integer (same dtype)."""
    av = _integer_operand("clz", x)
    dt = _SIGNED[av.dtype.itemsize]
    bits = 8 * av.dtype.itemsize
    u = _as_signed(x, av)
    shift = 1
    while shift < bits:
        # every bit below the highest set one becomes set (with the sign bit set, the
        # arithmetic shift sets them all: clz 0, as it should)
        u = P.or_p.bind(u, P.shift_right_arithmetic_p.bind(u, _const(shift, dt)))
        shift *= 2
    count = P.sub_p.bind(_const(bits, dt), _popcount_signed(u, dt))
    return _back(count, av)


def shift_right_logical(x, y):
    """`jax.lax.shift_right_logical`: x >> y filling with zeros whatever x's sign (a shift
    by the bit width or more gives 0, as XLA's)."""
    from . import aval_of
    av = _integer_operand("shift_right_logical", x)
    if aval_of(y).dtype != av.dtype:
        raise TypeError(f"shift_right_logical requires arguments to have the same dtypes, got "
                        f"{av.dtype}, {aval_of(y).dtype}.")
    dt = _SIGNED[av.dtype.itemsize]
    bits = 8 * av.dtype.itemsize
    xs, ys = _as_signed(x, av), _as_signed(y, aval_of(y))
    shifted = P.shift_right_arithmetic_p.bind(xs, ys)
    # keep the low (bits - y) bits: (1 << (bits - y)) - 1, all ones for y = 0 (1 << bits is 0)
    keep = P.sub_p.bind(P.shift_left_p.bind(_const(1, dt), P.sub_p.bind(_const(bits, dt), ys)),
                        _const(1, dt))
    in_range = P.and_p.bind(P.ge_p.bind(ys, _const(0, dt)), P.lt_p.bind(ys, _const(bits, dt)))
    zero = P.broadcast_in_dim_p.bind(_const(0, dt), shape=aval_of(shifted).shape,
                                     broadcast_dimensions=())
    out = P.select_n_p.bind(in_range, zero, P.and_p.bind(shifted, keep))  # XLA: 0 past width
    return _back(out, av)
