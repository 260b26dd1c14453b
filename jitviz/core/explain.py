"""Error messages that name the traced function, the arguments a value depends on, the
user's offending line and the fix — JAX's wording first, then what JAX leaves out."""
from __future__ import annotations

import re
import sys

import numpy as np

from .. import errors
from .ir import Var
from .source import source_info_of_frame, user_frame

_MAX_OPS = 5


def _trace_chain(tracer):
    t = tracer._trace
    while t.parent is not None:
        yield t
        t = t.parent
    yield t


def dependencies(tracer):
    """(argument names, producing equations) behind a tracer, across nested traces."""
    args, ops, seen = [], [], set()
    todo = [(tracer._trace, tracer._var)]
    while todo:
        trace, var = todo.pop()
        if not isinstance(var, Var) or var.id in seen:  # a literal depends on nothing
            continue
        seen.add(var.id)
        name = trace.arg_names.get(var.id)
        if name is not None:
            args.append((trace.root is trace, name))
            continue
        eqn = trace.producer.get(var.id)
        if eqn is not None:
            ops.append(eqn)
            todo.extend((trace, a) for a in eqn.invars if isinstance(a, Var))
            continue
        for outer, inner in trace.captured.values():
            if inner is var:
                todo.append((outer._trace, outer._var))
        if var in trace.invars and trace.parent is not None:
            args.append((False, f"an argument of {trace.fun_name}"))
    root = tracer._trace.root
    order = {n: i for i, n in enumerate(getattr(root, "arg_order", []))}
    names = sorted({n for _, n in args}, key=lambda n: (order.get(n, 1 << 30), n))
    ops.sort(key=lambda e: (e.source.line if e.source else 0))
    return names, ops


def _offending_source():
    return source_info_of_frame(user_frame(sys._getframe(2)))


def _quote_names(names):
    """`the argument x` / `the arguments x and y` / `x, y, and z` (JAX's wording)."""
    if len(names) == 1:
        return f"the value of the argument {names[0]}"
    if len(names) == 2:
        return f"the values of the arguments {names[0]} and {names[1]}"
    return "the values of the arguments " + ", ".join(names[:-1]) + f", and {names[-1]}"


def error_repr(tracer) -> str:
    av = tracer.aval
    return f"traced array with shape {av.dtype.name}[{','.join(map(str, av.shape))}]"


def _where(src):
    if src is None:
        return ""
    return f'\n\n  File "{src.file}", line {src.line}, in {src.function}\n    {src.code}\n'


def _static_fix(root, names):
    hints = getattr(root, "static_hints", {})
    nums = sorted({hints[n][0] for n in names if n in hints and hints[n][0] is not None})
    pnames = [hints[n][1] for n in names if n in hints and hints[n][1] is not None]
    if not pnames:
        return ""
    tup = lambda xs: "(" + ", ".join(map(repr, xs)) + ("," if len(xs) == 1 else "") + ")"
    how = f"jit({root.fun_name}, static_argnames={tup(pnames)})"
    if nums:
        how = f"jit({root.fun_name}, static_argnums={tup(nums)}) or {how}"
    return (f"- if {', '.join(map(repr, pnames))} takes only a few different values, mark it "
            f"static: {how}. Each new value then traces and compiles a new version (jitviz "
            "reports each recompile).")


def _context_line(tracer, names):
    """JAX's sentence: the function whose trace the value belongs to (a control-flow body
    names itself: "the function body at f.py:3 for scan"), then what it depends on."""
    trace = tracer._trace
    where = f"the function {trace.fun_name} at {trace.fun_location} for {trace.purpose}"
    if names:
        why = f"it depends on {_quote_names(names)}"
    else:
        why = ("it was computed by jitviz operations on values that are not arguments "
               "(constants or shapes), which are traced too")
    line = (f"The error occurred while tracing {where}. This concrete value was not "
            f"available in Python because {why}.")
    if trace.parent is not None:
        root = trace.root
        line += (f"\n({trace.fun_name} is traced inside the function {root.fun_name} at "
                 f"{root.fun_location} for {root.purpose}.)")
    return line


def _ops_lines(ops):
    if not ops:
        return ""
    from .pretty import NameContext, pp_eqn, render
    ctx = NameContext()
    lines = ["\nThe value became a tracer through these operations:"]
    for e in ops[-_MAX_OPS:]:
        loc = f"{e.source.file}:{e.source.line} ({e.source.function})" if e.source else "?"
        lines.append(f"  operation {render(pp_eqn(e, ctx))}\n    from line {loc}")
    return "\n".join(lines)


