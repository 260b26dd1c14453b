"""Pytrees: nested tuples, lists, dicts, namedtuples, None and registered classes, flattened
to leaves — `jax.tree_util` and `jax.tree` (both names live here; `jitviz.tree_util` re-exports
the `tree_*` ones).

A `TreeDef` (JAX's `PyTreeDef`, printed the same way) is hashable and comparable (it is part
of jit's cache key) and can name each leaf by its path (`d['a']`, `p.x`, `t[1]`) for error
messages and recompile reasons; `tree_flatten_with_path` gives the same paths as JAX's key
objects (`DictKey`, `SequenceKey`, `GetAttrKey`, `FlattenedIndexKey`).
"""
from __future__ import annotations

import builtins
import collections
import dataclasses
import difflib
import functools
import inspect
import operator
from typing import Any, Callable, NamedTuple


# --- key paths (jax.tree_util's key classes, with JAX's repr and str) ---------------------------

@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The index of a child of a tuple or list: `[0]`."""
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    """The key of a child of a dict: `['a']`."""
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The attribute of a namedtuple or dataclass child: `.x`."""
    name: str

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """The position of a child of a class registered without keys: `[<flat index 0>]`."""
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


def keystr(keys, *, simple=False, separator=""):
    """A key path as text, as `jax.tree_util.keystr`: `['a'][0].x`, or with `simple=True`
    the bare keys joined by `separator` (`a/0/x`)."""
    if not simple:
        return separator.join(str(k) for k in keys)
    return separator.join(_simple_key(k) for k in keys)


def _simple_key(k):
    for attr in ("idx", "key", "name"):
        if hasattr(k, attr):
            return str(getattr(k, attr))
    return str(k)


# --- the registry ------------------------------------------------------------------------------

class NodeType(NamedTuple):
    name: str
    to_iterable: Callable  # node -> (children, aux data)
    from_iterable: Callable  # (aux data, children) -> node
    path_labels: Callable  # aux data, n -> list of path suffixes (for error messages)
    keys: Callable | None = None  # aux data, n -> list of key objects (for *_with_path)
    repr_name: str | None = None  # JAX's name in a PyTreeDef repr when not `name`


_REGISTRY: dict[type, NodeType] = {}


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None,
                         *, path_labels=None):
    """Make instances of `nodetype` pytree nodes, as `jax.tree_util.register_pytree_node`.

    `flatten_with_keys_func(node) -> (((key, child), ...), aux)` names the children for
    `tree_flatten_with_path` (else they are `FlattenedIndexKey(i)`, as JAX). jitviz's own
    `path_labels(aux, n)` (also accepted as the 4th argument when it takes two parameters)
    names them in error messages; by default the keys do."""
    if flatten_with_keys_func is not None and _n_params(flatten_with_keys_func) == 2:
        path_labels, flatten_with_keys_func = flatten_with_keys_func, None
    keys = None if flatten_with_keys_func is None else _KeysFromInstance(flatten_with_keys_func)
    labels = path_labels or (lambda aux, n: [f"[{i}]" for i in range(n)])
    _REGISTRY[nodetype] = NodeType(nodetype.__name__, flatten_func, unflatten_func, labels, keys)


class _KeysFromInstance:
    """A `flatten_with_keys_func`: keys come from the node itself (see `_node_keys`)."""

    def __init__(self, fn):
        self.fn = fn


