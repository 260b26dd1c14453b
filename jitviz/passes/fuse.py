"""Loop fusion: connected elementwise, broadcast and reduction equations become one `fused`
equation holding their sub-jaxpr, which a backend compiles into one kernel.

    fused[name=mul_add jaxpr={ lambda ; a:f32[5000,5000]. let
        b = mul a a; c = mul a 2.0; d = add b c in (d,) }] x

What fuses: every elementwise primitive, `broadcast_in_dim`, `iota`, `squeeze`, reshapes that
only add or drop unit dimensions, and the associative reductions (`reduce_sum`, `_prod`,
`_max`, `_min`, `_and`, `_or`). A reduction may feed later elementwise work in the same kernel
(the seed's `norm` is one kernel: the backend runs one loop nest per reduction it waits on).
`dot_general`, gathers, cumulative ops and control flow are kernel boundaries; control-flow
bodies are fused recursively, so loops run fused kernels.

Then sibling fusion: kernels that read the same array over its whole shape and do not depend
on each other merge, so `x.sum()` and `x.max()` share one loop over `x`.

Legality: two groups merge only if no path leads from one to the other through an equation
outside them (that would make the kernel wait on itself). Every fusable equation ends up in
some `fused` equation, even alone, so a backend only ever compiles kernels.
"""
from __future__ import annotations

import heapq
from typing import NamedTuple

from ..core.fused import fused_p
from ..core.ir import ClosedJaxpr, Eqn, Jaxpr, Var
from ..core.jaxpr_util import Subst, is_effectful, map_sub_jaxprs
from ..lax import primitives as P

MAX_KERNEL_EQNS = 256  # bounds Numba compile time of one kernel


# --- what fuses ----------------------------------------------------------------------------


def _unit_reshape(eqn) -> bool:
    """A reshape that only inserts or removes size-1 dimensions is a pure index remap."""
    (x,), (y,) = [a.aval for a in eqn.invars], [v.aval for v in eqn.outvars]
    return [d for d in x.shape if d != 1] == [d for d in y.shape if d != 1]


def _always(eqn) -> bool:
    return True


# the structural primitives a kernel computes as an index map or from the index alone ->
# a predicate on the equation; elementwise primitives and monoid reductions fuse by their kind
FUSABLE = {P.broadcast_in_dim_p: _always, P.iota_p: _always, P.squeeze_p: _always,
           P.reshape_p: _unit_reshape}
FUSED_KINDS = ("elementwise", "reduction")


def is_fusable(eqn: Eqn) -> bool:
    prim = eqn.primitive
    if is_effectful(eqn):
        return False
    if prim.kind in FUSED_KINDS:
        return True
    rule = FUSABLE.get(prim)
    return rule is not None and rule(eqn)


# --- partition -----------------------------------------------------------------------------

class _UnionFind:
    def __init__(self):
        self.parent: dict[int, int] = {}

    def add(self, x):
        self.parent[x] = x

    def find(self, x):
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a, b):
        a, b = self.find(a), self.find(b)
        if a != b:
            self.parent[max(a, b)] = min(a, b)
        return min(a, b)


