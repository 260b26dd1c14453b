"""`jnp.einsum`, lowered to reduce_sum, dot_general, transpose and broadcast_in_dim (no new
primitive), and `jnp.vectorize` / `jnp.apply_along_axis`, built on `jitviz.vmap`."""
from __future__ import annotations

import re

import numpy as np

from .. import lax
from ._core import aval, promote
from .linalg import _dot_operands, _product
from .shape import broadcast_to, transpose


def einsum(subscripts, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None):
    """`jnp.einsum` for a subscripts string with any number of operands, '...' and the
    implicit output (labels seen once, sorted). Operands are contracted left to right, two at
    a time, with one dot_general each; a label only one operand has, and the output lacks,
    is summed first; a label repeated within one operand ('ii->i', 'ii') takes a diagonal.
    Not supported (NotImplementedError): the interleaved (operand, sublist) form, and out=;
    `optimize` is accepted and ignored (the order is always left to right)."""
    if out is not None:
        raise NotImplementedError("jnp.einsum: out= is not supported (arrays are immutable)")
    if not isinstance(subscripts, str):
        raise NotImplementedError("jnp.einsum: the (operand, sublist) form is not supported "
                                  "by jitviz; pass a subscripts string")
    if not operands:
        raise ValueError("No input operands")
    ops = list(promote(*operands)) if len(operands) > 1 else list(promote(operands[0]))
    terms, out_labels = _parse(subscripts.replace(" ", ""), [aval(o).ndim for o in ops])
    for i, (o, t) in enumerate(zip(ops, terms)):
        ops[i], terms[i] = _diagonals(o, t)
    sizes = _label_sizes(terms, ops)
    ops = [_stretch(o, t, sizes) for o, t in zip(ops, terms)]
    op, term = ops[0], terms[0]
    for i in range(1, len(ops)):
        keep = set(out_labels).union(*terms[i + 1:])
        op, term = _contract(op, term, ops[i], terms[i], keep, precision,
                             preferred_element_type)
    op, term = _sum_unused(op, term, set(out_labels))
    return transpose(op, [term.index(c) for c in out_labels]) if term != out_labels else op


def _parse(subscripts, ndims):
    """Input terms and the output term as strings of single-character labels; each '...'
    becomes the operand's trailing broadcast labels (characters that cannot be letters)."""
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins, out = subscripts, None
    terms = ins.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum: {len(terms)} input terms for {len(ndims)} operands")
    for t in terms + ([out] if out is not None else []):
        if re.search(r"[^a-zA-Z.]", t) or t.replace("...", "").count("."):
            raise ValueError(f"einsum: invalid subscript {t!r}")
    ell = [nd - len(t.replace("...", "")) if "..." in t else 0 for t, nd in zip(terms, ndims)]
    width = max(ell, default=0)
    dots = "".join(chr(0x100 + i) for i in range(width))
    expanded = []
    for t, e, nd in zip(terms, ell, ndims):
        t = t.replace("...", dots[width - e:] if e else "")
        if len(t) != nd:
            raise ValueError(f"einsum: operand has {nd} dimensions but subscript {t!r} names "
                             f"{len(t)}")
        expanded.append(t)
    if out is None:
        counts = {c: "".join(expanded).count(c) for c in set("".join(expanded))}
        out = dots + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in dots))
    else:
        out = out.replace("...", dots)
        if len(set(out)) != len(out):
            raise ValueError(f"einsum: output subscript {out!r} repeats a label")
        missing = set(out) - set("".join(expanded))
        if missing:
            raise ValueError(f"einsum: output subscript {sorted(missing)} does not appear in "
                             "the inputs")
    return expanded, out


def _diagonals(op, term):
    """A label repeated within one operand ('ii->i', 'ii') takes the diagonal of those axes
    (a strided slice; the label moves to the end), once per repeat."""
    from .extra import diagonal
    for c in term:
        while term.count(c) > 1:
            i = term.index(c)
            j = term.index(c, i + 1)
            if aval(op).shape[i] != aval(op).shape[j]:
                raise ValueError(f"einsum: dimensions of the repeated label {c!r} differ "
                                 f"({aval(op).shape[i]} vs {aval(op).shape[j]})")
            op = diagonal(op, 0, i, j)
            term = "".join(x for k, x in enumerate(term) if k not in (i, j)) + c
    return op, term


def _label_sizes(terms, ops):
    sizes = {}
    for t, o in zip(terms, ops):
        for c, d in zip(t, aval(o).shape):
            if sizes.get(c, 1) not in (1, d) and d != 1:
                raise ValueError(f"einsum: size of label {c!r} differs between operands "
                                 f"({sizes[c]} vs {d})")
            sizes[c] = d if d != 1 else sizes.get(c, 1)
    return sizes