def _n_params(fn):
    try:
        return len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return -1


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """As `jax.tree_util.register_pytree_with_keys`: children come with their keys."""
    def flatten(x):
        pairs, aux = flatten_with_keys(x)
        return tuple(c for _, c in pairs), aux
    register_pytree_node(nodetype, flatten_func or flatten, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls):
    """Class decorator, as `jax.tree_util.register_pytree_node_class`: `cls.tree_flatten()`
    and the classmethod `cls.tree_unflatten(aux, children)`."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """As `jax.tree_util.register_dataclass`: `data_fields` are children, `meta_fields` are
    static (part of the structure). Without them, a dataclass's fields are split by their
    `metadata=dict(static=True)`."""
    if data_fields is None or meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required when "
                            f"{nodetype.__name__} is not a dataclass")
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)

    def flatten(x):
        return (tuple(getattr(x, f) for f in data_fields),
                tuple(getattr(x, f) for f in meta_fields))

    def unflatten(meta, children):
        return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, children)))

    _REGISTRY[nodetype] = NodeType(
        nodetype.__name__, flatten, unflatten,
        lambda aux, n: [f".{f}" for f in data_fields],
        lambda aux, n: [GetAttrKey(f) for f in data_fields])
    return nodetype


def _seq_keys(aux, n):
    return [SequenceKey(i) for i in range(n)]


def _dict_keys(keys, n):
    return [DictKey(k) for k in keys]


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (t, None), lambda _, c: list(c))
_REGISTRY[tuple] = _REGISTRY[tuple]._replace(keys=_seq_keys)
_REGISTRY[list] = _REGISTRY[list]._replace(keys=_seq_keys)


def _sorted_keys(d):
    # JAX sorts dict keys and refuses keys that cannot be ordered (e.g. 1 and 'a')
    try:
        return sorted(d)
    except TypeError:
        raise ValueError("Comparator raised exception while sorting pytree dictionary "
                         "keys.") from None


def _flatten_dict(d):
    keys = tuple(_sorted_keys(d))
    return tuple(d[k] for k in keys), keys


_REGISTRY[dict] = NodeType("dict", _flatten_dict, lambda keys, c: dict(zip(keys, c)),
                           lambda keys, n: [f"[{k!r}]" for k in keys], _dict_keys)
# OrderedDict keeps its insertion order (as JAX); defaultdict is a sorted dict plus its factory
_REGISTRY[collections.OrderedDict] = NodeType(
    "OrderedDict", lambda d: (tuple(d.values()), tuple(d.keys())),
    lambda keys, c: collections.OrderedDict(zip(keys, c)),
    lambda keys, n: [f"[{k!r}]" for k in keys], _dict_keys)
_REGISTRY[collections.defaultdict] = NodeType(
    "defaultdict",
    lambda d: (_flatten_dict(d)[0], (d.default_factory, _flatten_dict(d)[1])),
    lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)),
    lambda aux, n: [f"[{k!r}]" for k in aux[1]], lambda aux, n: _dict_keys(aux[1], n))


def _node_type(x):
    t = type(x)
    nt = _REGISTRY.get(t)
    if nt is not None:
        return nt
    if isinstance(x, tuple) and hasattr(t, "_fields"):  # namedtuple
        return NodeType(t.__name__, lambda n: (tuple(n), t),
                        lambda cls, c: cls(*c), lambda cls, n: [f".{f}" for f in cls._fields],
                        lambda cls, n: [GetAttrKey(f) for f in cls._fields],
                        f"namedtuple[{t.__name__}]")
    return None


def _node_keys(nt: NodeType, node, aux, n):
    """The key objects of a node's children (JAX's default: their flat index)."""
    if isinstance(nt.keys, _KeysFromInstance):
        return [k for k, _ in nt.keys.fn(node)[0]]
    if nt.keys is not None:
        return list(nt.keys(aux, n))
    return [FlattenedIndexKey(i) for i in range(n)]


# --- PyTreeDef ---------------------------------------------------------------------------------

class _Children(tuple):
    """A node's child TreeDefs: a tuple (as jitviz uses them) that is also callable, as JAX's
    `PyTreeDef.children()` method."""

    def __call__(self):
        return list(self)


class TreeDef:
    """The structure of a pytree without its leaves (JAX's `PyTreeDef`)."""

    __slots__ = ("kind", "aux", "children", "num_leaves", "_hash")

    def __init__(self, kind, aux, children):
        self.kind = kind  # None for a leaf, "None" for None, else the node type
        self.aux = aux
        self.children = _Children(children)
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in self.children)
        self._hash = hash((self.kind if isinstance(self.kind, (str, type(None))) else self.kind.name,
                           _hashable(aux), self.children))

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return (isinstance(other, TreeDef) and self._hash == other._hash
                and _kind_key(self.kind) == _kind_key(other.kind)
                and self.aux == other.aux and self.children == other.children)

    @property
    def num_nodes(self):
        return 1 + builtins.sum(c.num_nodes for c in self.children)

    def node_data(self):
        """(node type, aux data), or None for a leaf, as JAX's `PyTreeDef.node_data()`."""
        if self.kind is None:
            return None
        if self.kind == "None":
            return (type(None), None)
        return (_node_class(self), self.aux)

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
        head = self.kind.repr_name or f"{name}[{self.aux}]"
        return f"CustomNode({head}, [" + ", ".join(inner) + "])"

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) < self.num_leaves:
            raise ValueError(f"Too few leaves for PyTreeDef; expected {self.num_leaves}, got "
                             f"{len(leaves)}")
        if len(leaves) > self.num_leaves:
            raise ValueError(f"Too many leaves for PyTreeDef; expected {self.num_leaves}.")
        return self._build(iter(leaves))

    def _build(self, it):
        if self.kind is None:
            return next(it)
        if self.kind == "None":
            return None
        return self.kind.from_iterable(self.aux, [c._build(it) for c in self.children])

    def flatten_up_to(self, tree, what="tree_map tree"):
        """The subtrees of `tree` at this structure's leaves (`tree` may be deeper there);
        a mismatch is JAX's 'pytree structure error' naming the key path."""
        out: list = []
        self._up_to(tree, out, (), what)
        return out

    def _up_to(self, x, out, path, what):
        if self.kind is None:
            out.append(x)
            return
        if self.kind == "None":
            if x is not None:
                _structure_error("types", path, what, f"    {type(None)}",
                                 f"of different type\n    {type(x)}.")
            return
        nt = _node_type(x)
        if nt is None or _kind_key(nt) != _kind_key(self.kind):
            _structure_error("types", path, what, f"    {_node_class(self)}",
                             f"of different type\n    {type(x)}.")
        children, aux = nt.to_iterable(x)
        if len(children) != len(self.children) and self.kind.name in ("tuple", "list"):
            raise ValueError(
                f"pytree structure error: different lengths of {self.kind.name} at key path\n"
                f"    {what}{keystr(path)}\nAt that key path, the prefix pytree {what} has a "
                f"subtree of type {self.kind.name} of length {len(self.children)}, but the full "
                f"pytree has a subtree of the same type but of length {len(children)}.")
        if aux != self.aux or len(children) != len(self.children):
            diff = "\n".join("    " + line
                              for line in difflib.ndiff([repr(self.aux)], [repr(aux)]))
            raise ValueError(
                f"pytree structure error: different pytree metadata at key path\n    {what}"
                f"{keystr(path)}\nAt that key path, the prefix pytree {what} has a subtree of "
                f"type\n    {_node_class(self)}\nwith metadata\n    {self.aux!r}\nbut at the same "
                f"key path the full pytree has a subtree of the same type but with metadata\n"
                f"    {aux!r}\nso the diff in the metadata at these pytree nodes is\n{diff}")
        keys = _node_keys(nt, x, aux, len(children))
        for k, c, sub in zip(keys, children, self.children):
            sub._up_to(c, out, path + (k,), what)

    def compose(self, inner: "TreeDef") -> "TreeDef":
        """This structure with each leaf replaced by `inner` (JAX's `PyTreeDef.compose`)."""
        if self.kind is None:
            return inner
        return TreeDef(self.kind, self.aux, [c.compose(inner) for c in self.children])

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


