"""The deliberate differences the fuzzer knows about: README.md, "Where jitviz differs from
JAX, deliberately". A mismatch one of them covers is not a failure; every other mismatch is.

Each entry is precise (it matches the first statement whose result differs, not a whole
program) and carries an example program that shows the difference, run by
tests/test_jax_differential.py::test_known_difference_is_real_and_recognised, so an entry
that no longer matches anything (the difference is gone) or that hides more than it says
fails the suite.

Of README's list, nine change what a jitted program computes: "the sign of a NaN is not
read", "subnormal numbers are kept", "a product with a boolean is IEEE's", "the sign of a
zero sum is not specified", "a float sum adds pairwise", "an index beyond int32 clamps", "a
division is correctly rounded", "how a dot product rounds is not specified" and "a reverse
cumulative sum or product runs from the end". The others are about jaxpr
text, tracer reprs, message wording, jitviz's own `lax.gather`/`lax.scatter` API (not
generated, see generator.SKIPPED), the `keep_float64` switch (off, as the fuzzer runs: with it
off, 64-bit inputs and named dtypes are 32-bit without x64, as in JAX) and the ndarray
subclass that results are.

A predicate receives a `runner.Mismatch` (fields: backend, kind, op, stmt, operands, key,
detail, jax, jitviz, localized, nan_sign_only, subnormal_only, bool_product_only,
algsimp_only, unrounded_products_only, sum_order_only, suffix_order_only, program = {"source",
"args", "x64", ...}).
"""
from __future__ import annotations

import dataclasses
import re
from typing import Callable


@dataclasses.dataclass(frozen=True)
class Entry:
    name: str
    reason: str
    predicate: Callable
    example: tuple  # ([("v0 = ...", CATALOG op)], "args = (...)", x64): shows the difference
    backends: tuple = ("interpret", "cpu")  # where the example differs from JAX

    def __call__(self, m) -> bool:
        try:
            return bool(self.predicate(m))
        except Exception:  # a predicate never makes a run fail
            return False


# the sign of a zero that is a sum of terms or products depends on the order of the additions
# and on the accumulator's start (+0.0, -0.0 or the first term): XLA's choice varies with the
# operation and its fusion (JAX's trace of a -0.0 matrix is +0.0, its sum is -0.0)
SUMS = {
    "jnp.dot", "jnp.matmul", "op.__matmul__", "method.dot", "jnp.inner", "jnp.vdot",
    "jnp.outer", "jnp.tensordot", "jnp.trace", "lax.dot", "lax.dot_general", "jnp.sum",
    "method.sum", "jnp.mean", "method.mean", "jnp.average", "jnp.var", "method.var", "jnp.std",
    "method.std", "jnp.cumsum", "method.cumsum", "lax.cumsum", "lax.reduce_sum",
}
_CONTROL_FLOW = {"lax.cond", "lax.switch", "lax.fori_loop", "lax.while_loop", "lax.scan",
                 "lax.map"}
_SUM_CALL = re.compile(r"jnp\.(sum|mean|cumsum|dot|matmul|var|std|trace)\("
                       r"|\.(sum|mean|cumsum)\(| @ ")


def _sign_of_a_zero_sum(m):
    """A zero-sign difference at a sum or product of arrays, also one inside a loop or
    branch body."""
    if m.kind != "zero-sign" or not m.localized:
        return False
    return m.op in SUMS or (m.op in _CONTROL_FLOW and bool(_SUM_CALL.search(m.stmt or "")))


_INDEXING = {"getitem", "jnp.take", "method.take", "lax.dynamic_slice",
             "lax.dynamic_index_in_dim", "jnp.take_along_axis"}
_BEYOND_INT32 = re.compile(r"(?<![\d.e])-?\d{10,}(?![\d.])")  # |n| >= 2**31 has 10+ digits