def _stretch(op, term, sizes):
    """Size-1 dimensions broadcast against the others' (NumPy's '...' broadcasting)."""
    shape = tuple(sizes[c] for c in term)
    return op if shape == aval(op).shape else broadcast_to(op, shape)


def _sum_unused(op, term, keep):
    axes = tuple(i for i, c in enumerate(term) if c not in keep)
    if not axes:
        return op, term
    return lax.reduce_sum(op, axes), "".join(c for c in term if c in keep)


def _contract(a, ta, b, tb, keep, precision, preferred_element_type):
    """One dot_general: labels both share and `keep` needs are batch dimensions, labels
    both share and nothing later needs are contracted. Result labels: batch, a's, b's."""
    a, ta = _sum_unused(a, ta, keep | set(tb))
    b, tb = _sum_unused(b, tb, keep | set(ta))
    shared = [c for c in ta if c in tb]
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    a, b = _dot_operands(a, b)
    dn = ((tuple(ta.index(c) for c in contract), tuple(tb.index(c) for c in contract)),
          (tuple(ta.index(c) for c in batch), tuple(tb.index(c) for c in batch)))
    out = _product(a, b, dn, precision, preferred_element_type)
    term = "".join(batch) + "".join(c for c in ta if c not in shared) + \
        "".join(c for c in tb if c not in shared)
    return out, term


# --- vmap-based wrappers ------------------------------------------------------------------

def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """`jnp.vectorize`: `pyfunc` mapped over the broadcast loop dimensions with nested
    `jitviz.vmap`. `excluded` names positional indices (or keyword names) passed through
    unmapped; `signature` ('(n),(n)->()') gives the core dimensions of each argument."""
    import functools
    core_in, core_out = _parse_signature(signature) if signature is not None else (None, None)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        fixed = {i: a for i, a in enumerate(args) if i in excluded}
        kw_fixed = {k: v for k, v in kwargs.items() if k in excluded}
        mapped_kw = {k: v for k, v in kwargs.items() if k not in excluded}
        names = list(mapped_kw)
        mapped = [a for i, a in enumerate(args) if i not in excluded] + \
            [mapped_kw[k] for k in names]
        # arrays, as JAX makes them (a Python scalar becomes a weakly typed 0-d array);
        # each keeps its own dtype: the function, not vectorize, decides any promotion
        from ._core import is_traced
        from .creation import asarray
        mapped = [m if is_traced(m) else asarray(m) for m in mapped]

        def call(*xs):
            pos, it = [], iter(xs[:len(xs) - len(names)])
            for i in range(len(args)):
                pos.append(fixed[i] if i in fixed else next(it))
            return pyfunc(*pos, **kw_fixed, **dict(zip(names, xs[len(xs) - len(names):])))
        cores = core_in if core_in is not None else [()] * len(mapped)
        if len(cores) != len(mapped):
            raise TypeError(f"wrong number of positional arguments: expected {len(cores)}, "
                            f"got {len(mapped)}")
        return _vectorized_call(call, mapped, cores)
    return wrapped


def _parse_signature(signature):
    m = re.fullmatch(r"\s*((?:\([\w, ]*\),?)*)\s*->\s*((?:\([\w, ]*\),?)*)\s*", signature)
    if not m:
        raise ValueError(f"not a valid gufunc signature: {signature}")
    parse = lambda s: [tuple(d.strip() for d in g.split(",") if d.strip())
                       for g in re.findall(r"\(([\w, ]*)\)", s)]
    return parse(m.group(1)), parse(m.group(2))


def _vectorized_call(call, args, cores):
    """Broadcast the loop dimensions (all but each argument's core ones) and vmap once per
    loop dimension."""
    from ..transforms import vmap
    dims = {}
    loop_shapes = []
    for a, core in zip(args, cores):
        shape = aval(a).shape
        if len(shape) < len(core):
            raise ValueError(f"input with shape {shape} does not have enough dimensions for "
                             f"its core dimensions {core}")
        for name, d in zip(core, shape[len(shape) - len(core):]):
            if dims.setdefault(name, d) != d:
                raise ValueError(f"inconsistent size for core dimension {name!r}: "
                                 f"{dims[name]} vs {d}")
        loop_shapes.append(shape[:len(shape) - len(core)])
    loop = np.broadcast_shapes(*loop_shapes)
    args = [broadcast_to(a, loop + aval(a).shape[len(s):]) if s != loop else a
            for a, s in zip(args, loop_shapes)]
    f = call
    for _ in loop:
        f = vmap(f)
    return f(*args)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """`jnp.apply_along_axis`: `func1d` on each 1-D slice along `axis`, by nested vmaps (as
    JAX); the result's dimensions replace `axis`."""
    from ..transforms import vmap
    from ._core import canonical_axis
    (arr,) = promote(arr)
    nd = aval(arr).ndim
    axis = canonical_axis(axis, nd)

    def func(x):
        return func1d(x, *args, **kwargs)
    for i in range(1, nd - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)