PyTreeDef = TreeDef


def _structure_error(kind, path, what, ours, theirs):
    raise ValueError(
        f"pytree structure error: different {kind} at key path\n    {what}{keystr(path)}\n"
        f"At that key path, the prefix pytree {what} has a subtree of type\n{ours}\nbut at the "
        f"same key path the full pytree has a subtree {theirs}")


def _node_class(t: TreeDef):
    for cls, nt in _REGISTRY.items():
        if nt is t.kind:
            return cls
    return t.aux if isinstance(t.aux, type) else t.kind.name  # a namedtuple's aux is its class


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


# --- jax.tree_util -----------------------------------------------------------------------------

def tree_flatten(tree, is_leaf=None):
    """(leaves, treedef), as `jax.tree_util.tree_flatten`; `None` is an empty node."""
    leaves: list = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _flatten(x, leaves, is_leaf):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return LEAF
    if x is None:
        return NONE
    nt = _node_type(x)
    if nt is None:
        leaves.append(x)
        return LEAF
    children, aux = nt.to_iterable(x)
    return TreeDef(nt, aux, [_flatten(c, leaves, is_leaf) for c in children])


def tree_unflatten(treedef: TreeDef, leaves):
    """The pytree of structure `treedef` with `leaves` in flattening order."""
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    """The leaves of `tree`, in flattening order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """The `TreeDef` of `tree` (its structure without the leaves)."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    """`f` applied leaf by leaf, as `jax.tree_util.tree_map`: each tree of `rest` has
    `tree`'s structure, or `tree`'s as a prefix (its subtree is passed at a leaf)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