def _index_beyond_int32(m):
    """A value difference at an indexing statement of a program (or its minimised form)
    passing an integer argument beyond int32: JAX converts such an index to int32 first (it wraps), jitviz clamps it."""
    if m.kind != "value" or m.op not in _INDEXING:
        return False
    args = [(p or {}).get("args", "") for p in (m.program, m.minimized)]  # the minimised
    # program passes the index itself where the whole one computes it
    return any(abs(int(n)) >= 2**31 for text in args for n in _BEYOND_INT32.findall(text))


KNOWN_DIFFERENCES = [
    Entry("nan-sign-not-read",
          "README 'The sign of a NaN is not read': signbit/copysign of a negative NaN give "
          "False/+ (JAX reads the bit); the statement alone agrees once its NaN operands "
          "are made positive",
          lambda m: bool(m.nan_sign_only),
          ([("v0 = -x0", "op.__neg__"), ("v1 = jnp.signbit(v0)", "jnp.signbit"),
            ("v2 = jnp.copysign(1.0, v0)", "jnp.copysign")],
           "args = (np.array([np.nan, 1.0], dtype=np.float32),)", False)),
    Entry("subnormals-kept",
          "README 'Subnormal numbers are kept': XLA's CPU code reads subnormal operands as "
          "zero; the statement alone agrees once its subnormal operands are flushed",
          lambda m: bool(m.subnormal_only),
          ([("v0 = x0 * 1", "op.__mul__"), ("v1 = jnp.ceil(v0)", "jnp.ceil")],
           "args = (np.array([1e-45, 1.0], dtype=np.float32),)", False)),
    Entry("product-with-a-boolean",
          "README 'A product with a boolean is IEEE's': XLA computes x * b (b boolean, "
          "converted) as a select, so inf * False is 0 under jax.jit; jitviz, like JAX op by "
          "op, gives NaN. The statement alone agrees once its boolean operands are floats",
          lambda m: bool(m.bool_product_only),
          ([("v0 = jnp.dot(x0, x1)", "jnp.dot")],
           "args = (np.array([True, False]), np.array([1.0, np.inf], dtype=np.float32))",
           False)),
    Entry("sign-of-a-zero-sum",
          "README 'The sign of a zero sum is not specified': a sum or dot product that is "
          "zero may be +0.0 where JAX gives -0.0 or the other way round",
          _sign_of_a_zero_sum,
          ([("v0 = jnp.dot(x0, 2.0)", "jnp.dot")],
           "args = (np.array([-0.0, -0.0], dtype=np.float32),)", False)),
    Entry("sum-adds-pairwise",
          "README 'A float sum adds pairwise': jitviz adds a sum's values in blocks combined "
          "pairwise (NumPy's order in the interpreter), XLA a short row in sequence; with "
          "cancellation the two differ beyond rounding. The statement alone agrees once the "
          "interpreter adds in sequence (the fuzzer's seed 33002578: a cond on such a sum); "
          "a cumulative sum (sequential in jitviz, XLA's own order) is within a sum's error "
          "bound 2 n u sum|x| (seed 37009582)",
          lambda m: bool(m.sum_order_only),
          ([("v0 = jnp.sum(x0)", "jnp.sum")],
           "args = (np.array([0.0, 0.0, 0.0, 1e30, 0.0, -1e30, 0.0, -144.71, 0.0, 0.0], "
           "dtype=np.float32),)", False)),
    Entry("reductions-in-vector-lanes",
          "README 'A float sum adds pairwise' and 'A float product multiplies in vector "
          "lanes': the CPU backend reduces a row in vector lanes, combined by halving; the "
          "interpreter (NumPy) and XLA, for a short row, in sequence. With cancellation or an "
          "overflow the two differ: a product with zeros and an overflowing pair in other "
          "lanes is NaN there, 0.0 in sequence (seed 62000374); the mean of int32 [2**30, 1, "
          "-2**30, 0] is 0.25 there, 0.0 in sequence (seed 62000256)",
          lambda m: bool(m.lane_order_only),
          ([("v0 = jnp.prod(x0)", "jnp.prod")],
           "args = (np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, "
           "0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 3e+38, 0.0], dtype=np.float32),)", False),
          backends=("cpu",)),
    Entry("index-beyond-int32",
          "README 'An index beyond int32 clamps': jitviz clamps a 64-bit index as JAX "
          "documents; JAX converts it to int32 first when the axis fits, so 2**62 wraps to 0",
          _index_beyond_int32,
          ([("v0 = x0[x1]", "getitem")],
           "args = (np.array([0, 1], dtype=np.int64), np.array([4611686018427387904], "
           "dtype=np.int64))", True)),
    Entry("dot-products-rounding",
          "README 'How a dot product rounds is not specified': an FMA adds a product "
          "unrounded, so [inf, 1e30] . [inf, -1e30] is inf with one and NaN without (1e30 * "
          "-1e30 rounds to -inf), and the order of the additions is the kernel's; BLAS "
          "(jitviz) and XLA choose by shape. JAX computing the statement in float64 agrees "
          "with one side, or the two differ within the dot's error bound 2 n u sum|a b| "
          "(where sum|a b| overflows, an inf or NaN on either side is one order's sum: "
          "seed 47000258)",
          lambda m: bool(m.unrounded_products_only),
          # the fuzzer's seed 32003143 (XLA's choice depends on its flags as well: the
          # fuzzer's, driver.FAST_XLA_FLAGS, round this product)
          ([("v0 = jnp.tensordot(x0, x1, axes=1)", "jnp.tensordot")],
           "args = (np.array([[np.inf, 1e30], [1.0, 0.0]], dtype=np.float32), "
           "np.array([[np.inf, 0.0], [-1e30, 0.0]], dtype=np.float32))", False)),
    Entry("division-correctly-rounded",
          "README 'A division is correctly rounded': XLA's algebraic simplifier "
          "computes x / c (a constant or broadcast divisor) as x * (1 / c), an ulp off "
          "(jnp.percentile's q / 100 of float32 10 is 0.099999994), or zero where 1 / c is "
          "subnormal (seed 36003451); JAX run again with that pass off agrees with jitviz",
          lambda m: bool(m.algsimp_only),
          # q a constant of the statement, as the fuzzer met it (seed 31005432): a float32
          # argument would make the float64 result compare at float32's tolerance
          ([("v0 = jnp.percentile(x0, np.array([10.0, 90.0], np.float32), axis=1)",
             "jnp.percentile")],
           "args = (np.array([[0, 1]], dtype=np.int64),)", True)),
    Entry("reverse-cumulative-from-the-end",
          "README 'A reverse cumulative sum or product runs from the end': jitviz "
          "accumulates lax.cumsum/cumprod(reverse=True) from the last element in one pass, "
          "XLA computes each output as its own window in array order; with overflow or "
          "cancellation the two differ (the statement alone agrees once jitviz's interpreter "
          "computes windows)",
          lambda m: bool(m.suffix_order_only),
          # the fuzzer's seed 36008583
          ([("v0 = lax.cumprod(x0, axis=1, reverse=True)", "lax.cumprod")],
           "args = (np.array([[0.0, 3e+38, -6.0]], dtype=np.float32),)", False)),
]


def example_program(entry):
    """The entry's example as a generator.Program."""
    import numpy as np

    from .generator import Program, Stmt
    lines, args, x64 = entry.example
    ns = {"np": np}
    exec(args, ns)
    stmts = [Stmt((line.split(" = ")[0],), line.split(" = ", 1)[1], op) for line, op in lines]
    return Program(0, x64, [(f"x{i}", v) for i, v in enumerate(ns["args"])], stmts)


def known_difference(m):
    for e in KNOWN_DIFFERENCES:
        if e(m):
            return e
    return None
