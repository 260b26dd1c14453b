"""`jitviz.random`: counter-based random numbers (Threefry-2x32, as JAX), built from IR
primitives, so they are reproducible, traceable, and compile on every backend.

    key = random.PRNGKey(0)               # uint32[2], JAX's key layout
    key, sub = random.split(key)
    x = random.normal(sub, (3, 4))

A key is a plain `uint32[2]` array; the bits for element i of a draw are the Threefry hash of
the counter i under the key (`threefry2x32`, an elementwise primitive on uint32), so the same
key gives the same numbers in eager mode, under `jit`, on the CPU (Numba) and CUDA backends,
and the same bits as JAX 0.10 (`jax_threefry_partitionable`, its default) for `PRNGKey`,
`split`, `fold_in`, `bits`, `uniform`, `randint`, `bernoulli`. `normal` uses its own float32
inverse error function (equal to JAX's to a few ulps).

Everything about the primitive lives here, next to its definition: its shape rule and NumPy
implementation, its batching rule and non-differentiability (the transform tables), and one
CPU and one CUDA lowering rule with the scalar hash they call (`register_lowering`).

Reusing a key inside a jitted function (two draws from the same key value) is reported as a
`KeyReuseWarning` naming both lines: split the key instead.
"""
from __future__ import annotations

import math

import numpy as np

from .core.ir import ShapedArray
from .core.registry import PRIMITIVES, primitive, register_lowering
from .core.trace import Tracer, current_trace
from .errors import JitvizWarning
from .lax import primitives as P
from .transforms import declare_non_differentiable, register_batch
from .transforms.batching import elementwise_rule

_M32 = 0xFFFFFFFF
_ROT = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA


# --- the hash ---------------------------------------------------------------------------------

def threefry2x32_numpy(k0, k1, x0, x1):
    """Threefry-2x32 with 20 rounds on uint32 arrays; returns (y0, y1)."""
    k0, k1, x0, x1 = np.broadcast_arrays(*[np.asarray(a, np.uint32) for a in (k0, k1, x0, x1)])
    with np.errstate(over="ignore"):
        ks = (k0, k1, k0 ^ k1 ^ np.uint32(_PARITY))
        x0 = x0 + ks[0]
        x1 = x1 + ks[1]
        for i in range(5):
            for r in _ROT[i % 2]:
                x0 = x0 + x1
                x1 = (x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r))
                x1 = x0 ^ x1
            x0 = x0 + ks[(i + 1) % 3]
            x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0, x1


def threefry2x32_scalar(k0, k1, x0, x1, word):
    """The same hash on one element, in 64-bit integer arithmetic masked to 32 bits: plain
    Python that Numba compiles for the CPU and for CUDA devices (and the CUDA simulator
    runs as it is). `word`: 0 -> y0, 1 -> y1, 2 -> y0 ^ y1."""
    m = 0xFFFFFFFF
    a0 = np.int64(k0) & m
    a1 = np.int64(k1) & m
    a2 = a0 ^ a1 ^ 0x1BD11BDA
    v0 = (np.int64(x0) + a0) & m
    v1 = (np.int64(x1) + a1) & m
    for i in range(5):
        if i % 2 == 0:
            r0, r1, r2, r3 = 13, 15, 26, 6
        else:
            r0, r1, r2, r3 = 17, 29, 16, 24
        for r in (r0, r1, r2, r3):
            v0 = (v0 + v1) & m
            v1 = ((v1 << r) | (v1 >> (32 - r))) & m
            v1 = v0 ^ v1
        j = (i + 1) % 3
        ka = a0 if j == 0 else (a1 if j == 1 else a2)
        j2 = (i + 2) % 3
        kb = a0 if j2 == 0 else (a1 if j2 == 1 else a2)
        v0 = (v0 + ka) & m
        v1 = (v1 + kb + i + 1) & m
    if word == 0:
        return v0
    if word == 1:
        return v1
    return v0 ^ v1


