"""The IPython side: `%%jit`, `%jaxpr`, `%jitbench` as thin layers over the plain APIs
(`transform.jit_cell`, `jaxpr.jaxpr_view`, `jitviz.bench.jitbench`, `cell_monitor.CellMonitor`).

Loading the extension also shows jitviz's tracing errors compactly (the offending cell line
highlighted and jitviz's explanation; `%tb` still gives the full traceback): a custom
exception handler for jitviz's error classes only, chained to any handler already installed
and removed again by `%unload_ext jitviz`.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import re
import sys
import weakref

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from .. import bench
from ..backends import BACKEND_NAMES
from .cell_monitor import CellMonitor
from .errorview import ErrorView, jitviz_error_types
from .jaxpr import STAGES, jaxpr_view
from .transform import HELPER, CellOptions, JitDefs, cell_jit, end_run, new_run, parse_static

__all__ = ["JitvizMagics", "CellFailed", "load", "unload", "split_options", "eval_call"]


class CellFailed(Exception):
    """A `%%jit` cell raised; the error was already shown (`.error` is the original)."""

    def __init__(self, error: BaseException | None):
        self.error = error
        super().__init__(f"the %%jit cell raised {type(error).__name__} (shown above)")


# --- argument helpers ---------------------------------------------------------------------------

def _int_at_least(low: int, what: str):
    """An argparse `type` accepting integers >= low, with an error that names the bound."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"expected {what}, got {v}")
        return v
    return parse


_positive_int = _int_at_least(1, "a positive integer")
_nonnegative_int = _int_at_least(0, "an integer >= 0")


_TOKEN = re.compile(r"\s*(\S+)")


def split_options(parser, line: str, expand=None):
    """(parsed options, CALL text): options come first, the call is the rest of the line,
    verbatim (quotes, spaces and braces in it are left alone). `expand(token)` is applied to
    each option token (IPython's `$name` expansion, which the call must not get)."""
    actions = parser._option_string_actions  # argparse's table: option string -> action
    opts, pos = [], 0
    while True:
        m = _TOKEN.match(line, pos)
        if not m:
            break
        tok = m.group(1)
        if tok == "--":
            pos = m.end()
            break
        if not tok.startswith("-") or tok == "-":
            break
        opts.append(tok)
        pos = m.end()
        name = tok.split("=", 1)[0]
        action = actions.get(name)
        attached = "=" in tok
        if action is None and not tok.startswith("--") and len(tok) > 2:
            action, attached = actions.get(tok[:2]), True  # -n100
        if action is not None and action.nargs != 0 and not attached:
            m2 = _TOKEN.match(line, pos)
            if m2:
                opts.append(m2.group(1))
                pos = m2.end()
    if expand is not None:
        opts = [expand(t) for t in opts]
    return parser.parse_args(opts), line[pos:].strip()


def eval_call(text: str, namespace: dict):
    """Evaluate `f(a, *b, k=c)` in `namespace` without calling: (f, args, kwargs)."""
    if not text:
        raise UsageError("expected a function call, like f(x, 3)")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as err:
        raise UsageError(f"CALL must be a function call like f(x, 3): {err.msg} in {text!r}") \
            from None
    call = tree.body
    if not isinstance(call, ast.Call):
        raise UsageError(f"CALL must be a function call like f(x, 3), got {text!r}")
    func = ast.fix_missing_locations(ast.Expression(call.func))
    fn = eval(compile(func, "<jitviz-call>", "eval"), namespace)
    capture = ast.Expression(ast.Call(func=ast.Name("__jitviz_capture__", ast.Load()),
                                      args=call.args, keywords=call.keywords))
    ast.copy_location(capture.body, call)
    capture = ast.fix_missing_locations(capture)
    args, kwargs = eval(compile(capture, "<jitviz-call>", "eval"), namespace,
                        {"__jitviz_capture__": lambda *a, **k: (a, k)})
    return fn, args, kwargs


def _explorer(attr: str):
    """`jitviz.explorer.<attr>` (`explore` or `monitor`); tests swap this for a stand-in."""
    from .. import explorer
    return getattr(explorer, attr)


def in_kernel(shell) -> bool:
    """A Jupyter kernel (rich, live displays) rather than terminal IPython."""
    return getattr(shell, "kernel", None) is not None


# --- per-shell state ----------------------------------------------------------------------------

class _Defined:
    def __init__(self, fn, monitor, cell):
        self.fn = weakref.ref(fn)
        self.monitor = monitor
        self.cell = cell


class _State:
    def __init__(self, shell):
        self.shell = shell
        self.monitors: list[CellMonitor] = []
        self.defined: dict[str, _Defined] = {}  # %%jit function name -> where it came from
        self.prev_exc = None
        self.handler = None

    def flush(self, *_):
        alive = []
        for m in self.monitors:
            if not m.closed:
                m.flush()
                alive.append(m)
        self.monitors = alive


