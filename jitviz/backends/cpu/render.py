"""Render one `fused` equation's body into a Numba loop-nest function (source text only;
compiling is `compile.py`'s job); the per-primitive rules are `rules.py`'s.

A kernel takes `(inputs..., outputs..., constants...)`: array outputs are allocated by the
caller with NumPy, rank-0 outputs are returned, and the program's literals arrive as
arguments `c0, c1, ...`, so the text depends on shapes only through ranks and unit
dimensions. Loop bounds are read from the arrays at run time, which is why a new shape of
the same rank reuses the compiled kernel.

Inside a kernel every value is either computed in registers at the current loop index
(elementwise chains, broadcasts as index maps) or *materialized*: reduction results, values
read through a different index (the small side of a broadcast, a rank-0 value used by an
array operation), and outputs. A value materialized in phase p is usable from phase p+1, and
each (phase, iteration shape) is one loop nest, so a reduction and the elementwise work that
waits on it are consecutive loops of the same kernel:

    def reduce_sum_div_sub(x0, out0, c0):     # X - X.mean(0)
        n0 = x0.shape[0]; n1 = x0.shape[1]
        t0 = np.empty((n1,), np.float32); t0.fill(np.float32(-0.0))
        for i0 in range(n0):                   # phase 0: the sum
            for i1 in range(n1):
                t0[i1] = np.float32(t0[i1] + x0[i0, i1])
        ...                                    # phase 1: divide; phase 2: subtract

Nests that loop over the same rows and use each other's results only at their own row (a
softmax's row max, sum and division) share one loop instead (`_fuse_rows`), and a costly
value they each computed is kept in a buffer of one row (`_row_buffers`).
"""
from __future__ import annotations

import ast
import builtins
import keyword
import re
from typing import NamedTuple

from ...core.ir import Eqn, Jaxpr, Literal, Var
from ...core.registry import has_lowering, lowering_rule
from ...core.ir import literal_key, literal_value
from ..base import Cost
from ..numba_text import ConstName, compute_dtype, ctor, is_half, typed_const
from .rules import (CPU, GENERATE, INDEX, REDUCE, WITH_PRODUCER, cast_text, expr_rule,
                    operations_per_element)
from .runtime import COLUMN_BLOCK
from .vecmath_core import target_has_avx512


class KernelCode(NamedTuple):
    name: str
    text: str  # the function's source (no decorator)
    consts: list  # the literals passed as c0, c1, ... (Literal atoms)
    n_inputs: int
    array_outs: list  # output positions written into caller-allocated arrays
    scalar_outs: list  # output positions returned (rank 0)
    line_eqns: dict  # line number in `text` (1-based) -> Eqn it came from
    uses_prange: bool
    cost: Cost
    eqns: list
    combined: dict  # line number in `text` -> the producer its equation's line also computes


class _Combined(NamedTuple):
    """A line's equation (in a block's (depth, text, equation)) whose line also computes
    the equation that made its operand (rules.WITH_PRODUCER)."""
    eqn: Eqn
    producer: Eqn


# --- the renderer ------------------------------------------------------------------------

def _index_text(name, idx):
    return f"{name}[{', '.join(idx)}]"


# calls with a fast variant for most arguments and a test for the others (vecmath.py):
# an elementwise nest runs them blockwise (`FusedRenderer._guarded_loops`), and so does a
# reduction's nest where their tests can run before each block (`_tested_block`). The test
# of each function (`rt.<test>_f32(args)`): sin/cos/tan's fast variants leave out the table of large
# arguments, pow's the special cases (a base that is not positive and finite, an infinite or
# NaN exponent: 30 of float32 pow's 88 instructions per vector on AVX-512), atan2's its
# infinities, NaNs, huge ratios and 0/0, division by a constant's a dividend outside
# [2^-60, 2^60] (float64 2^+-500), lgamma's and digamma's x <= 0 (their reflections;
# float64 lgamma's is special.py's scalar helper: vecmath_gamma.py says why), and without
# AVX-512 exp's clamp and two-product scale (|x| >= 86 for float32, 707 for float64, and NaN:
# about half its instructions; AVX-512's vscalef scales in one, which leaves a test nothing to
# save), in exp and in logistic (its e^-|x|). (render.py does not import the runtime, so the
# names live here; tests/test_vecmath.py checks that each one's `_fast` and test functions
# exist in rt.)
GUARDED_EVERYWHERE = {"sin": "trig_big", "cos": "trig_big", "tan": "trig_big",
                      "pow": "pow_special", "atan2": "atan2_special",
                      "lgamma": "lgamma_special", "digamma": "digamma_special",
                      "div_const": "div_const_special"}
GUARDED_WITHOUT_AVX512 = {"exp": "exp_special", "logistic": "exp_special"}
GUARD_TESTS = {**GUARDED_EVERYWHERE,
               **({} if target_has_avx512() else GUARDED_WITHOUT_AVX512)}