def _threefry_rule(k0, k1, x0, x1, *, word):
    for a in (k0, k1, x0, x1):
        if a.dtype != np.uint32:
            raise TypeError("threefry2x32 requires uint32 arguments, got "
                            + ", ".join(b.dtype.name for b in (k0, k1, x0, x1)))
    if word not in (0, 1, 2):
        raise TypeError(f"threefry2x32 word must be 0, 1 or 2 (xor), got {word!r}")
    shape = P.broadcast_shapes_scalar("threefry2x32", k0.shape, k1.shape, x0.shape, x1.shape)
    return ShapedArray(shape, np.uint32)


def _threefry_impl(k0, k1, x0, x1, *, word):
    y0, y1 = threefry2x32_numpy(k0, k1, x0, x1)
    return (y0, y1, y0 ^ y1)[word]


def _cpu_threefry(args, in_dtypes, out_dtype, params):
    """The CPU backend's elementwise rule: a call of the scalar hash, which the backend
    compiles with Numba as `rt.threefry2x32` (its helper, registered with the rule)."""
    return f"rt.threefry2x32({args[0]}, {args[1]}, {args[2]}, {args[3]}, {int(params['word'])})"


def _cuda_threefry(args, dts, out, params):
    """The CUDA backend's elementwise rule: a call of the hash, a device function in the
    kernels' namespace (the helper registered with the rule)."""
    return f"threefry2x32({args[0]}, {args[1]}, {args[2]}, {args[3]}, {int(params['word'])})"


threefry2x32_p = PRIMITIVES.get("threefry2x32") or primitive(
    "threefry2x32", abstract_eval=_threefry_rule, impl=_threefry_impl, kind="elementwise")
# a hash of integers: no derivative; vectorized as any elementwise primitive
declare_non_differentiable(threefry2x32_p)
register_batch(threefry2x32_p, elementwise_rule(threefry2x32_p))


# an elementwise primitive: it fuses into kernels like any other; both Numba targets compile
# the same scalar hash as their helper (named as the rules' text calls it)
register_lowering(threefry2x32_p, "cpu.expr", _cpu_threefry,
                  helpers=[("threefry2x32", threefry2x32_scalar)])
register_lowering(threefry2x32_p, "cuda.expr", _cuda_threefry,
                  helpers=[("threefry2x32", threefry2x32_scalar)])


def threefry_2x32(k0, k1, x0, x1, word):
    return threefry2x32_p.bind(k0, k1, x0, x1, word=word)


# --- keys ---------------------------------------------------------------------------------------

class KeyReuseWarning(JitvizWarning):
    """A random key was used for two draws inside one traced function."""


def _u32(v):
    from .array import as_array
    return as_array(np.asarray(v, np.uint32))


def _batch_of_keys(shape):
    """JAX's ValueError (a batch of keys is a valid value, where one key is expected)."""
    raise ValueError(f"this function takes a single key, got a key array of shape {shape}: "
                     "index it (keys[0]) or vmap over it")


def _words(key):
    from .transforms._util import aval_of
    if isinstance(key, KeyArray):
        if key.shape != ():
            _batch_of_keys(key.shape)
        key = key._data
    av = aval_of(key)
    if av.dtype == np.uint32 and av.ndim > 1 and av.shape[-1] == 2:
        _batch_of_keys(av.shape)
    if av.shape != (2,) or av.dtype != np.uint32:
        raise TypeError(f"a PRNG key is a typed key (from random.key) or a uint32[2] array "
                        f"(from random.PRNGKey), got {av.str_short()}")
    _note_use(key)
    k0 = P.reshape_p.bind(P.slice_p.bind(key, start_indices=(0,), limit_indices=(1,),
                                         strides=None), new_sizes=(), dimensions=None)
    k1 = P.reshape_p.bind(P.slice_p.bind(key, start_indices=(1,), limit_indices=(2,),
                                         strides=None), new_sizes=(), dimensions=None)
    return k0, k1