_HEADLINES = {
    "bool": (errors.TracerBoolConversionError,
             "Attempted boolean conversion of traced array with shape {aval}."),
    "__index__": (errors.TracerIntegerConversionError,
                  "The __index__() method was called on traced array with shape {aval}."),
    "__array__": (errors.TracerArrayConversionError,
                  "The numpy.ndarray conversion method __array__() was called on traced "
                  "array with shape {aval}."),
}


def concretization_error(tracer, function: str, context: str | None = None):
    """The error for a traced value used where Python needs a concrete one."""
    src = _offending_source()
    names, ops = dependencies(tracer)
    cls, head = _HEADLINES.get(function, (errors.ConcretizationTypeError, None))
    if head is None:
        head = ("Abstract tracer value encountered where concrete value is expected: "
                f"{error_repr(tracer)}\n")
        if context:
            head += context  # a whole sentence from the caller, as JAX's ("It arose in ...")
        else:
            head += (f"The problem arose with the `{function}` function. If trying to convert "
                     f"the data type of a value, try using `x.astype({function})` or "
                     f"`jnp.array(x, {function})` instead.")
    else:
        head = head.format(aval=error_repr(tracer).replace("traced array with shape ", ""))
    fixes = _fixes(function, src, tracer, names, context)
    msg = (head + "\n" + _context_line(tracer, names) + _where(src) + _ops_lines(ops)
           + "\n\nHow to fix it:\n" + "\n".join(fixes))
    err = cls(msg)
    err.source = src
    err.depends_on = names
    return err


def _fixes(function, src, tracer, names, context):
    code = (src.code if src else "").lstrip()
    fixes = []
    root = tracer._trace.root
    if function == "bool":
        if re.match(r"(while)\b", code):
            fixes.append("- loop on a traced condition with lax.while_loop(cond_fun, body_fun, "
                         "init_val), or lax.fori_loop(lower, upper, body_fun, init_val)")
        else:
            fixes.append("- choose between values with jnp.where(condition, x, y), or between "
                         "computations with lax.cond(pred, true_fun, false_fun, *operands)")
    elif function == "__index__":
        if "range(" in code:
            fixes.append("- loop a traced number of times with lax.fori_loop(lower, upper, "
                         "body_fun, init_val) instead of a Python for loop over range()")
        else:
            fixes.append("- index with a traced integer through jnp operations (x[i] on a "
                         "jitviz array, lax.dynamic_slice), not on a Python list")
    elif function == "__array__":
        fixes.append("- use jitviz.numpy (or plain NumPy functions called on the traced "
                     "value, which jitviz traces) instead of converting it to a NumPy array; "
                     "to look at values while running, use jitviz.debug.print")
    elif context:
        fixes.append("- shapes and sizes must be concrete: compute them from x.shape with "
                     "Python or NumPy (e.g. np.prod(x.shape)), not with jnp operations")
    if names:
        static = _static_fix(root, names)
        if static:
            fixes.append(static)
    else:
        fixes.append("- this value does not depend on any argument: compute it with NumPy or "
                     "Python on static values (e.g. np.prod(x.shape) instead of "
                     "jnp.array(x.shape).prod())")
    return fixes


def concrete_or_error(value, context: str):
    """`value` if it is concrete; else the ConcretizationTypeError naming `context`."""
    from .trace import Tracer
    if isinstance(value, Tracer):
        raise concretization_error(value, "concrete", context=context)
    return value


def boolean_index_error(mask_tracer):
    src = _offending_source()
    names, ops = dependencies(mask_tracer)
    msg = (f"Array boolean indices must be concrete; got "
           f"{error_repr(mask_tracer).replace('traced array with shape ', '')}\n"
           f"{_context_line(mask_tracer, names)}{_where(src)}"
           "\nThe size of x[mask] would depend on the values in the mask, and a traced "
           "program must have static shapes.\n\nHow to fix it:\n"
           "- keep the shape and replace the unwanted entries: jnp.where(mask, x, 0)\n"
           "- reduce instead of selecting: jnp.sum(jnp.where(mask, x, 0))\n"
           "- or select outside the jitted function")
    err = errors.NonConcreteBooleanIndexError(msg)
    err.source = src
    return err


def leaked_tracer_error(tracer):
    src = _offending_source()
    trace = tracer._trace
    root = trace.root
    made = trace.producer.get(getattr(tracer._var, "id", None))
    made_at = f" at line {made.source.line} ({made.source.code})" if made and made.source else ""
    leak = ""
    report = root.report
    if report is not None:
        for rec in report.tracer_leaks:
            if rec.tracer_repr == repr(tracer):
                leak = f" It was left in {rec.name}"
                if rec.source:
                    leak += f" at line {rec.source.line}"
                leak += "."
                break
    kind = error_repr(tracer).replace("traced array with shape ", "")
    msg = (f"Encountered an unexpected tracer. A function transformed by jitviz had a side "
           f"effect, allowing for a reference to an intermediate value with type {kind} "
           "wrapped in a DynamicJaxprTracer to escape the scope of the transformation.\n"
           f"The leaked value {tracer!r} was created while tracing the function "
           f"{root.fun_name} at {root.fun_location} for {root.purpose}{made_at}, and that "
           f"trace has ended.{leak}{_where(src)}\n"
           "How to fix it: return the value from the function instead of storing it in a "
           "global, a closed-over container or an attribute; to look at it while running, "
           "use jitviz.debug.print.")
    err = errors.UnexpectedTracerError(msg)
    err.source = src
    return err