class _Partition:
    """Greedy, in program order: a fusable equation joins the groups of its fusable producers
    when that keeps the graph of kernels acyclic.

    A kernel runs once all of its members' inputs are ready, so merging groups adds waits:
    a value computed from group C before C merged with D now also waits on whatever D waits
    on. Each group therefore keeps `waits`, the exact set of groups it waits on
    transitively, and every merge passes the merged kernel's waits on to the groups that
    wait on it. Sets of groups are bitsets over group ids (the index of each group's first
    equation), so a merged group is the union of its members' bits (`members`)."""

    def __init__(self, eqns):
        self.eqns = eqns
        self.uf = _UnionFind()
        self.group: list[int | None] = [None] * len(eqns)
        self.producer: dict[int, int] = {}
        self.deps: dict[int, frozenset] = {}  # var -> groups it depended on when computed
        self.members: dict[int, int] = {}  # group root -> bits of the groups merged into it
        self.waits: dict[int, int] = {}  # group root -> bits of every group it waits on
        self.size: dict[int, int] = {}

    def canon(self, groups):
        return {self.uf.find(g) for g in groups}

    def group_of_var(self, a):
        i = self.producer.get(a.id)
        if i is None or self.group[i] is None:
            return None
        return self.uf.find(self.group[i])

    def waits_of(self, groups) -> int:
        """Bits of the groups a value computed from `groups` waits on, as of now."""
        bits = 0
        for g in self.canon(groups):
            bits |= self.members[g] | self.waits[g]
        return bits

    def legal(self, eqn, trial) -> bool:
        """Merging `trial` with `eqn` makes no kernel wait on itself: no input from outside
        waits on a trial group, and no trial group waits on another."""
        trial_bits = 0
        for g in trial:
            trial_bits |= self.members[g]
        for a in eqn.invars:
            if isinstance(a, Var) and self.group_of_var(a) not in trial:
                if self.waits_of(self.deps.get(a.id, ())) & trial_bits:
                    return False
        return not any(self.waits[g] & trial_bits for g in trial)

    def run(self):
        for i, eqn in enumerate(self.eqns):
            in_vars = [a for a in eqn.invars if isinstance(a, Var)]
            in_deps = set()
            for a in in_vars:
                in_deps |= self.canon(self.deps.get(a.id, ()))
            if is_fusable(eqn):
                in_deps.add(self.join(i, eqn, in_vars))
            frozen = frozenset(in_deps)
            for v in eqn.outvars:
                self.deps[v.id] = frozen
                self.producer[v.id] = i
        return [None if g is None else self.uf.find(g) for g in self.group]

    def join(self, i, eqn, in_vars) -> int:
        cands = list(dict.fromkeys(g for g in map(self.group_of_var, in_vars) if g is not None))
        chosen: list[int] = []
        for g in cands:
            total = 1 + sum(self.size[c] for c in chosen) + self.size[g]
            if total <= MAX_KERNEL_EQNS and self.legal(eqn, chosen + [g]):
                chosen.append(g)
        waits = 0
        for a in in_vars:
            if self.group_of_var(a) not in chosen:
                waits |= self.waits_of(self.deps.get(a.id, ()))
        self.uf.add(i)
        self.group[i] = i
        root, size, members = i, 1, 1 << i
        for g in chosen:
            waits |= self.waits.pop(g)
            members |= self.members.pop(g)
            size += self.size.pop(g)
            root = self.uf.union(root, g)
        self.members[root], self.waits[root], self.size[root] = members, waits, size
        if chosen:  # whoever waited on a merged group now waits on all the kernel waits on
            for g, w in self.waits.items():
                if w & members and g != root:
                    self.waits[g] = w | waits | members
        return root


# --- assemble ------------------------------------------------------------------------------

def _kernel_name(members) -> str:
    names = list(dict.fromkeys(e.primitive.name for e in members))
    name = "_".join(names[:4])
    return name + (f"_and_{len(names) - 4}_more" if len(names) > 4 else "")


def _make_fused(members, used_outside) -> Eqn:
    inside = {v.id for e in members for v in e.outvars}
    ext_inputs, seen = [], set()
    for e in members:
        for a in e.invars:
            if isinstance(a, Var) and a.id not in inside and a.id not in seen:
                seen.add(a.id)
                ext_inputs.append(a)
    outputs = [v for e in members for v in e.outvars if v.id in used_outside]
    env = Subst()
    body_in = []
    for a in ext_inputs:
        body_in.append(Var(a.aval))
        env[a] = body_in[-1]
    body_eqns = []
    for e in members:
        outs = [Var(v.aval) for v in e.outvars]
        body_eqns.append(e.replace(invars=env.atoms(e.invars), outvars=outs))
        for v, n in zip(e.outvars, outs):
            env[v] = n
    body = Jaxpr((), body_in, env.atoms(outputs), body_eqns)
    return Eqn(fused_p, ext_inputs, outputs,
               {"name": _kernel_name(members), "jaxpr": ClosedJaxpr(body, ())},
               members[-1].source)


class _KernelGraph(NamedTuple):
    """Equations grouped into nodes: ("g", root) for a kernel, ("e", index) for an equation
    left alone; `preds` are data dependencies plus the program order of effects."""
    node_of: list
    first_index: dict
    preds: dict
    used_outside: set  # vars read by another node or returned


def _kernel_graph(outvars, eqns, groups) -> _KernelGraph:
    node_of = [("g", g) if g is not None else ("e", i) for i, g in enumerate(groups)]
    first_index = {}
    for i, node in enumerate(node_of):
        first_index.setdefault(node, i)
    producer = {v.id: node_of[i] for i, e in enumerate(eqns) for v in e.outvars}
    used_outside: set[int] = {a.id for a in outvars if isinstance(a, Var)}
    preds: dict[tuple, set] = {n: set() for n in first_index}
    last_effect = None
    for i, e in enumerate(eqns):
        node = node_of[i]
        for a in e.invars:
            p = producer.get(a.id) if isinstance(a, Var) else None
            if p is not None and p != node:
                preds[node].add(p)
                used_outside.add(a.id)
        if is_effectful(e):  # effects keep their program order
            if last_effect is not None:
                preds[node].add(last_effect)
            last_effect = node
    return _KernelGraph(node_of, first_index, preds, used_outside)