def _note_use(key):
    """Key reuse inside a trace: the same traced key value consumed twice."""
    if not isinstance(key, Tracer):
        return
    trace = current_trace()
    if trace is None:
        return
    from .core.source import user_source_info
    root = trace.root
    uses = root.__dict__.setdefault("_random_key_uses", {})
    src = user_source_info()
    prev = uses.get(key._var.id)
    if prev is None:
        uses[key._var.id] = src
        return
    from .diagnostics import describe_line
    here = describe_line(src.file, src.line) if src else "?"
    first = describe_line(prev.file, prev.line) if prev else "?"
    msg = (f"random key reused: the key used at {here} was already used at {first} in the "
           f"same traced function ({root.fun_name}), so both draws are correlated (identical "
           "for the same shape). Split the key: `key, sub = random.split(key)`.")
    report = root.report
    if report is not None:
        report.__dict__.setdefault("key_reuses", []).append((src, prev, msg))
    from .config import config
    if getattr(config, "warn_side_effects", True):
        from .diagnostics import _warn_at_user_line
        _warn_at_user_line(KeyReuseWarning(msg))


def PRNGKey(seed):  # noqa: N802  (JAX's name)
    """A key from an integer seed: uint32[2] = (high 32 bits, low 32 bits)."""
    if isinstance(seed, Tracer):
        if seed.dtype.kind not in "iu" or seed.shape != ():
            raise TypeError(f"PRNG key seed must be an integer scalar; got {seed.aval}")
        lo = P.convert_element_type_p.bind(seed, new_dtype=np.dtype(np.uint32), weak_type=False)
        if seed.dtype.itemsize == 8:
            hi = P.convert_element_type_p.bind(
                P.shift_right_arithmetic_p.bind(seed, np.asarray(32, seed.dtype)),
                new_dtype=np.dtype(np.uint32), weak_type=False)
        else:
            hi = _u32(0)
        return P.stack_p.bind(_bcast0(hi), _bcast0(lo), axis=0)
    s = np.asarray(seed)
    if s.shape != () or s.dtype.kind not in "iu" and not isinstance(seed, int):
        raise TypeError(f"PRNG key seed must be an integer scalar; got {seed!r}")
    s = int(seed)
    if not -2 ** 63 <= s < 2 ** 64:
        raise OverflowError(f"PRNG key seed {s} does not fit in 64 bits")
    hi = 0 if -2 ** 31 <= s < 2 ** 32 and np.asarray(seed).dtype.itemsize <= 4 or \
        -2 ** 31 <= s < 2 ** 31 else (s >> 32) & _M32
    from .array import as_array
    return as_array(np.array([hi, s & _M32], np.uint32))


class KeyDtype:
    """The dtype of typed keys, printed as JAX prints it: `key<fry>` (Threefry keys)."""

    name = "key<fry>"

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyDtype) or other == self.name

    def __hash__(self):
        return hash(self.name)


key_dtype = KeyDtype()


class KeyAval:
    """The abstract type of typed keys (`jax.typeof(random.key(0))`): a shape over the
    `key<fry>` dtype, printed as JAX prints it (`key<fry>[]`, `ShapedArray(key<fry>[3])`).
    It describes what the user holds; a jaxpr carries the keys' uint32 data instead."""

    __slots__ = ("shape",)
    dtype = key_dtype
    weak_type = False

    def __init__(self, shape):
        self.shape = tuple(int(d) for d in shape)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def str_short(self):
        return f"{key_dtype.name}[{','.join(map(str, self.shape))}]"

    __str__ = str_short

    def __repr__(self):
        return f"ShapedArray({self.str_short()})"

    def __eq__(self, other):
        return isinstance(other, KeyAval) and self.shape == other.shape

    def __hash__(self):
        return hash((KeyAval, self.shape))


