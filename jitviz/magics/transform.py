"""The `%%jit` cell transform: every top-level `def` gets jitted, as if decorated by hand.

    @existing_decorator
    def f(x, n): ...

becomes

    @__jitviz_cell_jit__(<run id>)
    @existing_decorator
    def f(x, n): ...

so the name is bound to the jitted function right away and later lines of the same cell
already call it. The decorator is outermost: it jits whatever the existing decorators made.
Line numbers are untouched (the new decorator takes the `def`'s location). No IPython here:
`jit_cell(source, namespace)` runs a cell in any dict; the magic runs it through the shell.
"""
from __future__ import annotations

import ast
import inspect
import itertools
import linecache
import threading
import types
from dataclasses import dataclass, field

HELPER = "__jitviz_cell_jit__"

__all__ = ["CellOptions", "CellRun", "JitDefs", "jit_cell", "parse_static", "HELPER"]


@dataclass(frozen=True)
class CellOptions:
    backend: str | None = None  # None: jit's default (or the existing jit's backend)
    static: tuple = ()  # parameter names made static in every function that has them
    fastmath: bool = False
    parallel: bool | None = None  # None: jit's default (threads chosen per kernel by size)


def parse_static(text: str | None) -> tuple:
    """`"n, k"` -> `("n", "k")`, checking that each is a Python identifier."""
    if not text:
        return ()
    names = tuple(dict.fromkeys(p.strip() for p in text.split(",") if p.strip()))
    for n in names:
        if not n.isidentifier():
            raise ValueError(f"--static expects comma-separated parameter names, got {n!r}")
    return names


@dataclass
class CellRun:
    """One execution of a `%%jit` cell: what it jitted, what it left alone and why."""
    options: CellOptions
    id: int = 0
    functions: dict = field(default_factory=dict)  # name -> JitFunction, in definition order
    skipped: dict = field(default_factory=dict)  # name -> reason it was not jitted
    static_used: set = field(default_factory=set)
    on_function: object = None  # callback(name, jitted) as each def runs

    def decorate(self, name: str):
        def decorator(obj):
            jitted, why = jit_for_cell(obj, self.options, self.static_used)
            if jitted is None:
                self.skipped[name] = why
                return obj
            self.functions[name] = jitted
            if self.on_function is not None:
                self.on_function(name, jitted)
            return jitted
        return decorator

    @property
    def static_unused(self) -> tuple:
        return tuple(n for n in self.options.static if n not in self.static_used)


_runs: dict[int, CellRun] = {}
_runs_lock = threading.Lock()
_ids = itertools.count(1)


def new_run(options: CellOptions, on_function=None) -> CellRun:
    run = CellRun(options, id=next(_ids), on_function=on_function)
    with _runs_lock:
        _runs[run.id] = run
    return run


def end_run(run: CellRun) -> None:
    with _runs_lock:
        _runs.pop(run.id, None)


def cell_jit(run_id: int, name: str):
    """The decorator the transform inserts (bound to `HELPER` in the cell's namespace)."""
    run = _runs.get(run_id)
    if run is None:  # the def ran after its cell finished (e.g. a copy of the code): no-op
        return lambda obj: obj
    return run.decorate(name)


def jit_for_cell(obj, options: CellOptions, static_used: set | None = None):
    """(jitted, None) or (None, why not) for what a top-level `def` (and its decorators) made."""
    from ..jit import JitFunction, jit
    if isinstance(obj, JitFunction):
        spec = getattr(obj, "_spec", None)
        nums = tuple(spec.static_argnums) if spec else ()
        names = tuple(spec.static_argnames) if spec else ()
        fun = obj.__wrapped__
        backend = options.backend or obj.backend
        fastmath = obj.fastmath or options.fastmath
        parallel = obj.parallel if options.parallel is None else options.parallel
    elif isinstance(obj, types.FunctionType):
        if inspect.isgeneratorfunction(obj) or inspect.iscoroutinefunction(obj):
            return None, "a generator or coroutine function cannot be jitted"
        fun, nums, names = obj, (), ()
        backend, fastmath, parallel = options.backend, options.fastmath, options.parallel
    else:
        return None, (f"its decorators made a {type(obj).__name__}, not a function: left as "
                      "it is")
    extra = _static_names_of(fun, options.static)
    if static_used is not None:
        static_used.update(extra)
    names = tuple(dict.fromkeys(names + extra))
    kw = {"static_argnums": nums, "static_argnames": names, "fastmath": fastmath,
          "parallel": parallel}
    if backend is not None:
        kw["backend"] = backend
    return jit(fun, **kw), None


def _static_names_of(fun, wanted) -> tuple:
    if not wanted:
        return ()
    try:
        params = inspect.signature(fun).parameters
    except (TypeError, ValueError):
        return ()
    ok = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
          inspect.Parameter.KEYWORD_ONLY)
    return tuple(n for n in wanted if n in params and params[n].kind in ok)


class JitDefs(ast.NodeTransformer):
    """Adds `@HELPER(run_id, name)` as the outermost decorator of each top-level `def`."""

    def __init__(self, run_id: int):
        self.run_id = run_id
        self.names: list[str] = []
        self.async_names: list[str] = []

    def visit_Module(self, node: ast.Module):
        for stmt in node.body:
            if isinstance(stmt, ast.FunctionDef):
                call = ast.Call(func=ast.Name(HELPER, ast.Load()),
                                args=[ast.Constant(self.run_id), ast.Constant(stmt.name)],
                                keywords=[])
                target = stmt.decorator_list[0] if stmt.decorator_list else stmt
                for n in ast.walk(call):
                    ast.copy_location(n, target)
                    n.end_lineno, n.end_col_offset = target.lineno, target.col_offset
                stmt.decorator_list.insert(0, call)
                self.names.append(stmt.name)
            elif isinstance(stmt, ast.AsyncFunctionDef):
                self.async_names.append(stmt.name)
        return node


def register_source(source: str, filename: str) -> None:
    """Make `source` visible to linecache (tracebacks, jitviz's error lines) as `filename`."""
    linecache.cache[filename] = (len(source), None,
                                 [line + "\n" for line in source.splitlines()], filename)


def jit_cell(source: str, namespace: dict, *, backend: str | None = None, static=(),
             fastmath: bool = False, parallel: bool | None = None,
             filename: str | None = None,
             on_function=None) -> CellRun:
    """Run `source` in `namespace` with every top-level `def` jitted (what `%%jit` does,
    without IPython). Returns the `CellRun`: `.functions` (name -> jitted), `.skipped`."""
    if isinstance(static, str):
        static = parse_static(static)
    options = CellOptions(backend, tuple(static), fastmath, parallel)
    run = new_run(options, on_function)
    filename = filename or f"<jitviz-cell-{run.id}>"
    register_source(source, filename)
    tree = ast.parse(source, filename=filename)
    transformer = JitDefs(run.id)
    tree = transformer.visit(tree)
    for name in transformer.async_names:
        run.skipped[name] = "an async function cannot be jitted"
    code = compile(tree, filename, "exec")
    had_helper = HELPER in namespace
    old = namespace.get(HELPER)
    namespace[HELPER] = cell_jit
    try:
        exec(code, namespace)
    finally:
        if had_helper:
            namespace[HELPER] = old
        else:
            namespace.pop(HELPER, None)
        end_run(run)
    return run