def _assemble(jaxpr: Jaxpr, eqns, groups) -> Jaxpr:
    members: dict[int, list] = {}
    for e, g in zip(eqns, groups):
        if g is not None:
            members.setdefault(g, []).append(e)
    graph = _kernel_graph(jaxpr.outvars, eqns, groups)
    order = _toposort(graph.preds, graph.first_index)
    out = []
    for kind, key in order:
        out.append(eqns[key] if kind == "e" else _make_fused(members[key], graph.used_outside))
    return jaxpr.replace(eqns=out)


# --- sibling fusion --------------------------------------------------------------------------

def _domain(eqn: Eqn) -> tuple:
    """The index space an equation loops over: its operand's for a reduction."""
    if eqn.primitive.kind == "reduction":
        return eqn.invars[0].aval.shape
    return eqn.outvars[0].aval.shape


def _merge_siblings(outvars, eqns, groups) -> list:
    """Kernels that read the same array over its whole index space, neither depending on the
    other (not even through an equation outside both), become one kernel: `x.sum()` and
    `x.max()` then share one loop over `x`, reading it from memory once (XLA's sibling
    fusion). Merging two independent nodes of an acyclic graph keeps it acyclic."""
    graph = _kernel_graph(outvars, eqns, groups)
    order = _toposort(graph.preds, graph.first_index)
    bit = {n: 1 << k for k, n in enumerate(order)}
    anc: dict[tuple, int] = {}  # node -> bits of every node it depends on, transitively
    for n in order:
        m = 0
        for p in graph.preds[n]:
            m |= anc[p] | bit[p]
        anc[n] = m
    rep = {g: g for g in groups if g is not None}  # group root -> root of its merged kernel
    mask = {g: bit[("g", g)] for g in rep}  # merged kernel -> bits of its original groups
    size: dict[int, int] = {}
    for g in groups:
        if g is not None:
            size[g] = size.get(g, 0) + 1

    def find(g):
        while rep[g] != g:
            g = rep[g]
        return g

    readers: dict[int, list] = {}  # array var -> groups reading all of it from outside
    produced_in = {v.id: g for e, g in zip(eqns, groups) for v in e.outvars}
    for e, g in zip(eqns, groups):
        if g is None:
            continue
        for a in e.invars:
            if isinstance(a, Var) and a.aval.ndim and produced_in.get(a.id) != g and \
                    _domain(e) == a.aval.shape and g not in readers.setdefault(a.id, []):
                readers[a.id].append(g)
    for gs in readers.values():
        for g in gs[1:]:
            a, b = find(gs[0]), find(g)
            if a == b or size[a] + size[b] > MAX_KERNEL_EQNS:
                continue
            anc_a = _anc_of(anc, mask[a], order)
            anc_b = _anc_of(anc, mask[b], order)
            if anc_a & mask[b] or anc_b & mask[a]:
                continue  # one waits on the other: merging would make a kernel wait on itself
            root, other = min(a, b), max(a, b)
            rep[other] = root
            size[root] += size.pop(other)
            merged, both = anc_a | anc_b, mask[a] | mask[b]
            mask[root] = both
            for n in order:  # whatever waited on either now waits on all the merged waits on
                if anc[n] & both:
                    anc[n] |= merged | both
    return [None if g is None else find(g) for g in groups]


def _anc_of(anc, bits, order) -> int:
    out, k = 0, 0
    while bits:
        if bits & 1:
            out |= anc[order[k]]
        bits >>= 1
        k += 1
    return out


def _toposort(preds, priority):
    succs: dict[tuple, list] = {n: [] for n in preds}
    missing = {n: len(p) for n, p in preds.items()}
    for n, ps in preds.items():
        for p in ps:
            succs[p].append(n)
    ready = [(priority[n], n) for n, k in missing.items() if k == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, n = heapq.heappop(ready)
        order.append(n)
        for s in succs[n]:
            missing[s] -= 1
            if missing[s] == 0:
                heapq.heappush(ready, (priority[s], s))
    if len(order) != len(preds):
        raise AssertionError("fusion produced a cyclic kernel graph")
    return order


def fuse_jaxpr(jaxpr: Jaxpr, memo=None) -> Jaxpr:
    memo = {} if memo is None else memo
    # control-flow bodies are fused in turn; a kernel's own body is already final
    eqns = [e if e.primitive is fused_p else map_sub_jaxprs(e, lambda j: fuse_jaxpr(j, memo), memo)
            for e in jaxpr.eqns]
    groups = _Partition(eqns).run()
    if any(g is not None for g in groups):
        groups = _merge_siblings(jaxpr.outvars, eqns, groups)
    if all(g is None for g in groups):
        if all(a is b for a, b in zip(eqns, jaxpr.eqns)):
            return jaxpr
        return jaxpr.replace(eqns=eqns)
    return _assemble(jaxpr, eqns, groups)


def fuse(closed: ClosedJaxpr, *, fastmath: bool = False) -> ClosedJaxpr:
    j = fuse_jaxpr(closed.jaxpr)
    return closed if j is closed.jaxpr else closed.replace_jaxpr(j)