def bad_value_error(x, what: str):
    kind = type(x).__name__
    hint = ""
    if isinstance(x, str):
        hint = " Strings cannot be traced: mark the argument static (static_argnums / " \
               "static_argnames) or encode it as numbers."
    elif callable(x):
        hint = " Functions cannot be traced: mark the argument static."
    elif getattr(x, "__jitviz_ref__", False):
        hint = " A Ref is not an array: read its value first, `x_ref[...]`."
    return TypeError(f"{what} has type {kind}, which is not a valid jitviz type: expected an "
                     f"array, a scalar, or a tuple/list/dict of them.{hint}")


def annotate_rule_error(e: Exception, prim, operands=()):
    """A shape/dtype rule's error with the user's line and, inside a trace, the arguments
    each operand comes from (`x['w'][0]`)."""
    return operand_error(e, operands, f"in {prim.name}, called at", _offending_source())


def operand_error(e: Exception, operands, doing: str = "at", src=None):
    """`e` (same type) naming the user's line and, for traced operands, the arguments their
    values come from -- the same names as the concretization errors use."""
    src = src or _offending_source()
    msg = str(e)
    if src is not None:
        msg += f"\n  ({doing} {src.file}:{src.line}: {src.code})"
    lines, names = _operand_origins(operands)
    new = type(e)(msg + lines)
    new.source = src
    new.depends_on = names
    return new.with_traceback(None)


def _operand_origins(operands):
    """('\n  operand 1 (f32[3]) comes from the argument x', [argument names])."""
    from .trace import Tracer
    lines, every = [], []
    for k, x in enumerate(operands):
        if not isinstance(x, Tracer) or not x._trace.alive:
            continue
        names, _ = dependencies(x)
        every += [n for n in names if n not in every]
        where = ("the argument " + names[0] if len(names) == 1 else
                 "the arguments " + ", ".join(names) if names else
                 "no argument (it is computed from constants)")
        lines.append(f"\n  operand {k + 1} ({x.aval.str_short()}) comes from {where}")
    return "".join(lines), every


def argument_error(exc_type, message: str, what: str):
    """An error about a value jitviz was given (`what`: "argument 'x'", "a constant"),
    with the user's line: for an argument, the call of the jitted function."""
    src = source_info_of_frame(user_frame(sys._getframe(2)))
    where = f"\n  (at {src.file}:{src.line}: {src.code})" if src is not None else ""
    err = exc_type(f"{what[:1].upper()}{what[1:]} {message}{where}")
    err.source = src
    return err


def masked_array_error(what: str):
    """JAX refuses NumPy masked arrays: the mask would be silently dropped."""
    return argument_error(
        ValueError, "is a NumPy masked array, which jitviz does not accept (as JAX does not): "
        "the mask would be silently dropped. Use arr.filled(fill_value) for a plain array "
        "(e.g. arr.filled(0) to sum the unmasked values), or pass arr.data and arr.mask as "
        "two arrays.", what)


def int_overflow_error(x: int, dtype, what: str):
    return argument_error(
        OverflowError, f"is the Python int {x}, too large for {np.dtype(dtype).name} (the "
        "default integer type; JAX raises too). Pass a NumPy array of a wider dtype "
        "(np.int64(x) with jitviz.config.update('enable_x64', True)), or a float.", what)


def no_traced_value(tracer) -> str:
    """Why a traced value has no `.val` (JAX's vmap tracers carry their batch there, as
    internals): under vmap jitviz traces the function once, on one example's type."""
    trace, under_vmap = tracer._trace, False
    while trace is not None and not under_vmap:
        under_vmap, trace = getattr(trace, "purpose", None) == "vmap", trace.parent
    aval = tracer.aval
    if under_vmap:
        return (f"a vmap tracer has no .val: jitviz's vmap traces the function once, "
                f"abstractly, on one example's type ({aval}), and batches the traced program "
                "afterwards, so no batch of values exists while it runs (.val is JAX's "
                "internals). To see the values, print them when the program runs: "
                "jax.debug.print(\"{}\", x)")
    return (f"a traced value ({aval}) has no .val: it stands for every array of its type "
            "while the function is traced. To see the values, print them when the program "
            "runs: jax.debug.print(\"{}\", x)")