_states: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _state(shell) -> _State:
    st = _states.get(shell)
    if st is None:
        st = _states[shell] = _State(shell)
    return st


def show_annotations(functions: dict):
    """`%%jit -a`: the source-fate view of each function the cell called."""
    from ..annotate import annotate
    for name, jf in functions.items():
        if jf.specializations:
            display(annotate(jf))
        else:
            print(f"{name}: not called in this cell, so nothing was compiled to annotate; call "
                  f"it, then jitviz.annotate({name}) (or pass example arguments: "
                  f"jitviz.annotate({name}, *args))")


# --- the magics ---------------------------------------------------------------------------------

@magics_class
class JitvizMagics(Magics):
    """`%%jit`, `%jaxpr`, `%jitbench` (see `%jitbench?` etc.)."""

    @magic_arguments()
    @argument("--backend", choices=BACKEND_NAMES, default=None,
              help="jit backend (default: jit's default, cpu)")
    @argument("--static", default="", metavar="NAMES",
              help="comma-separated parameter names to make static in every function having them")
    @argument("--fastmath", action="store_true", help="jit(..., fastmath=True)")
    @argument("--parallel", action="store_const", const=True, default=None,
              help="jit(..., parallel=True): every kernel on every core (by default each "
                   "kernel's size decides)")
    @argument("-q", "--quiet", action="store_true", help="no monitor below the cell")
    @argument("-a", "--annotate", action="store_true",
              help="after the cell, show each function's source with every line's fate "
                   "(jitviz.annotate) for its latest specialization")
    @cell_magic
    def jit(self, line, cell):
        """Run the cell with every top-level `def` jitted, and show a live monitor of them.

        Existing decorators are kept (the jit goes outermost); later lines of the cell already
        call the jitted functions. The monitor shows each trace, compile (with time), cache hit
        and recompile (with its reason), and flags lost side effects and stale globals; it keeps
        updating as later cells call the functions. Errors point at the cell's own lines.
        """
        args = parse_argstring(self.jit, line)
        try:
            static = parse_static(args.static)
        except ValueError as err:
            raise UsageError(str(err)) from None
        shell = self.shell
        st = _state(shell)
        options = CellOptions(args.backend, static, args.fastmath, args.parallel)
        count = current_cell_number(shell)
        live = in_kernel(shell)
        explorer_monitor = _explorer("monitor") if live and not args.quiet else None
        monitor = CellMonitor(title=f"%%jit monitor — In [{count}]", live=live)
        replaced = []
        widget = {}  # "shown": the explorer's monitor widget, or None if it failed

        def show_widget():
            # the explorer's monitor takes its functions up front and shows the events from
            # then on: it is made once every def of the cell has run (before the calls after)
            if "shown" in widget or not run.functions:
                return
            try:
                w = explorer_monitor(*run.functions.values())
                display(w)
                widget["shown"] = w
            except Exception:  # noqa: BLE001 - the explorer is optional: fall back to ours
                widget["shown"] = None
                monitor.display()

        def on_function(name, jf):
            old = st.defined.get(name)
            if old is not None and old.fn() is not None and old.fn() is not jf:
                bench.forget_compiles(old.fn())
                old.monitor.close(f"{name} was redefined by the %%jit cell In [{count}]; "
                                  "this view stopped following it")
                info = old.fn().cache_info()
                replaced.append(f"replaced {name} (from In [{old.cell}], {info.entries} "
                                f"compiled version(s), {info.hits} cache hit(s)): the new "
                                f"{name} starts with an empty cache")
            st.defined[name] = _Defined(jf, monitor, count)
            monitor.add(jf, name)
            if not live or args.quiet:
                return
            if explorer_monitor is not None:
                if len(run.functions) + len(run.skipped) >= len(transformer.names):
                    show_widget()
            elif monitor.handle is None:
                monitor.display()
            else:
                monitor.update()

        run = new_run(options, on_function)
        transformer = JitDefs(run.id)
        shell.ast_transformers.append(transformer)
        shell.user_ns[HELPER] = cell_jit
        shell.user_ns_hidden[HELPER] = cell_jit
        try:
            header = f"# %%jit {line}".rstrip()
            with numbered_as(shell, count):
                result = shell.run_cell(header + "\n" + cell, store_history=False)
        finally:
            if transformer in shell.ast_transformers:
                shell.ast_transformers.remove(transformer)
            shell.user_ns.pop(HELPER, None)
            shell.user_ns_hidden.pop(HELPER, None)
            end_run(run)

        if result.error_before_exec is not None:  # a syntax error: nothing ran
            raise CellFailed(result.error_before_exec)
        monitor.notes.extend(replaced)
        for name, why in run.skipped.items():
            monitor.notes.append(f"{name} was not jitted: {why}")
        for name in transformer.async_names:
            monitor.notes.append(f"{name} was not jitted: an async function cannot be jitted")
        unused = [n for n in static if n not in run.static_used]
        if unused:
            monitor.notes.append("--static: no function of this cell has a parameter named "
                                 + ", ".join(repr(n) for n in unused))
        if not run.functions and not transformer.names:
            monitor.notes.append("this cell defines no top-level function: nothing was jitted")
        if result.error_in_exec is not None:
            monitor.notes.append(f"the cell raised {type(result.error_in_exec).__name__} "
                                 "(shown above)")
        if not args.quiet:
            if explorer_monitor is not None and run.functions:
                show_widget()
                if widget.get("shown") is not None:
                    for note in monitor.notes:
                        print(note)
            if live:
                if widget.get("shown") is None:
                    if monitor.handle is None:
                        monitor.display()
                    else:
                        monitor.update()
            else:
                display(monitor)
        st.monitors.append(monitor)
        if args.annotate:
            show_annotations(run.functions)
        if not result.success:
            raise CellFailed(result.error_in_exec)

    @no_var_expand
    @magic_arguments()
    @argument("--stage", choices=STAGES, default="traced",
              help="traced (default), optimized (after the passes) or kernels (generated code)")
    @argument("--text", action="store_true", help="plain jaxpr text, not the explorer widget")
    @argument("--static", default="", metavar="NAMES",
              help="comma-separated parameter names to treat as static")
    @argument("--backend", choices=BACKEND_NAMES, default=None,
              help="backend for --stage kernels (default: the function's, else cpu)")
    @line_magic
    def jaxpr(self, line):
        """%jaxpr [--stage traced|optimized|kernels] [--text] [--static NAMES] f(x, ...)

        Evaluates the callee and the arguments in the user namespace, traces (never runs
        compiled code) and shows the jaxpr — on plain and jitted functions alike.
        """
        opts, call = split_options(self.jaxpr.parser, line, self._expand)
        try:
            static = parse_static(opts.static)
        except ValueError as err:
            raise UsageError(str(err)) from None
        fn, args, kwargs = eval_call(call, self.shell.user_ns)
        if not callable(fn):
            raise UsageError(f"{call.split('(')[0]!r} is not callable")
        explore = _explorer("explore") if (not opts.text and in_kernel(self.shell)) else None
        if explore is not None:
            try:
                from .jaxpr import _jitted_for
                target = _jitted_for(fn, static, opts.backend)[0] if static else fn
                widget = explore(target, *args, **kwargs)
                if hasattr(widget, "stage"):
                    try:
                        widget.stage = opts.stage
                    except Exception:  # noqa: BLE001 - unknown stage name in the widget
                        pass
                display(widget)
                return None
            except jitviz_error_types():
                raise
            except Exception:  # noqa: BLE001 - the explorer is optional: fall back to text
                pass
        if opts.stage == "kernels":
            self._check_backend(opts.backend or getattr(fn, "backend", "cpu"))
        display(jaxpr_view(fn, *args, stage=opts.stage, static=static, backend=opts.backend,
                           kwargs=kwargs, title=call))
        return None

    @no_var_expand
    @magic_arguments()
    @argument("-n", type=_positive_int, default=None, metavar="N",
              help="calls per repeat (default: autorange, >= 0.2 s per repeat)")
    @argument("-r", type=_positive_int, default=7, metavar="R", help="repeats (default 7)")
    @argument("--warmup", type=_nonnegative_int, default=1, metavar="W",
              help="warm calls before timing (default 1)")
    @argument("--backend", default=None, metavar="B[,B2]",
              help="backend(s), comma-separated (default: the function's, else cpu)")
    @argument("--baseline", choices=("python", "none"), default="python",
              help="python: the original function run eagerly (default); none: skip")
    @argument("--cold", action="store_true",
              help="bypass the backend's kernel cache so the cold call really compiles")
    @argument("-o", action="store_true", help="return the BenchResult")
    @argument("-q", action="store_true", help="quiet: no report")
    @line_magic
    def jitbench(self, line):
        """%jitbench [-n N] [-r R] [--warmup W] [--backend B[,B2]] [--baseline python|none]
        [--cold] [-o] [-q] f(x, ...)

        Times the cold call on a fresh, isolated cache (trace / compile / first run), then warm
        calls only (autorange like %timeit, block_until_ready inside the timed region), and the
        original Python function as the baseline; reports speedup and the break-even call count.
        """
        opts, call = split_options(self.jitbench.parser, line, self._expand)
        fn, args, kwargs = eval_call(call, self.shell.user_ns)
        if not callable(fn):
            raise UsageError(f"{call.split('(')[0]!r} is not callable")
        try:
            backends = bench.backend_list(opts.backend, getattr(fn, "backend", None))
        except ValueError as err:
            raise UsageError(str(err)) from None
        result = bench.jitbench(fn, *args, kwargs=kwargs, n=opts.n, r=opts.r,
                                warmup=opts.warmup, backends=backends, baseline=opts.baseline,
                                cold=opts.cold, call=call)
        if not opts.q:
            display(result.report())
        return result if opts.o else None

    @magic_arguments()
    @argument("--live", action="store_true",
              help="keep the table below this cell up to date as functions compile")
    @argument("--stop", action="store_true", help="stop the live table")
    @line_magic
    def jitledger(self, line):
        """%jitledger [--live | --stop]

        Every jitted function of the session ranked by time spent tracing and compiling, with
        its compiles, cache hits, the reasons grouped (shape, dtype, weak type, static value,
        new function object, captured global, evictions), the call sites and a fix for each.
        Plain API: `jitviz.ledger()`.
        """
        from ..ledger import LiveLedger, ledger
        args = parse_argstring(self.jitledger, line)
        if args.stop:
            if LiveLedger._current is not None:
                LiveLedger._current.stop()
            return None
        if args.live:
            LiveLedger()
            return None
        display(ledger())
        return None

    # -- helpers ------------------------------------------------------------------------------
    def _expand(self, token: str) -> str:
        """`$name` / `{expr}` in an option (the call is passed on verbatim)."""
        if "$" not in token and "{" not in token:
            return token
        try:
            return self.shell.var_expand(token, depth=2)
        except Exception:  # noqa: BLE001 - leave it as typed
            return token

    @staticmethod
    def _check_backend(name: str) -> None:
        try:
            bench.check_backend_available(name)
        except ValueError as err:
            raise UsageError(str(err)) from None