GUARDED = re.compile(rf"rt\.({'|'.join(GUARD_TESTS)})_(f32|f64)\(([^()]*)\)")
# guarded calls whose fast variant pays only where their test runs before the block (the
# test's arguments need no call: `_pretests`), and their plain text elsewhere: a division by
# a constant whose dividend takes a call (`jnp.log2`'s log(x) / log(2)) keeps the division,
# whose cost its test in the fast loop would match (1M float32 log2: 390 -> 505 us). So does
# one in a nest that reads a temporary (`t3[i0]`) an earlier nest wrote: that nest may share
# the earlier one's row loop (`_fuse_rows`: a mean's division by n in a layernorm), which
# blocks would stop.
PRETESTED_ONLY = {"div_const": "({0} / {1})"}
TEMPORARY_READ = re.compile(r"\bt\d+\[")
NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def _statement(text):
    """(the name a one-line `name = expression` assigns or None, the names it reads, the
    names of the arrays it stores into), or None for any other line (a loop, a tuple
    target, an augmented assignment: `_pretests` does not copy what it cannot read). A
    call alone (`rt.lane_max(lane3, nan4, j1, v1)`) may store into any name it is given."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr) \
            and isinstance(tree.body[0].value, ast.Call):
        call = tree.body[0].value
        return (None, {n.id for n in ast.walk(call) if isinstance(n, ast.Name)},
                {a.id for a in call.args if isinstance(a, ast.Name)})
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assign) \
            or len(tree.body[0].targets) != 1:
        return None
    target, value = tree.body[0].targets[0], tree.body[0].value
    reads = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    if isinstance(target, ast.Name):
        return target.id, reads, set()
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
        reads |= {n.id for n in ast.walk(target.slice) if isinstance(n, ast.Name)}
        return None, reads, {target.value.id}
    return None


def _without_untested(body):
    """The body with each PRETESTED_ONLY call whose test cannot run first in its plain
    form."""
    if not any(m.group(1) in PRETESTED_ONLY for _, text, _ in body
               for m in GUARDED.finditer(text)):
        return body
    reads_temporary = any(TEMPORARY_READ.search(text) for _, text, _ in body)
    hoisted = set() if reads_temporary else _pretests(body)[1]

    def plain(m):
        if m.group(1) not in PRETESTED_ONLY or m.group(0) in hoisted:
            return m.group(0)
        return PRETESTED_ONLY[m.group(1)].format(*m.group(3).split(", "))
    return [(depth, GUARDED.sub(plain, text), eqn) for depth, text, eqn in body]


def _pretests(body, calls=False):
    """The guarded calls of an elementwise body whose tests can run before it: those whose
    arguments are computed by lines without a runtime call (`rt.`), say loads and
    arithmetic, or by any lines with `calls` (a reduction's block, which cannot run twice,
    computes `log(x)` once more for the test of `sin(log(x))` rather than run the full sin
    with its table on every value). Returns the lines that compute those arguments followed
    by the tests (`{g} |= ...`, the flag's name to fill in), and the set of the calls'
    texts. Nothing is hoisted from a body with a line other than one-line assignments; a
    line at another depth than its call's, one that reads an array the body stores into
    (its value would not be there yet) or a name assigned twice is not copied, and its
    call's test stays in the block."""
    statements = [_statement(text) for _, text, _ in body]
    if any(st is None for st in statements):
        return [], set()
    names = [st[0] for st in statements if st[0] is not None]
    defined = {name: n for n, (name, _, _) in enumerate(statements) if name is not None}
    # (a name assigned twice, or an array both stored into and read, is not copied; nor is
    # an accumulator, a name its own line reads: `p = rt.add_reassoc(p, v)`)
    stored = set().union(*(st[2] for st in statements)) | \
        {name for name in names if names.count(name) > 1} | \
        {name for name, reads, _ in statements if name in reads}
    needed, tests, hoisted = set(), [], set()
    for depth, text, eqn in body:
        for m in GUARDED.finditer(text):
            lines, ok = set(), True
            todo = [name for name in NAME.findall(m.group(3))]
            while todo and ok:
                name = todo.pop()
                ok = name not in stored
                if name not in defined or defined[name] in lines:
                    continue
                n = defined[name]
                lines.add(n)
                ok = body[n][0] == depth and (calls or "rt." not in body[n][1])
                todo += sorted(statements[n][1])
            if ok:
                needed |= lines
                hoisted.add(m.group(0))
                tests.append((depth, f"{{g}} |= rt.{GUARD_TESTS[m.group(1)]}_{m.group(2)}"
                                     f"({m.group(3)})", eqn))
    if not tests:
        return [], set()
    return [body[n] for n in sorted(needed)] + tests, hoisted


# a block's start under prange, masked: the mask tells LLVM it is not negative, so the block's
# loads need no wraparound test and vectorize (without it they became gathers, 3x slower)
BLOCK_START_MASK = (1 << 48) - 1
BLOCK = 128  # = runtime.BLOCK: the block of a sum/prod cascade (fixes its numerics)
# the lanes of a max/min row (runtime.lane_max) when no cascade shares its nest: 32 for rows
# shorter than LONG_ROW (measured: rows of 100, 10000 of them, 110 us; with 64 lanes 242 us,
# 16 lanes 373 us), 64 from there (4 float32 or 8 float64 AVX-512 registers: more independent
# chains to hide the compare-and-select latency; rows of 1M: 175 us against 188 with 32)
LANES, LANES_LONG, LONG_ROW = 32, 64, 8192


# Without AVX-512 a float max/min row is a plain loop into one accumulator: rt.fmax_f32 there
# is llvm.maximum, whose reduction LLVM vectorizes itself (it is exact in any order: a NaN
# wins, +0.0 beats -0.0), where the lanes' loads, selects and stores made LLVM choose
# masked stores or scalar code by the lane count and what shared the nest (1M float32 on
# AVX2, one core: max 156-166 -> 79-104 us, sum, max and min in one kernel 1.73-1.79 ms ->
# 246-330 us; README). AVX-512's fmax is vrange, which LLVM does not know as a reduction:
# lanes there.
MAX_MIN_LANES = target_has_avx512()


def max_min_lanes(row: int) -> int:
    """The block (lane count) of a max/min over rows of `row` values."""
    return LANES_LONG if row >= LONG_ROW else LANES


def _is_reduction(eqn) -> bool:
    return eqn.primitive.kind == "reduction"


def _reduction(eqn):
    """The `Reduction` rule (rules.py) of a reduction equation."""
    return lowering_rule(eqn.primitive, REDUCE)


def _is_index_map(eqn) -> bool:
    return has_lowering(eqn.primitive, INDEX)


def _transparent(eqn) -> bool:
    """Index maps and generators: reading one at any index reads its operand or computes
    the index, so they never need a buffer of their own."""
    return _is_index_map(eqn) or has_lowering(eqn.primitive, GENERATE)


class _Hooks:
    """Lines a nest places around its loops: before the loops (setup), before/after the
    loop over dimension d (pre/post), and after each block of the innermost loop."""

    def __init__(self):
        self.setup: list = []
        self.scratch: list = []  # a blocked reduction's lanes and cascade: one per thread
        self.pre: dict[int, list] = {}
        self.post: dict[int, list] = {}
        self.after_block: list = []


class _Nest:
    def __init__(self, phase, shape):
        self.phase, self.shape = phase, shape
        self.roots: list[Eqn] = []


class FusedRenderer:
    """Turns a fused body (a Jaxpr of fusable equations) into kernel source."""

    def __init__(self, body: Jaxpr, name: str, *, parallel: bool = False,
                 fastmath: bool = False, row_cached: frozenset = frozenset()):
        self.body, self.name, self.parallel, self.fastmath = body, name, parallel, fastmath
        self.row_cached = row_cached  # values stored for later nests of their row (render)
        self.computed_in: dict[int, set] = {}  # value id -> nests that compute it in place
        self.lines: list[str] = []
        self.line_eqns: dict[int, Eqn] = {}
        self.inputs = {v.id: f"x{i}" for i, v in enumerate(body.invars)}
        # arrays holding float16 bits (inputs and outputs; temps hold float32 values)
        self.half = {f"x{i}" for i, v in enumerate(body.invars) if v.aval.ndim and
                     is_half(v.aval.dtype)}
        self.half |= {f"out{i}" for i, v in enumerate(body.outvars) if v.aval.ndim and
                      is_half(v.aval.dtype)}
        self.consts: dict = {}  # literal key -> (name, Literal)
        self.counter = 0
        self.producer = {v.id: e for e in body.eqns for v in e.outvars}
        self.reads: dict[int, int] = {}  # value id -> how many equations read it
        for e in body.eqns:
            for u in {u.id for u in e.invars if isinstance(u, Var)}:
                self.reads[u] = self.reads.get(u, 0) + 1
        self.out_pos = {}
        for i, v in enumerate(body.outvars):
            self.out_pos.setdefault(v.id, i)
        self.uses_prange = False
        self._analyse()

    # -- analysis --------------------------------------------------------------------------
    def _analyse(self):
        self.materialize: set[int] = set()
        for eqn in self.body.eqns:
            elementwise = eqn.primitive.kind == "elementwise"
            out_shape = eqn.outvars[0].aval.shape
            for u in eqn.invars:
                if not isinstance(u, Var) or u.id in self.inputs:
                    continue
                if _is_index_map(eqn) or (elementwise and u.aval.shape != out_shape):
                    self.materialize.add(u.id)
            if _is_reduction(eqn):
                self.materialize.add(eqn.outvars[0].id)
        self.materialize |= self.row_cached
        # index maps and generators are transparent (their operands are materialized by
        # the rule above)
        self.materialize -= {e.outvars[0].id for e in self.body.eqns if _transparent(e)}
        self.phase: dict[int, int] = {}  # eqn output id -> phase of its equation
        avail: dict[int, int] = {}
        for eqn in self.body.eqns:
            p = max([avail.get(u.id, 0) for u in eqn.invars if isinstance(u, Var)] + [0])
            v = eqn.outvars[0]
            self.phase[v.id] = p
            avail[v.id] = p + 1 if v.id in self.materialize else p
        nests: dict[tuple, _Nest] = {}
        for eqn in self.body.eqns:
            v = eqn.outvars[0]
            if v.id not in self.materialize and v.id not in self.out_pos:
                continue
            shape = self._domain(eqn)
            key = (self.phase[v.id], shape)
            nests.setdefault(key, _Nest(*key)).roots.append(eqn)
        self.nests = sorted(nests.values(), key=lambda n: n.phase)
        self.storage: dict[int, str] = {}
        for n, eqn in enumerate(e for nest in self.nests for e in nest.roots):
            v = eqn.outvars[0]
            if v.id in self.out_pos:
                pos = self.out_pos[v.id]
                self.storage[v.id] = f"out{pos}" if v.aval.ndim else f"r{pos}"
            else:
                self.storage[v.id] = f"t{n}" if v.aval.ndim else f"s{n}"

    @staticmethod
    def _domain(eqn):
        if _is_reduction(eqn):
            return eqn.invars[0].aval.shape
        return eqn.outvars[0].aval.shape

    # -- emission helpers ------------------------------------------------------------------
    def emit(self, depth, text, eqn=None):
        self.block.append((depth, text, eqn))

    def fresh(self, prefix="v"):
        self.counter += 1
        return f"{prefix}{self.counter - 1}"

    def const(self, lit: Literal) -> str:
        k = literal_key(lit)
        if k not in self.consts:
            self.consts[k] = (f"c{len(self.consts)}", lit)
        return self.consts[k][0]

    def note_sizes(self, array, idx):
        """Loop bounds come from arrays indexed by the loop variable (shape-generic code)."""
        for k, i in enumerate(idx):
            if i.startswith("i") and int(i[1:]) not in self.size_src:
                self.size_src[int(i[1:])] = f"{array}.shape[{k}]"

    def load(self, array, idx):
        key = ("load", array, idx)
        if key in self.memo:
            return self.memo[key]
        self.note_sizes(array, idx)
        name = self.fresh()
        self.emit(self.depth, f"{name} = {self.read(array, idx)}")
        self.memo[key] = name
        return name

    def read(self, array, idx) -> str:
        cell = _index_text(array, idx)
        return f"rt.half_to_float({cell})" if array in self.half else cell

    def write(self, array, idx, value) -> str:
        if array in self.half:
            value = f"rt.float_to_half({value})"
        return f"{_index_text(array, idx)} = {value}"

    # -- values ----------------------------------------------------------------------------
    def value(self, a, idx) -> str:
        if isinstance(a, Literal):
            return ConstName(self.const(a), literal_value(a)[()])
        if a.id in self.inputs:
            return self.inputs[a.id] if a.aval.ndim == 0 else self.load(self.inputs[a.id], idx)
        st = self.storage.get(a.id)
        if st is not None and (a.id in self.materialize or self.phase[a.id] < self.cur_phase):
            return st if a.aval.ndim == 0 else self.load(st, idx)
        key = (a.id, idx)
        if key not in self.memo:
            self.memo[key] = self._compute(self.producer[a.id], idx)
            if idx == self.nest_idx and a.aval.shape == self.nest_shape:
                self.computed_in.setdefault(a.id, set()).add(self.nest_no)
        return self.memo[key]

    def _compute(self, eqn, idx) -> str:
        prim = eqn.primitive
        index_map = lowering_rule(prim, INDEX)
        if index_map is not None:
            return self.value(eqn.invars[0], index_map(eqn, idx))
        out = eqn.outvars[0].aval
        label, line_eqn = prim.name, eqn
        generate = lowering_rule(prim, GENERATE)
        combined = lowering_rule(prim, WITH_PRODUCER)
        combined = combined and combined(eqn, self._sole_producer)
        if generate is not None:
            text = generate(eqn, idx)
        elif combined:
            args = [self.value(u, self._operand_index(u, out.shape, idx))
                    for u in combined.operands]
            text = cast_text(out.dtype, combined.text(args))
            label = f"{combined.producer.primitive.name}, {label}"
            line_eqn = _Combined(eqn, combined.producer)
        else:
            rule = expr_rule(prim)
            if rule is None:
                raise NotImplementedError(f"no CPU kernel rule for primitive {prim.name!r}")
            args = [self.value(u, self._operand_index(u, out.shape, idx)) for u in eqn.invars]
            in_dtypes = [u.aval.dtype for u in eqn.invars]
            text = cast_text(out.dtype, rule(args, in_dtypes, out.dtype, eqn.params))
        v = self.fresh()
        self.emit(self.depth, f"{v} = {text}  # {label}", line_eqn)
        return v

    def _sole_producer(self, v):
        """The equation that makes `v` where only one equation reads it and nothing stores
        it (an input, a kernel output, a materialized value), so that the reader may compute
        both (rules.WITH_PRODUCER); else None."""
        if not isinstance(v, Var) or v.id in self.inputs or v.id in self.storage or \
                v.id in self.materialize or self.reads.get(v.id) != 1:
            return None
        return self.producer.get(v.id)

    @staticmethod
    def _operand_index(u, out_shape, idx):
        shape = u.aval.shape
        if shape == ():
            return ()
        return tuple("0" if s == 1 and o != 1 else i for s, o, i in zip(shape, out_shape, idx))

    # -- nests -----------------------------------------------------------------------------
    def render_nest(self, nest: _Nest):
        rank = len(nest.shape)
        idx = tuple(f"i{d}" for d in range(rank))
        self.nest_no, self.nest_idx, self.nest_shape = self.nests.index(nest), idx, nest.shape
        self.block, self.memo, self.size_src, self.cur_phase = [], {}, {}, nest.phase
        blocked = rank > 0 and any(self._blocked(e) for e in nest.roots)
        self.depth = 1 + rank + blocked
        hooks = _Hooks()
        chunked = self._chunked(nest, rank)
        columns = not chunked and not blocked and self._column_blocked(nest, rank)
        partials = []  # chunked: (reduction, its storage, the chunk's partial result)
        for eqn in nest.roots:
            v = eqn.outvars[0]
            st = self.storage[v.id]
            if _is_reduction(eqn):
                if chunked:
                    partials.append((eqn, st, f"{st}c"))
                    st = f"{st}c"
                self._reduction(eqn, st, idx, hooks, blocked)
                continue
            val = self._compute(eqn, idx)  # a root is computed here, not loaded
            self.memo[(v.id, idx)] = val
            if rank and not st.startswith("t"):
                self.note_sizes(st, idx)
            self.emit(self.depth, self.write(st, idx, val) if rank else f"{st} = {val}", eqn)
            if st.startswith("t"):
                shape = ", ".join(f"n{d}" for d in range(rank))
                dt = ctor(compute_dtype(v.aval.dtype))
                hooks.setup.append((1, f"{st} = np.empty(({shape},), {dt})", eqn))
        body = _without_untested(self.block)
        reduces = any(_is_reduction(e) for e in nest.roots)
        guarded = (rank > 0 and not blocked and not reduces
                   and any(GUARDED.search(text) for _, text, _ in body))
        # a reduction into an output row (`out[i1] += sin(x)`: over a leading axis) tests
        # each block first, as a blocked one does
        tested = rank > 0 and not blocked and reduces and self._block_pretests(body)
        # a blocked row reduction splits its rows, each thread with its own scratch
        # (hooks.scratch); a one-axis guarded nest splits its blocks (_guarded_loops)
        prange_ok = self.parallel and rank > 0 and not (blocked and rank == 1) and not any(
            _is_reduction(e) and 0 in e.params["axes"] for e in nest.roots)
        sizes = [self.size_src.get(d, str(nest.shape[d])) for d in range(rank)]
        self.block = []
        for d, s in enumerate(sizes):
            self.emit(1, f"n{d} = {s}")
        for item in hooks.setup:
            self.emit(*item)
        # reductions' scratch (cascade stacks, lanes): one per thread, so inside a chunk or
        # a threaded row; on one thread, once
        threaded_rows = prange_ok and not chunked and rank > 1
        if not (chunked or threaded_rows):
            for item in hooks.scratch:
                self.emit(*item)
        span = ("0", "n0")
        if chunked:
            start, span = self._chunk_header(partials, rank), ("lo", "hi")
            for item in hooks.scratch:
                self.emit(*item)
        if columns:
            start = self._column_header(rank)
        for d in range(rank):
            for line in hooks.pre.get(d, []):
                self.emit(1 + d, *line)
            if (blocked or guarded or tested) and d == rank - 1:
                break
            loop = "prange" if (d == 0 and prange_ok) else "range"
            self.uses_prange |= loop == "prange"
            if (d == 0 and chunked) or (d == rank - 1 and columns):
                # from lo, LLVM cannot tell i >= 0 (range(lo, hi) kept the loop scalar)
                self.emit(1 + d, f"for j{d} in range(hi - lo):")
                self.emit(2 + d, f"i{d} = rt.nonneg(lo + j{d})")
            else:
                self.emit(1 + d, f"for i{d} in {loop}(n{d}):")
            if d == 0 and threaded_rows:
                for _, text, eqn in hooks.scratch:
                    self.emit(2, text, eqn)
        if blocked:
            self._blocked_loops(rank - 1, body, hooks, *(span if rank == 1 else ("0", None)))
        elif guarded:
            self._guarded_loops(rank - 1, body, prange_ok and rank == 1)
        elif tested:
            self._tested_loops(rank - 1, body, hooks, tested,
                               *(span if rank == 1 else ("lo", "hi") if columns
                                 else ("0", f"n{rank - 1}")))
        else:
            self._innermost(1 + rank, body, hooks)
        for d in range(rank - 1, -1, -1):
            for line in hooks.post.get(d, []):
                self.emit(1 + d, *line)
        if chunked:
            self._chunk_footer(start, partials)
        if columns:  # the loops move into the blocks' loop
            self.block[start:] = [(d + 1, text, eqn) for d, text, eqn in self.block[start:]]
        return self.block

    # -- reductions over a leading axis, their columns in blocks on every core ----------------
    def _column_blocked(self, nest, rank) -> bool:
        """A threaded nest that reduces over its leading axis but keeps its last one (a
        column sum, `jnp.max(x, axis=0)`): every row adds into the same output row, so the
        rows cannot be split; its columns are, one block per thread (`rt.column_start`).
        Each output element is still reduced by one thread over the rows in order: the
        bits depend on neither the thread count nor the blocks. Only from two blocks' worth
        of columns in the traced shape (a narrower one keeps one thread)."""
        axes = [{a % rank for a in e.params["axes"]} for e in nest.roots if _is_reduction(e)]
        return bool(self.parallel and rank > 1 and any(0 in a for a in axes)
                    and all(rank - 1 not in a for a in axes)
                    and nest.shape[-1] >= 2 * COLUMN_BLOCK)

    def _column_header(self, rank) -> int:
        """The column blocks' loop; returns where its body starts in the block."""
        n = f"n{rank - 1}"
        self.emit(1, f"ncb = rt.column_blocks({n}, rt.thread_count())")
        self.emit(1, "for cb in prange(ncb):  # blocks of columns, each reduced over every "
                     "row by one thread")
        self.uses_prange = True
        start = len(self.block)
        self.emit(1, f"lo = rt.nonneg(rt.column_start(cb, ncb, {n}))")
        self.emit(1, f"hi = rt.column_start(cb + 1, ncb, {n})")
        return start

    # -- reductions over every axis, in chunks on every core ----------------------------------
    def _chunked(self, nest, rank) -> bool:
        """A threaded nest whose reductions all reduce every axis (a scalar each): its outer
        axis is cut into chunks (their number from the shape alone, `rt.reduce_chunks`),
        each reduced by one thread, and the chunks' results combined in order after the
        loop, so the result depends on the input only, not on the thread count."""
        reds = [e for e in nest.roots if _is_reduction(e)]
        return bool(self.parallel and rank > 0 and reds and all(
            len({a % rank for a in e.params["axes"]}) == rank for e in reds))

    def _chunk_header(self, partials, rank) -> int:
        """The chunk loop's first lines; returns where its body starts in the block."""
        size = " * ".join(f"n{d}" for d in range(rank))
        self.emit(1, f"nch = rt.reduce_chunks(n0, {size})")
        for eqn, _, part in partials:
            dt = ctor(compute_dtype(eqn.outvars[0].aval.dtype))
            self.emit(1, f"{part}s = np.empty(nch, {dt})", eqn)
        self.emit(1, "for ch in prange(nch):  # chunks of the reduced axis, combined in "
                     "order below")
        self.uses_prange = True
        start = len(self.block)
        self.emit(1, "lo = rt.nonneg(ch * n0 // nch)")
        self.emit(1, "hi = (ch + 1) * n0 // nch")
        return start

    def _chunk_footer(self, start, partials):
        """Each chunk stores its results; the loop's body moves one level in; after it,
        each reduction combines its chunks' results in chunk order."""
        for eqn, _, part in partials:
            self.emit(1, f"{part}s[ch] = {part}", eqn)
        self.block[start:] = [(d + 1, text, eqn) for d, text, eqn in self.block[start:]]
        for eqn, st, part in partials:
            dt = eqn.outvars[0].aval.dtype
            monoid = _reduction(eqn).monoids[dt.kind]
            self.emit(1, f"{st} = {typed_const(monoid.identity(dt), dt)}", eqn)
            self.emit(1, "for ch in range(nch):", eqn)
            self.emit(2, f"{st} = {cast_text(dt, monoid.combine(CPU, st, f'{part}s[ch]', dt))}",
                      eqn)

    def _innermost(self, depth, body, hooks):
        """The loop body, with the hooks of a reduction over no axes around it."""
        for line in hooks.pre.get("inner", []):
            self.emit(depth, *line)
        self.block.extend(body)
        for line in hooks.post.get("inner", []):
            self.emit(depth, *line)

    def _blocked_loops(self, k, body, hooks, lo="0", hi=None):
        """The innermost loop, over lo..hi (0..n), in blocks: full blocks (a constant trip
        count, so LLVM vectorizes them), then the tail; the body appears in both. Max/min
        lanes need a vectorized tail too (a short row is all tail): it runs a full block's
        width, the body (every root) only where `j < m`, and lanes past the end see the
        identity."""
        size, lanes = hooks.pre["block"], hooks.pre.get("lanes", [])
        hi = hi or f"n{k}"
        length = hi if lo == "0" else f"({hi} - {lo})"
        self.emit(1 + k, f"f{k} = {hi} - {length} % {size}")
        self.emit(1 + k, f"for b{k} in range({lo}, f{k}, {size}):")
        # from a chunk's start LLVM cannot tell b + j >= 0 either
        index = f"i{k} = b{k} + j{k}" if lo == "0" else f"i{k} = rt.nonneg(b{k} + j{k})"
        pre = self._block_pretests(body)
        if pre:
            self._tested_block(k, body, hooks, pre, size, index)
        else:
            self.emit(2 + k, f"for j{k} in range({size}):")
            self.emit(3 + k, index)
            self._innermost(3 + k, body, hooks)
        for full, _, eqn in hooks.after_block:
            self.emit(2 + k, full, eqn)
        self.emit(1 + k, f"if f{k} < {hi}:")
        self.emit(2 + k, f"m{k} = {hi} - f{k}")
        # f + j >= 0, but LLVM cannot tell: rt.nonneg spares the wrap-around (gathers)
        index = f"i{k} = rt.nonneg(f{k} + j{k})"
        if pre and not lanes:  # the tail, as a shorter block: its tests first too
            self._tested_block(k, body, hooks, pre, f"m{k}", index)
        elif not lanes:
            self.emit(2 + k, f"for j{k} in range(m{k}):")
            self.emit(3 + k, index)
            self._innermost(3 + k, body, hooks)
        elif not pre:
            self._lanes_tail(k, body, hooks, lanes, size, index)
        else:  # the tests over the tail first, then its lanes with the variants they allow
            self._tested_block(k, body, hooks, pre, f"m{k}", index, run=lambda lines: (
                self._lanes_tail(k, lines, hooks, lanes, size, index)))
        for _, tail, eqn in hooks.after_block:
            self.emit(2 + k, tail, eqn)

    def _lanes_tail(self, k, body, hooks, lanes, size, index):
        """The last block of a max/min with lanes at full width, vectorized: each lane
        update takes `w`, the value where j < m, else the identity (an unconditional select
        and store, which vectorize better than a masked store)."""
        selected = {lane["update"](lane["val"]): f"{lane['w']} = {lane['val']}"
                    for lane in lanes}
        self.emit(2 + k, "# the last block at full width (vectorized): lanes past the end "
                         "take the identity")
        self.emit(2 + k, f"for j{k} in range({size}):")
        self.emit(3 + k, f"if j{k} < m{k}:")
        self.emit(4 + k, index)
        for line in hooks.pre.get("inner", []):
            self.emit(4 + k, *line)
        for depth, text, eqn in body:
            self.block.append((depth + 1, selected.get(text, text), eqn))
        for line in hooks.post.get("inner", []):
            self.emit(4 + k, *line)
        self.emit(3 + k, "else:")
        for lane in lanes:
            self.emit(4 + k, f"{lane['w']} = {lane['init']}", lane["eqn"])
        for lane in lanes:
            self.emit(3 + k, lane["update"](lane["w"]), lane["eqn"])

    @staticmethod
    def _block_pretests(body):
        """The tests of a reduction nest's guarded calls (exp's clamp in logsumexp's
        `sum(exp(x - max))`), when every one of them can run before the block (`_pretests`,
        their arguments' calls computed twice); else none. A reduction's block accumulates,
        so it cannot run again when a test held in the fast loop, as `_guarded_loops` runs
        an elementwise one: its variant must be known before it runs."""
        calls = {m.group(0) for _, text, _ in body for m in GUARDED.finditer(text)}
        if not calls:
            return []
        pre, hoisted = _pretests(body, calls=True)
        return pre if hoisted == calls else []

    def _tested_block(self, k, body, hooks, pre, size, index, shift=0, run=None):
        """One block of a reduction nest whose guarded calls' tests run first: the block
        then runs once, with the fast variants where no test held, else with the full
        functions (the same bits wherever both are defined). `shift`: how much deeper the
        loops sit than the body's lines (1 outside a blocked nest, whose body is a level
        shallower). `run(lines)`: emits the block's loop for the body's lines, a level in
        (default: a loop of `size` values)."""
        self.emit(2 + k, f"g{k} = False")
        self.emit(2 + k, f"for j{k} in range({size}):  # the tests first")
        self.emit(3 + k, index)
        self.block.extend((depth + shift, text.replace("{g}", f"g{k}"), eqn)
                          for depth, text, eqn in pre)
        fast = [(depth, GUARDED.sub(r"rt.\1_\2_fast(\3)", text), eqn)
                for depth, text, eqn in body]
        for flag, lines in ((f"if not g{k}:  # no test held: the fast variants", fast),
                            ("else:  # a test held: the full functions", body)):
            self.emit(2 + k, flag)
            if run:
                start = len(self.block)
                run(lines)
                self.block[start:] = [(d + 1, t, e) for d, t, e in self.block[start:]]
                continue
            self.emit(3 + k, f"for j{k} in range({size}):")
            self.emit(4 + k, index)
            self._innermost(4 + k, [(depth + 1 + shift, text, eqn)
                                    for depth, text, eqn in lines], hooks)

    def _tested_loops(self, k, body, hooks, pre, lo, hi):
        """The innermost loop, over lo..hi, of a nest that reduces without blocks (into an
        output row: a sum over a leading axis) and calls guarded functions: blocks of BLOCK
        values with their tests first (`_tested_block`), then the tail as a shorter block,
        the same way."""
        length = hi if lo == "0" else f"({hi} - {lo})"
        self.emit(1 + k, f"f{k} = {hi} - {length} % {BLOCK}")
        self.emit(1 + k, f"for b{k} in range({lo}, f{k}, {BLOCK}):")
        index = f"i{k} = b{k} + j{k}" if lo == "0" else f"i{k} = rt.nonneg(b{k} + j{k})"
        self._tested_block(k, body, hooks, pre, BLOCK, index, shift=1)
        self.emit(1 + k, f"if f{k} < {hi}:  # the tail, as a shorter block")
        self.emit(2 + k, f"m{k} = {hi} - f{k}")
        self._tested_block(k, body, hooks, pre, f"m{k}", f"i{k} = rt.nonneg(f{k} + j{k})",
                           shift=1)

    def _guarded_loops(self, k, body, threaded=False):
        """The innermost loop of an elementwise nest whose functions have a fast variant for
        most arguments (GUARDED: sin/cos/tan without their large-argument table, pow and
        atan2 without their special cases, lgamma and digamma for x > 0), per block of
        BLOCK values: a block where a call's test holds runs the full functions, the others
        the fast variants (the body is elementwise: rewriting its outputs is harmless).
        Tests whose arguments take no runtime call to compute (`_pretests`: lgamma(x) of an
        input, sin(2 x + 1)) are ORed into a flag first, in a loop of their own, so that
        such a block skips the fast variants; the others are ORed in by the fast loop, and
        a block where one holds runs again. The tail is a shorter block, run the same way.
        Every value still comes out of the full function's result for its arguments; only
        the common case skips the table's gathers or the special cases. `threaded`: the
        blocks of a one-axis nest are split across threads."""
        pre, hoisted = _pretests(body)
        fast = []
        for depth, text, eqn in body:
            fast.append((depth + 1, GUARDED.sub(r"rt.\1_\2_fast(\3)", text), eqn))
            for m in GUARDED.finditer(text):
                if m.group(0) not in hoisted:
                    test = GUARD_TESTS[m.group(1)]
                    fast.append((depth + 1, f"g{k} |= rt.{test}_{m.group(2)}({m.group(3)})",
                                 eqn))
        self.emit(1 + k, f"f{k} = n{k} - n{k} % {BLOCK}")
        if threaded:
            self.uses_prange = True
            self.emit(1 + k, f"for q{k} in prange(f{k} // {BLOCK}):")
            self.emit(2 + k, f"b{k} = (q{k} & {BLOCK_START_MASK:#x}) * {BLOCK}  # (>= 0: see "
                             f"BLOCK_START_MASK in render.py)")
        else:
            self.emit(1 + k, f"for b{k} in range(0, f{k}, {BLOCK}):")
        self._guarded_block(k, body, fast, pre, str(BLOCK), f"i{k} = b{k} + j{k}")
        # the tail: a block of its own (with the full functions throughout, a row of 100
        # values ran sin's table for every value: 20x slower than the fast variant)
        self.emit(1 + k, f"if f{k} < n{k}:  # the tail, as a shorter block")
        self.emit(2 + k, f"m{k} = n{k} - f{k}")
        self._guarded_block(k, body, fast, pre, f"m{k}", f"i{k} = rt.nonneg(f{k} + j{k})")

    def _guarded_block(self, k, body, fast, pre, size, index):
        """One block of `_guarded_loops`, `size` values long, each at `index`: the tests
        that need no call, the fast variants (their loop ORs in the other tests), and the
        block again with the full functions if a test held."""
        self.emit(2 + k, f"g{k} = False")
        loop_depth = 2 + k
        if pre:
            self.emit(2 + k, f"for j{k} in range({size}):  # the tests that need no call first")
            self.emit(3 + k, index)
            self.block.extend((depth + 1, text.replace("{g}", f"g{k}"), eqn)
                              for depth, text, eqn in pre)
            self.emit(2 + k, f"if not g{k}:  # no test held: the fast variants")
            loop_depth = 3 + k
        self.emit(loop_depth, f"for j{k} in range({size}):")
        self.emit(loop_depth + 1, index)
        self.block.extend((depth + loop_depth - 2 - k, text, eqn) for depth, text, eqn in fast)
        self.emit(2 + k, f"if g{k}:  # a test held: the block with the full functions")
        self.emit(3 + k, f"for j{k} in range({size}):")
        self.emit(4 + k, index)
        self.block.extend((depth + 2, text, eqn) for depth, text, eqn in body)

    def _blocked(self, eqn) -> bool:
        """A floating-point reduction over the innermost axis, accumulated in a scalar: done
        per block of values, lanes and cascade (fast and accurate, and no reassociation of
        any single chain, so it needs no fastmath). A float max/min is blocked only with
        AVX-512 (MAX_MIN_LANES); without, its plain loop vectorizes."""
        if not _is_reduction(eqn) or _reduction(eqn).blocked is None or self.fastmath:
            return False  # with fastmath LLVM may reassociate and vectorizes on its own
        x = eqn.invars[0].aval
        dt = eqn.outvars[0].aval.dtype
        axes = sorted(a % max(x.ndim, 1) for a in eqn.params["axes"])
        cascade = _reduction(eqn).cascade  # complex max/min: no lanes (plain loop)
        if not cascade and not MAX_MIN_LANES:
            return False
        return (dt.kind in ("fc" if cascade else "f") and not is_half(dt) and bool(axes)
                and axes[-1] == x.ndim - 1
                and axes == list(range(x.ndim - len(axes), x.ndim)))

    def _reduction(self, eqn, st, idx, hooks, blocked):
        x = eqn.invars[0].aval
        dt = eqn.outvars[0].aval.dtype
        axes = sorted(a % max(x.ndim, 1) for a in eqn.params["axes"])
        monoid = _reduction(eqn).monoids[dt.kind]
        empty = any(x.shape[a] == 0 for a in axes)
        init = typed_const(monoid.start(dt, empty), dt)
        kept = tuple(i for d, i in enumerate(idx) if d not in axes)
        val = self.value(eqn.invars[0], idx)
        rank = len(idx)
        suffix = axes == list(range(rank - len(axes), rank))
        if suffix:  # accumulate in a scalar, store once per output element
            r = rank - len(axes)
            r = "inner" if r == rank else r  # no axes: around the loop body itself
            acc = st if not kept else self.fresh("a")
            if blocked and self._blocked(eqn):
                self._blocked_reduction(eqn, acc, val, init, r, hooks)
            else:
                hooks.pre.setdefault(r, []).append((f"{acc} = {init}", eqn))
                step = cast_text(dt, monoid.combine(CPU, acc, val, dt))
                self.emit(self.depth, f"{acc} = {step}", eqn)
            if kept:
                hooks.post.setdefault(r, []).append((self.write(st, kept, acc), eqn))
                if not st.startswith("t"):
                    self.note_sizes(st, kept)
        else:  # accumulate into the output array (reduced axes outside kept ones)
            cell = self.read(st, kept)
            if not st.startswith("t"):
                self.note_sizes(st, kept)
            step = cast_text(dt, monoid.combine(CPU, cell, val, dt))
            self.emit(self.depth, self.write(st, kept, step), eqn)
            fill = f"rt.float_to_half({init})" if st in self.half else init
            hooks.setup.append((1, f"{st}.fill({fill})", eqn))
        if st.startswith("t"):
            shape = ", ".join(f"n{d}" for d in range(rank) if d not in axes)
            hooks.setup.insert(0, (1, f"{st} = np.empty(({shape},), "
                                      f"{ctor(compute_dtype(dt))})", eqn))

    def _blocked_reduction(self, eqn, acc, val, init, r, hooks):
        dt = ctor(eqn.outvars[0].aval.dtype)
        red = _reduction(eqn)
        op, cascade = red.blocked, red.cascade
        k = len(eqn.invars[0].aval.shape) - 1
        # The nest's block: a cascade fixes it at BLOCK (its numerics depend on it); max/min
        # alone take `max_min_lanes` of the row. Kept in hooks.pre under "block" (and
        # max/min lanes under "lanes") for _blocked_loops.
        nest = next(n for n in self.nests if any(e is eqn for e in n.roots))
        size = BLOCK if any(self._blocked(e) and _reduction(e).cascade
                            for e in nest.roots) else \
            max_min_lanes(eqn.invars[0].aval.shape[k])
        hooks.pre["block"] = size
        if not cascade:  # max/min: exact in any order; per-lane updates vectorize
            lanes, nans = self.fresh("lane"), self.fresh("nan")
            hooks.scratch.append((1, f"{lanes} = rt.stack_array({size}, {dt})", eqn))
            hooks.scratch.append((1, f"{nans} = rt.stack_array({size}, np.uint8)", eqn))
            hooks.pre.setdefault(r, []).append((f"rt.lanes_fill({lanes}, {init})", eqn))
            hooks.pre.setdefault(r, []).append((f"rt.lanes_fill({nans}, np.uint8(0))", eqn))
            def update(value):  # the lane update statement, of any value
                return f"rt.lane_{op}({lanes}, {nans}, j{k}, {value})"
            self.emit(self.depth, update(val), eqn)
            hooks.pre.setdefault("lanes", []).append(dict(
                update=update, val=val, init=init, w=self.fresh("w"), eqn=eqn))
            hooks.post.setdefault(r, []).insert(
                0, (f"{acc} = {dt}(rt.lanes_total_{op}({lanes}, {nans}, {init}))", eqn))
            return
        # sum/prod: a partial result per block (its adds reassociable, so the block loop
        # vectorizes), blocks combined by the cascade
        part = self.fresh("p")
        if eqn.outvars[0].aval.dtype.kind == "f":
            step = f"rt.{op}_reassoc({part}, {val})"
        else:  # complex: plain arithmetic (no vector reduction to gain)
            step = red.monoids["c"].combine(CPU, part, val, eqn.outvars[0].aval.dtype)
        self.emit(self.depth, f"{part} = {step}", eqn)
        stack, levels, top = self.fresh("stk"), self.fresh("lvl"), self.fresh("top")
        hooks.scratch.append((1, f"{stack} = rt.stack_array(64, {dt})", eqn))
        hooks.scratch.append((1, f"{levels} = rt.stack_array(64, np.int64)", eqn))
        hooks.pre.setdefault(r, []).append((f"{top} = 0", eqn))
        hooks.pre.setdefault(r, []).append((f"{part} = {init}", eqn))
        push = f"{top} = rt.cascade_push_{op}({stack}, {levels}, {top}, {part})"
        hooks.after_block.append((push, push, eqn))
        hooks.after_block.append((f"{part} = {init}", f"{part} = {init}", eqn))
        hooks.post.setdefault(r, []).insert(
            0, (f"{acc} = {dt}(rt.cascade_total_{op}({stack}, {top}, {init}))", eqn))

    def render(self) -> KernelCode:
        segments = _fuse_rows([self.render_nest(nest) for nest in self.nests])
        cached = self._worth_caching(segments)
        if cached:
            other = FusedRenderer(self.body, self.name, parallel=self.parallel,
                                  fastmath=self.fastmath, row_cached=cached)
            found = _fuse_rows([other.render_nest(nest) for nest in other.nests])
            names = {other.storage[v] for v in cached}
            if _row_buffers(found, names):
                return other._code(found)
        return self._code(segments)

    def _worth_caching(self, segments) -> frozenset:
        """Values that nests sharing a row loop each compute (`computed_in`: at their own
        index, over the whole domain), where that costs more than a store and a load
        (an elementary function: rules.COST): softmax's exp(x - max), which its sum and
        its division each computed. Stored once per row (`_row_buffers`)."""
        groups = [set(seg["nests"]) for seg in segments if isinstance(seg, dict)]
        found = set()
        for v, nests in self.computed_in.items():
            eqn = self.producer[v]
            if (len(nests) > 1 and any(nests <= g for g in groups)
                    and eqn.primitive.kind == "elementwise" and v not in self.out_pos
                    and operations_per_element(eqn.primitive) > 1):
                found.add(v)
        return frozenset(found)

    def _code(self, segments) -> KernelCode:
        blocks = _lines(segments)
        params = list(self.inputs.values())
        outs = [(i, v) for i, v in enumerate(self.body.outvars)]
        array_outs = [i for i, v in outs if v.aval.ndim]
        scalar_outs = [i for i, v in outs if not v.aval.ndim]
        params += [f"out{i}" for i in array_outs]
        params += [name for name, _ in self.consts.values()]
        lines = [f"def {self.name}({', '.join(params)}):"]
        line_eqns, combined = {}, {}
        for depth, text, eqn in blocks:
            lines.append("    " * depth + text)
            if isinstance(eqn, _Combined):
                combined[len(lines)], eqn = eqn.producer, eqn.eqn
            if eqn is not None:
                line_eqns[len(lines)] = eqn
        if scalar_outs:
            rets = [self._scalar_result(self.body.outvars[i], i) for i in scalar_outs]
            lines.append(f"    return {', '.join(rets)}" + ("," if len(rets) == 1 else ""))
        if len(lines) == 1:
            lines.append("    pass")
        return KernelCode(self.name, "\n".join(lines) + "\n",
                          [lit for _, lit in self.consts.values()], len(self.inputs),
                          array_outs, scalar_outs, line_eqns, self.uses_prange,
                          kernel_cost(self.body), list(self.body.eqns), combined)

    def _scalar_result(self, v, pos):
        if isinstance(v, Literal):
            return self.const(v)
        return self.storage.get(v.id) or self.inputs[v.id]


# --- nests that share their rows: one loop ---------------------------------------------------
ROW_LOOP = re.compile(r"for i0 in (?:prange|range)\(n0\):")
ARRAY_USE = re.compile(r"\b((?:t|out)\d+)\b(\[([^\]]*)\])?")
STORE = re.compile(r"((?:t|out)\d+)\[([^\]]*)\] = ")
# what a later nest's lines before its loop may be, to move before the shared loop: its
# sizes, its temporaries' allocations and (on one thread) its reductions' scratch
MOVABLE = re.compile(r"n\d+ = .*|t\d+ = np\.empty\(.*|\w+ = rt\.stack_array\(.*")


def _row_loop(block):
    """(lines before, the loop line, its body) of a nest whose block is one loop over its
    rows, `for i0 in ...(n0):`, with nothing after it; else None."""
    loops = [n for n, (depth, text, _) in enumerate(block) if depth == 1 and
             text.startswith(("for ", "while ", "if "))]
    if len(loops) != 1 or not ROW_LOOP.fullmatch(block[loops[0]][1]):
        return None
    n = loops[0]
    if any(depth < 2 for depth, _, _ in block[n + 1:]):
        return None
    return block[:n], block[n], block[n + 1:]


def _row_arrays(body):
    """(arrays the body writes only within row i0, arrays it writes or passes otherwise):
    a store whose index starts at i0 stays in the row; a store elsewhere, or an array
    passed whole to a call, may touch any row."""
    rows, anywhere = set(), set()
    for _, text, _ in body:
        for name, index in STORE.findall(text):
            (rows if index.split(",")[0].strip() == "i0" else anywhere).add(name)
        anywhere |= {m.group(1) for m in ARRAY_USE.finditer(text) if not m.group(2)}
    return rows - anywhere, anywhere


ASSIGNED = re.compile(r"(?:for )?([A-Za-z_]\w*)(?: in | *(?:[-+*/|&^%]|//|\*\*|<<|>>)?=(?!=))")


def _assigned(body) -> set:
    """The names a body's lines assign (`v3 = ...`, `s0 |= ...`, `for j1 in ...`)."""
    return {m.group(1) for _, text, _ in body for m in [ASSIGNED.match(text)] if m}


def _names(body) -> set:
    return {name for _, text, _ in body for name in NAME.findall(text)}


def _reads_only_rows(body, written):
    """Whether the body uses the arrays in `written` only at row i0."""
    for _, text, _ in body:
        for m in ARRAY_USE.finditer(text):
            if m.group(1) in written and (not m.group(2) or
                                          m.group(3).split(",")[0].strip() != "i0"):
                return False
    return True


ALLOCATION = re.compile(r"(t\d+) = np\.empty\(\(([\w, ]*)\), .*\)")


def _sizes(before, allocated=None) -> dict:
    """A nest's sizes (`n1 = x0.shape[1]` -> {"n1": "x0.shape[1]"}); with `allocated` (the
    group's temporaries: name -> their sizes' names, and the group's sizes), a size read
    from one of them is the size it was allocated with (`t1.shape[0]` is the group's n0)."""
    sizes = {}
    for _, text, _ in before:
        m = re.fullmatch(r"(n\d+) = (.*)", text)
        if m:
            shape = re.fullmatch(r"(t\d+)\.shape\[(\d+)\]", m.group(2))
            if allocated and shape and shape.group(1) in allocated[0]:
                dims = allocated[0][shape.group(1)]
                sizes[m.group(1)] = allocated[1].get(dims[int(shape.group(2))], m.group(2))
            else:
                sizes[m.group(1)] = m.group(2)
    return sizes


def _allocations(before) -> dict:
    found = {}
    for _, text, _ in before:
        m = ALLOCATION.fullmatch(text)
        if m:
            found[m.group(1)] = [d.strip() for d in m.group(2).split(",") if d.strip()]
    return found


def _fuse_rows(blocks):
    """Consecutive nests that each loop over the same rows (`for i0 in prange(n0)`: a row
    reduction, then the elementwise nest that uses its result, as in a softmax or a
    layernorm) run in one loop: each row's later nests run right after its earlier ones,
    while the row is in the cache. A later nest joins when its loop line and its number of
    rows are the same (another inner size gets a name of its own), its lines before the
    loop can move before the shared one (MOVABLE), it uses what the earlier ones wrote
    only at row i0, which they wrote only there (a column sum's row is not done until
    every row is), and it reads no name they assign that it does not assign itself (a
    whole-array reduction's accumulator). Returns segments: a nest's lines as they were,
    or a group (dict: its lines before the loop, the loop line, the body, the nests'
    numbers); `_lines` joins them."""
    out, group = [], None
    for no, block in enumerate(blocks):
        parts = _row_loop(block)
        if group is not None and parts is not None:
            before, loop, body = parts
            sizes = _sizes(before, (_allocations(group["before"]), group["sizes"]))
            used = {m.group(1) for _, t, _ in body for m in ARRAY_USE.finditer(t)}
            if (loop[1] == group["loop"][1] and all(MOVABLE.fullmatch(t) for _, t, _ in before)
                    and sizes.get("n0") == group["sizes"]["n0"]
                    and _reads_only_rows(body, group["rows"] | group["anywhere"])
                    and not group["anywhere"] & used
                    # (a scalar the earlier nests assign, as a whole-array reduction's
                    # accumulator, is not done until the last row either)
                    and not (_names(body) - _assigned(body)) & group["assigned"]):
                # an inner size unlike the group's (a (rows, 1) nest among (rows, n) ones)
                # gets a name of its own
                for k in [k for k, v in sizes.items() if group["sizes"].get(k, v) != v]:
                    own = re.compile(rf"\b{k}\b")
                    before = [(d, own.sub(f"{k}_{no}", t), e) for d, t, e in before]
                    body = [(d, own.sub(f"{k}_{no}", t), e) for d, t, e in body]
                    sizes[f"{k}_{no}"] = sizes.pop(k)
                group["before"] += [line for line in before if not re.match(r"n\w+ = ", line[1])
                                    or line[1].split(" = ")[0] not in group["sizes"]]
                group["sizes"].update(sizes)
                group["body"] += body
                group["assigned"] |= _assigned(body)
                group["nests"].append(no)
                rows, anywhere = _row_arrays(body)
                group["rows"] |= rows
                group["anywhere"] |= anywhere
                continue
        group = None
        if parts is None:
            out.append(block)
            continue
        before, loop, body = parts
        rows, anywhere = _row_arrays(body)
        group = {"before": list(before), "loop": loop, "body": list(body), "nests": [no],
                 "rows": rows, "anywhere": anywhere, "sizes": _sizes(before),
                 "assigned": _assigned(body)}
        out.append(group)
    return out


def _lines(segments):
    lines = []
    for seg in segments:
        lines += seg["before"] + [seg["loop"]] + seg["body"] if isinstance(seg, dict) else seg
    return lines


def _row_buffers(segments, names) -> bool:
    """Turns each temporary in `names` (stored and read at row i0 only, within one group's
    loop) into a buffer of one row: allocated per row under prange (Numba hoists it out of
    each thread's share of the rows: one per thread), once before a serial loop, its index
    without i0. False (and the segments partly changed: drop them) where one is used
    otherwise."""
    for name in names:
        use = re.compile(rf"\b{name}\b(\[i0, )?")
        users = [seg for seg in segments
                 if any(use.search(t) for _, t, _ in _lines([seg]))]
        if len(users) != 1 or not isinstance(users[0], dict):
            return False
        seg = users[0]
        alloc = [n for n, (_, t, _) in enumerate(seg["before"])
                 if t.startswith(f"{name} = np.empty((n0, ")]
        others = [t for n, (_, t, _) in enumerate(seg["before"]) if n not in alloc]
        if len(alloc) != 1 or any(use.search(t) for t in others) or not all(
                m.group(1) for _, t, _ in seg["body"] for m in use.finditer(t)):
            return False
        seg["body"] = [(d, use.sub(f"{name}[", t), e) for d, t, e in seg["body"]]
        depth, text, eqn = seg["before"].pop(alloc[0])
        row = (depth, text.replace("np.empty((n0, ", "np.empty((", 1), eqn)
        if "prange" in seg["loop"][1]:
            seg["body"].insert(0, (2, row[1], eqn))
        else:
            seg["before"].append(row)
    return True


def kernel_cost(body: Jaxpr) -> Cost:
    """Flops: per element, one per elementwise op (an elementary function its measured
    weight, rules.COST), one per element reduced. Bytes: what the kernel reads and writes
    in memory (its inputs and outputs, once)."""
    flops = 0
    for e in body.eqns:
        if _is_reduction(e):
            flops += e.invars[0].aval.size
        elif not _is_index_map(e):
            flops += e.outvars[0].aval.size * operations_per_element(e.primitive)
    nbytes = sum(v.aval.size * v.aval.dtype.itemsize for v in body.invars)
    nbytes += sum(v.aval.size * v.aval.dtype.itemsize for v in body.outvars
                  if isinstance(v, Var))
    return Cost(flops=int(flops), bytes_moved=int(nbytes))


# names generated code relies on: a kernel may not shadow them in its module
_RESERVED = set(dir(builtins)) | {"np", "rt", "njit", "prange", "objmode"}


def function_name(name: str) -> str:
    """A kernel name usable as a Python identifier that shadows nothing the generated code
    uses (`and` -> `and_`, `max` -> `max_`)."""
    name = re.sub(r"\W", "_", name) or "kernel"
    if name[0].isdigit():
        name = f"k_{name}"
    if keyword.iskeyword(name) or name in _RESERVED:
        name = f"{name}_"
    return name


def render_fused(body: Jaxpr, name: str, *, parallel: bool = False,
                 fastmath: bool = False) -> KernelCode:
    return FusedRenderer(body, function_name(name), parallel=parallel,
                         fastmath=fastmath).render()
