"""Pytrees: nested tuples, lists, dicts, namedtuples and None, flattened to leaves.

A `TreeDef` is hashable and comparable (it is part of jit's cache key) and can name each
leaf by its path (`d['a']`, `p.x`, `t[1]`) for error messages and recompile reasons.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple


class NodeType(NamedTuple):
    name: str
    to_iterable: Callable  # node -> (children, aux data)
    from_iterable: Callable  # (aux data, children) -> node
    path_labels: Callable  # aux data, n -> list of path suffixes


_REGISTRY: dict[type, NodeType] = {}


def register_pytree_node(cls, flatten, unflatten, path_labels=None):
    """Make instances of `cls` pytree nodes, as `jax.tree_util.register_pytree_node`."""
    labels = path_labels or (lambda aux, n: [f"[{i}]" for i in range(n)])
    _REGISTRY[cls] = NodeType(cls.__name__, flatten, unflatten, labels)


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (t, None), lambda _, c: list(c))
register_pytree_node(
    dict,
    lambda d: (tuple(d[k] for k in _sorted_keys(d)), tuple(_sorted_keys(d))),
    lambda keys, c: dict(zip(keys, c)),
    lambda keys, n: [f"[{k!r}]" for k in keys])


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError:
        return sorted(d, key=repr)


def _node_type(x):
    t = type(x)
    nt = _REGISTRY.get(t)
    if nt is not None:
        return nt
    if isinstance(x, tuple) and hasattr(t, "_fields"):  # namedtuple
        return NodeType(t.__name__, lambda n: (tuple(n), t),
                        lambda cls, c: cls(*c), lambda cls, n: [f".{f}" for f in cls._fields])
    return None


class TreeDef:
    """The structure of a pytree without its leaves."""

    __slots__ = ("kind", "aux", "children", "num_leaves", "_hash")

    def __init__(self, kind, aux, children):
        self.kind = kind  # None for a leaf, "None" for None, else the node type
        self.aux = aux
        self.children = tuple(children)
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in self.children)
        self._hash = hash((self.kind if isinstance(self.kind, (str, type(None))) else self.kind.name,
                           _hashable(aux), self.children))

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return (isinstance(other, TreeDef) and self._hash == other._hash
                and _kind_key(self.kind) == _kind_key(other.kind)
                and self.aux == other.aux and self.children == other.children)

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self):
        if self.kind is None:
            return "*"
        if self.kind == "None":
            return "None"
        inner = [c._str() for c in self.children]
        name = self.kind.name
        if name == "tuple":
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
        if name == "list":
            return "[" + ", ".join(inner) + "]"
        if name == "dict":
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.aux, inner)) + "}"
        return f"{name}(" + ", ".join(inner) + ")"

    def unflatten(self, leaves):
        it = iter(leaves)
        out = self._build(it)
        return out

    def _build(self, it):
        if self.kind is None:
            return next(it)
        if self.kind == "None":
            return None
        return self.kind.from_iterable(self.aux, [c._build(it) for c in self.children])

    def leaf_paths(self, prefix=""):
        """One readable path per leaf, in flattening order."""
        if self.kind is None:
            return [prefix]
        if self.kind == "None":
            return []
        labels = self.kind.path_labels(self.aux, len(self.children))
        out = []
        for label, child in zip(labels, self.children):
            out.extend(child.leaf_paths(prefix + label))
        return out

    def describe_difference(self, other: "TreeDef") -> str:
        """How `other` differs from `self`, in words (for recompile reasons)."""
        return _tree_diff(self, other, "") or "the same structure"


def _kind_key(kind):
    return kind if kind is None or isinstance(kind, str) else (kind.name, kind.from_iterable.__code__)


def _hashable(aux):
    try:
        hash(aux)
        return aux
    except TypeError:
        return repr(aux)


LEAF = TreeDef(None, None, ())
NONE = TreeDef("None", None, ())


def tree_flatten(tree, is_leaf=None):
    leaves: list = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _flatten(x, leaves, is_leaf):
    if x is None:
        return NONE
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return LEAF
    nt = _node_type(x)
    if nt is None:
        leaves.append(x)
        return LEAF
    children, aux = nt.to_iterable(x)
    return TreeDef(nt, aux, [_flatten(c, leaves, is_leaf) for c in children])


def tree_unflatten(treedef: TreeDef, leaves):
    return treedef.unflatten(leaves)


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_map(f, tree, *rest):
    leaves, treedef = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


def tree_structure(tree):
    return tree_flatten(tree)[1]


def _tree_diff(a: TreeDef, b: TreeDef, path: str) -> str:
    if a == b:
        return ""
    if _kind_key(a.kind) != _kind_key(b.kind):
        return f"{path or 'the value'} was {_describe_kind(a)} and is now {_describe_kind(b)}"
    if a.aux != b.aux:
        if a.kind is not None and getattr(a.kind, "name", "") == "dict":
            added = [k for k in b.aux if k not in a.aux]
            removed = [k for k in a.aux if k not in b.aux]
            parts = []
            if added:
                parts.append("added keys " + ", ".join(map(repr, added)))
            if removed:
                parts.append("removed keys " + ", ".join(map(repr, removed)))
            return f"{path or 'the dict'}: " + "; ".join(parts)
        return f"{path or 'the value'}: {a.aux!r} became {b.aux!r}"
    if len(a.children) != len(b.children):
        return (f"{path or 'the value'} had {len(a.children)} elements and now has "
                f"{len(b.children)}")
    labels = a.kind.path_labels(a.aux, len(a.children))
    for label, ca, cb in zip(labels, a.children, b.children):
        d = _tree_diff(ca, cb, path + label)
        if d:
            return d
    return ""


def _describe_kind(t: TreeDef) -> str:
    if t.kind is None:
        return "a leaf (array or scalar)"
    if t.kind == "None":
        return "None"
    return f"a {t.kind.name} of {len(t.children)}"