class KeyArray:
    """A typed key array, as `jax.random.key` makes: keys of shape `shape` over uint32 data
    of shape `shape + (2,)` (`random.key_data`). Every function of `jitviz.random` takes it
    where it takes a raw `PRNGKey`, and returns typed keys for typed keys. It is a pytree
    whose one leaf is the data, so it passes through jit, vmap and lax control flow."""

    __slots__ = ("_data",)
    __array_priority__ = 2000  # NumPy leaves `np_value + key` to Python (a TypeError)

    def __init__(self, data):
        self._data = data

    dtype = key_dtype
    shape = property(lambda self: tuple(self._data.shape[:-1]))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __repr__(self):
        if isinstance(self._data, Tracer):
            return f"Traced<key<fry>{list(self.shape)}> overlaying {self._data!r}"
        return f"Array({self.shape}, dtype=key<fry>) overlaying:\n{np.asarray(self._data)}"

    __str__ = __repr__

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        if any(i is Ellipsis for i in idx):  # the key data's own axis stays whole
            idx = idx + (slice(None),)
        return KeyArray(self._data[idx])

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        from .numpy import reshape
        return KeyArray(reshape(self._data, tuple(shape) + (2,)))

    @property
    def T(self):  # noqa: N802 - NumPy's name
        from .numpy import transpose
        return KeyArray(transpose(self._data, tuple(range(self.ndim))[::-1] + (self.ndim,)))

    def block_until_ready(self):
        return self

    def __array__(self, dtype=None, copy=None):
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array. "
                        "Use jitviz.random.key_data(arr) if you wish to extract the "
                        "underlying integer array.")


def _flatten_key(k):
    return (k._data,), None


def _unflatten_key(_, children):
    return KeyArray(children[0])


def key(seed, *, impl=None):
    """A typed key (`Array((), dtype=key<fry>)`), as `jax.random.key`; `PRNGKey(seed)` is
    the same key as raw uint32[2] data."""
    _check_impl(impl)
    return KeyArray(PRNGKey(seed))


def key_data(keys):
    """The uint32 data under typed keys (shape `keys.shape + (2,)`); a raw key as it is."""
    return keys._data if isinstance(keys, KeyArray) else keys


def wrap_key_data(key_bits_array, *, impl=None):
    """Typed keys over uint32 data whose last axis is 2 (what `key_data` returns)."""
    _check_impl(impl)
    from .transforms._util import aval_of
    av = aval_of(key_bits_array)
    if av.dtype != np.uint32 or not av.shape or av.shape[-1] != 2:
        raise TypeError(f"wrap_key_data takes uint32 data whose last axis is 2 (the key "
                        f"data of Threefry keys), got {av.str_short()}")
    return KeyArray(key_bits_array)


def _check_impl(impl):
    if impl not in (None, "threefry2x32"):
        raise ValueError(f"jitviz.random has one PRNG implementation, 'threefry2x32'; got "
                         f"impl={impl!r}")


def _like_key(key, data):
    """New key data typed as `key` was: typed keys give typed keys."""
    return KeyArray(data) if isinstance(key, KeyArray) else data


def _bcast0(x):
    return P.reshape_p.bind(x, new_sizes=(), dimensions=None) if getattr(x, "ndim", 0) else x


def _split_words(key, num):
    k0, k1 = _words(key)
    lo = P.iota_p.bind(dtype=np.dtype(np.uint32), shape=(num,), dimension=0)
    zero = _u32(0)
    y0 = threefry_2x32(k0, k1, zero, lo, 0)
    y1 = threefry_2x32(k0, k1, zero, lo, 1)
    return P.stack_p.bind(y0, y1, axis=1)


def split(key, num=2):
    """`num` new keys: shape (num, 2) for a raw key, a key array of shape (num,) for a
    typed one."""
    return _like_key(key, _split_words(key, int(num)))


def fold_in(key, data):
    """A new key from `key` and an integer `data` (the hash of counter `data`)."""
    k0, k1 = _words(key)
    from .transforms._util import aval_of
    d = data if isinstance(data, Tracer) else np.asarray(data)
    if aval_of(d).shape != ():
        raise TypeError("fold_in data must be a scalar integer")
    if isinstance(d, Tracer):
        d = P.convert_element_type_p.bind(d, new_dtype=np.dtype(np.uint32), weak_type=False)
    else:
        d = _u32(int(d) & _M32)
    zero = _u32(0)
    return _like_key(key, P.stack_p.bind(threefry_2x32(k0, k1, zero, d, 0),
                                         threefry_2x32(k0, k1, zero, d, 1), axis=0))