def tree_flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf), ...], treedef), as `jax.tree_util.tree_flatten_with_path`."""
    pairs: list = []
    _walk(tree, (), pairs, is_leaf)
    return pairs, tree_structure(tree, is_leaf)


def _walk(x, path, pairs, is_leaf):
    if is_leaf is not None and is_leaf(x):
        pairs.append((path, x))
        return
    if x is None:
        return
    nt = _node_type(x)
    if nt is None:
        pairs.append((path, x))
        return
    children, aux = nt.to_iterable(x)
    for k, c in zip(_node_keys(nt, x, aux, len(children)), children):
        _walk(c, path + (k,), pairs, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None):
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None):
    """`f(path, leaf, *others)` leaf by leaf, as `jax.tree_util.tree_map_with_path`."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


_NO_INITIAL = object()


def tree_reduce(function, tree, initializer=_NO_INITIAL, is_leaf=None):
    """`functools.reduce` over the leaves, as `jax.tree_util.tree_reduce`."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIAL:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree, *, is_leaf=None):
    """Whether every leaf is truthy, as `jax.tree_util.tree_all`."""
    return builtins.all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """An outer structure of inner structures turned into an inner of outers, as
    `jax.tree_util.tree_transpose` (`inner_treedef=None` infers it)."""
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_n, outer_n = inner_treedef.num_leaves, outer_treedef.num_leaves
    expected = outer_treedef.compose(inner_treedef)
    if treedef.num_leaves != inner_n * outer_n or treedef != expected:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    rows = [flat[i * inner_n:(i + 1) * inner_n] for i in range(outer_n)]
    subtrees = [outer_treedef.unflatten(col) for col in zip(*rows)]
    return inner_treedef.unflatten(subtrees)


class Partial(functools.partial):
    """A `functools.partial` whose bound arguments are pytree leaves (so it can be passed to
    and returned from jitted functions), as `jax.tree_util.Partial`."""


register_pytree_node(
    Partial, lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]))


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
                parts.append("added keys " + ", ".join(builtins.map(repr, added)))
            if removed:
                parts.append("removed keys " + ", ".join(builtins.map(repr, removed)))
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


# --- jax.tree: the short names (they shadow builtins below this line only) --------------------

flatten, unflatten, leaves, structure = tree_flatten, tree_unflatten, tree_leaves, tree_structure
flatten_with_path, leaves_with_path = tree_flatten_with_path, tree_leaves_with_path
map, map_with_path, reduce = tree_map, tree_map_with_path, tree_reduce  # noqa: A001
all, transpose = tree_all, tree_transpose  # noqa: A001