# --- cell numbers -------------------------------------------------------------------------------

def current_cell_number(shell) -> int:
    """The N of the `In [N]` running now. IPython 9 counts a cell before running it (inside
    cell N, `execution_count` is already N + 1), IPython 8 after: the running cell's own code
    object, registered under its number by IPython's compiler, is right in both."""
    fmap = getattr(shell.compile, "_filename_map", {})
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename in fmap:
            return fmap[frame.f_code.co_filename]
        frame = frame.f_back
    return shell.execution_count


@contextlib.contextmanager
def numbered_as(shell, number: int):
    """Run a nested `run_cell` whose code IPython files under cell `number` (its functions,
    tracebacks and jitviz's messages then say `In [number]`, the cell the user ran)."""
    saved = shell.execution_count
    shell.execution_count = number
    try:
        yield
    finally:
        shell.execution_count = saved


# --- errors -------------------------------------------------------------------------------------

def _install_error_display(shell, st: _State) -> None:
    prev_types = tuple(getattr(shell, "custom_exceptions", ()) or ())
    prev_handler = getattr(shell, "CustomTB", None)
    st.prev_exc = (prev_types, prev_handler)
    ours = jitviz_error_types() + (CellFailed,)

    def handler(self, etype, value, tb, tb_offset=None):
        if isinstance(value, CellFailed):
            inner = value.error
            if inner is not None:
                sys.last_type, sys.last_value = type(inner), inner
                sys.last_traceback = inner.__traceback__
            return None
        if isinstance(value, ours):
            sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
            display(ErrorView(value, shell=self))
            return None
        if prev_types and prev_handler is not None and isinstance(value, prev_types):
            return prev_handler(etype, value, tb, tb_offset)
        self.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None

    shell.set_custom_exc(prev_types + ours, handler)
    st.handler = shell.CustomTB


def _remove_error_display(shell, st: _State) -> None:
    if st.prev_exc is None:
        return
    if getattr(shell, "CustomTB", None) is st.handler:  # still ours: put back what was there
        prev_types, prev_handler = st.prev_exc
        shell.custom_exceptions = prev_types
        if prev_handler is not None:
            shell.CustomTB = prev_handler
    st.prev_exc = st.handler = None


# --- load / unload ------------------------------------------------------------------------------

def load(shell) -> None:
    if shell in _states:
        return
    st = _state(shell)
    shell.register_magics(JitvizMagics)
    _install_error_display(shell, st)
    shell.events.register("post_execute", st.flush)


def unload(shell) -> None:
    st = _states.pop(shell, None)
    if st is None:
        return
    for kind, names in (("cell", ("jit",)), ("line", ("jaxpr", "jitbench", "jitledger"))):
        table = shell.magics_manager.magics.get(kind, {})
        for name in names:
            table.pop(name, None)
    _remove_error_display(shell, st)
    try:
        shell.events.unregister("post_execute", st.flush)
    except ValueError:
        pass
    from ..ledger import LiveLedger
    if LiveLedger._current is not None:
        LiveLedger._current.stop()
    for m in st.monitors:
        m.close("the jitviz extension was unloaded")