def _shape(shape):
    if shape is None:
        return ()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def bits(key, shape=(), dtype=np.uint32):
    """Uniform random bits (uint32, or uint64 from two words)."""
    from . import dtypes
    shape = _shape(shape)
    dtype = dtypes.requested_dtype(dtype)  # uint64 is uint32 without x64, as in JAX
    k0, k1 = _words(key)
    n = max(math.prod(shape), 1)
    if n >= 2 ** 32:
        raise NotImplementedError("random bits arrays of 2**32 or more elements")
    lo = P.iota_p.bind(dtype=np.dtype(np.uint32), shape=(n,), dimension=0)
    zero = _u32(0)
    if dtype == np.uint32:
        out = threefry_2x32(k0, k1, zero, lo, 2)
    elif dtype == np.uint64:
        hi = P.convert_element_type_p.bind(threefry_2x32(k0, k1, zero, lo, 0),
                                           new_dtype=np.dtype(np.uint64), weak_type=False)
        low = P.convert_element_type_p.bind(threefry_2x32(k0, k1, zero, lo, 1),
                                            new_dtype=np.dtype(np.uint64), weak_type=False)
        out = P.or_p.bind(P.shift_left_p.bind(hi, np.asarray(32, np.uint64)), low)
    else:
        raise TypeError(f"random bits of dtype {dtype.name}: use uint32 or uint64")
    return P.reshape_p.bind(out, new_sizes=shape, dimensions=None) if shape != (n,) else out


def _float_dtype(dtype):
    from . import dtypes
    # float64 without x64 is float32 with JAX's warning
    dt = dtypes.requested_dtype(dtype) if dtype is not None else dtypes.default_float()
    if dt.kind != "f" or dt.itemsize not in (4, 8):
        raise TypeError(f"random floats of dtype {dt.name}: use float32 or float64")
    return dt


def _const(v, dtype):
    from .transforms._util import scalar
    return scalar(v, dtype)


def _as_operand(v, dtype):
    """A bound (Python number, array, tracer) of exactly `dtype`."""
    if isinstance(v, Tracer):
        if v.dtype != dtype or v.weak_type:
            return P.convert_element_type_p.bind(v, new_dtype=np.dtype(dtype), weak_type=False)
        return v
    from .array import as_array
    return as_array(np.asarray(v, dtype))


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval), the bits JAX draws for the same key."""
    shape = _shape(shape)
    dt = _float_dtype(dtype)
    nmant = 23 if dt.itemsize == 4 else 52
    udt = np.dtype(np.uint32) if dt.itemsize == 4 else np.dtype(np.uint64)
    b = bits(key, shape, udt)
    mant = P.shift_right_arithmetic_p.bind(b, np.asarray(8 * dt.itemsize - nmant, udt))
    # (1.m - 1.0) == m * 2**-nmant exactly: JAX's bitcast without a bitcast primitive
    floats = P.mul_p.bind(P.convert_element_type_p.bind(mant, new_dtype=dt, weak_type=False),
                          _const(2.0 ** -nmant, dt))
    lo, hi = _as_operand(minval, dt), _as_operand(maxval, dt)
    span = P.sub_p.bind(hi, lo)
    floats = P.add_p.bind(P.mul_p.bind(floats, _bshape(span, shape)), _bshape(lo, shape))
    return P.max_p.bind(_bshape(lo, shape), floats)


def _bshape(x, shape):
    from .transforms._util import aval_of
    av = aval_of(x)
    if av.shape == tuple(shape) or av.ndim == 0:
        return x
    return P.broadcast_in_dim_p.bind(x, shape=tuple(shape), broadcast_dimensions=tuple(
        range(len(shape) - av.ndim, len(shape))))


# float32 inverse error function (Giles' approximation, as XLA's ErfInv32)
_ERFINV_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_BIG = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _erf_inv(x, dt):
    w = P.neg_p.bind(P.log1p_p.bind(P.neg_p.bind(P.mul_p.bind(x, x))))
    small = P.lt_p.bind(w, _const(5.0, dt))
    ws = P.sub_p.bind(w, _const(2.5, dt))
    wb = P.sub_p.bind(P.sqrt_p.bind(w), _const(3.0, dt))
    w2 = P.select_n_p.bind(small, wb, ws)
    p = P.select_n_p.bind(small, _full_like(w, _ERFINV_BIG[0], dt),
                          _full_like(w, _ERFINV_SMALL[0], dt))
    for cs, cb in zip(_ERFINV_SMALL[1:], _ERFINV_BIG[1:]):
        coef = P.select_n_p.bind(small, _full_like(w, cb, dt), _full_like(w, cs, dt))
        p = P.add_p.bind(coef, P.mul_p.bind(p, w2))
    out = P.mul_p.bind(p, x)
    edge = P.eq_p.bind(P.abs_p.bind(x), _const(1.0, dt))
    inf = P.mul_p.bind(x, _const(np.inf, dt))
    return P.select_n_p.bind(edge, out, inf)


def _full_like(x, v, dt):
    from .transforms._util import aval_of, full
    return full(aval_of(x).shape, v, dt)


def normal(key, shape=(), dtype=None):
    """Standard normal floats: sqrt(2) * erfinv(u), u uniform in (-1, 1) (JAX's method)."""
    shape = _shape(shape)
    dt = _float_dtype(dtype)
    lo = np.nextafter(np.asarray(-1.0, dt), np.asarray(0.0, dt))
    u = uniform(key, shape, dt, lo, 1.0)
    return P.mul_p.bind(_const(np.sqrt(2.0), dt), _erf_inv(u, dt))


def randint(key, shape, minval, maxval, dtype=np.int32):
    """Integers in [minval, maxval) (JAX's double-width modulus method)."""
    from . import dtypes
    shape = _shape(shape)
    dt = dtypes.requested_dtype(dtype)  # int64 is int32 without x64, as in JAX
    if dt.kind not in "iu" or dt.itemsize != 4:
        raise TypeError(f"randint supports int32 and uint32, got {dt.name}")
    info = np.iinfo(dt)
    lo = _as_operand(np.clip(minval, info.min, info.max) if not isinstance(minval, Tracer)
                     else minval, dt)
    hi_raw = maxval
    hi = _as_operand(np.clip(maxval, info.min, info.max) if not isinstance(maxval, Tracer)
                     else maxval, dt)
    keys = _split_words(key, 2)
    k1 = P.reshape_p.bind(P.slice_p.bind(keys, start_indices=(0, 0), limit_indices=(1, 2),
                                         strides=None), new_sizes=(2,), dimensions=None)
    k2 = P.reshape_p.bind(P.slice_p.bind(keys, start_indices=(1, 0), limit_indices=(2, 2),
                                         strides=None), new_sizes=(2,), dimensions=None)
    higher, lower = bits(k1, shape), bits(k2, shape)
    u = np.dtype(np.uint32)
    span = P.convert_element_type_p.bind(P.sub_p.bind(hi, lo), new_dtype=u, weak_type=False)
    span = P.select_n_p.bind(P.le_p.bind(hi, lo), span, _const(1, u))
    if not isinstance(hi_raw, Tracer) and int(np.max(hi_raw)) > info.max:
        span = P.select_n_p.bind(P.gt_p.bind(hi, lo), span, P.add_p.bind(span, _const(1, u)))
    mult = P.rem_p.bind(_const(2 ** 16, u), span)
    mult = P.rem_p.bind(P.mul_p.bind(mult, mult), span)
    span_b, mult_b = _bshape(span, shape), _bshape(mult, shape)
    off = P.add_p.bind(P.mul_p.bind(P.rem_p.bind(higher, span_b), mult_b),
                       P.rem_p.bind(lower, span_b))
    off = P.rem_p.bind(off, span_b)
    return P.add_p.bind(_bshape(lo, shape), P.convert_element_type_p.bind(
        off, new_dtype=dt, weak_type=False))


def bernoulli(key, p=0.5, shape=None):
    """Booleans, True with probability p."""
    from .transforms._util import aval_of
    pv = p if isinstance(p, Tracer) else np.asarray(p, np.float32 if isinstance(p, float)
                                                    else None)
    pa = aval_of(pv)
    dt = pa.dtype if pa.dtype.kind == "f" else np.dtype(np.float32)
    shape = pa.shape if shape is None else _shape(shape)
    return P.lt_p.bind(uniform(key, shape, dt), _bshape(_as_operand(pv, dt), shape))


def permutation(key, x, axis=0):
    """A random permutation of `range(x)` (an int) or of `x`'s entries along `axis`.

    JAX shuffles by sorting random 32-bit keys; jitviz has no sort primitive, so the sorted
    position of each element is its rank among the keys (comparisons and a sum: fine for the
    sizes one permutes in examples, O(n^2) work), and the elements are scattered there."""
    from .transforms._util import aval_of
    if isinstance(x, (int, np.integer)) or (not isinstance(x, Tracer) and np.ndim(x) == 0):
        n = int(x)
        items = P.iota_p.bind(dtype=np.dtype(np.int32), shape=(n,), dimension=0)
        return _shuffle(key, items, n)
    n = aval_of(x).shape[axis]
    ind = _shuffle(key, P.iota_p.bind(dtype=np.dtype(np.int32), shape=(n,), dimension=0), n)
    from .transforms._util import moveaxis
    xm = moveaxis(x, axis, 0) if axis else x
    out = P.gather_p.bind(xm, ind, axes=(0,))
    return moveaxis(out, 0, axis) if axis else out


def _shuffle(key, items, n):
    rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        keys = _split_words(key, 2)
        key = P.reshape_p.bind(P.slice_p.bind(keys, start_indices=(0, 0), limit_indices=(1, 2),
                                              strides=None), new_sizes=(2,), dimensions=None)
        sub = P.reshape_p.bind(P.slice_p.bind(keys, start_indices=(1, 0), limit_indices=(2, 2),
                                              strides=None), new_sizes=(2,), dimensions=None)
        sort_keys = bits(sub, (n,))
        a = P.broadcast_in_dim_p.bind(sort_keys, shape=(n, n), broadcast_dimensions=(0,))
        b = P.broadcast_in_dim_p.bind(sort_keys, shape=(n, n), broadcast_dimensions=(1,))
        i = P.iota_p.bind(dtype=np.dtype(np.int32), shape=(n, n), dimension=0)
        j = P.iota_p.bind(dtype=np.dtype(np.int32), shape=(n, n), dimension=1)
        before = P.or_p.bind(P.lt_p.bind(b, a), P.and_p.bind(P.eq_p.bind(b, a),
                                                            P.lt_p.bind(j, i)))
        rank = P.reduce_sum_p.bind(P.convert_element_type_p.bind(
            before, new_dtype=np.dtype(np.int32), weak_type=False), axes=(1,))
        items = P.scatter_p.bind(items, items, rank, axes=(0,), mode="set")
    return items


__all__ = ["PRNGKey", "key", "key_data", "wrap_key_data", "split", "fold_in",
           "bits", "uniform", "normal", "randint",
           "bernoulli", "permutation", "KeyReuseWarning", "threefry2x32_p"]


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal floats truncated to (lower, upper), JAX's method: uniform between
    erf(lower / sqrt 2) and erf(upper / sqrt 2), through sqrt(2) erfinv, clipped inside the
    bounds. Concrete bounds use Python's erf; traced ones the `lax.erf` primitive."""
    from . import numpy as jnp
    dt = _float_dtype(dtype)
    if shape is None:
        shape = np.broadcast_shapes(np.shape(lower), np.shape(upper))
    shape = _shape(shape)
    a, b = (_erf_of_bound(v / np.sqrt(2.0), dt) for v in (lower, upper))
    u = uniform(key, shape, dt, a, b)
    out = P.mul_p.bind(_const(np.sqrt(2.0), dt), _erf_inv(u, dt))
    lo = jnp.nextafter(jnp.asarray(lower, dt), np.asarray(np.inf, dt))
    hi = jnp.nextafter(jnp.asarray(upper, dt), np.asarray(-np.inf, dt))
    return jnp.clip(out, lo, hi)


def _erf_of_bound(v, dt):
    if isinstance(v, Tracer):
        from .lax import erf
        return erf(v)
    return np.asarray(np.vectorize(math.erf)(np.asarray(v, np.float64)), dt)


__all__.append("truncated_normal")


def _register_key_pytree():
    from .tree import register_pytree_node
    register_pytree_node(KeyArray, _flatten_key, _unflatten_key)


_register_key_pytree()

from .random_samplers import *  # noqa: E402,F401,F403  (the distributions: random_samplers.py)
