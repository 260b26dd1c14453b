"""`jitviz.debug.breakpoint`: stop a program where it was called and inspect its values.

At trace time the breakpoint records the caller's stack (each frame's file, line and local
variables). The locals that are traced values become the operands of a debug callback, so the
program stops at *run time*, on every call, in program order with `debug.print`, and inside a
`cond` branch only when that branch runs; under `vmap` it stops once per example. The debugger
then shows each frame with its traced values replaced by their concrete runtime values.

The debugger is JAX's `jdb`: a `cmd.Cmd` prompt with `p`, `pp`, `l(ist)`, `u(p)`, `d(own)`,
`w(here)`, `c(ontinue)`, `q(uit)` and `help`; any other line is evaluated in the frame. With no
input left (EOF: a closed or non-interactive stdin) it continues rather than waiting.
"""
from __future__ import annotations

import cmd
import inspect
import linecache
import os
import pprint
import sys
import threading
import traceback
from dataclasses import dataclass, field, replace
from typing import Any

_JITVIZ_DIR = os.path.dirname(os.path.abspath(__file__))
_lock = threading.Lock()  # one prompt at a time (callbacks may run on several threads)


@dataclass
class Frame:
    """One frame of the stack the breakpoint was called from; `locals` hold runtime values
    once the debugger runs."""
    filename: str
    lineno: int
    function: str
    locals: dict
    globals: dict = field(repr=False)
    first: int = 1  # the lines of the frame's function (its module's, at the top level)
    last: int = 0

    def line(self, lineno=None) -> str:
        return linecache.getline(self.filename, lineno or self.lineno).rstrip("\n")


class Jdb(cmd.Cmd):
    """The text debugger (JAX's `jdb`). `frames[0]` is the breakpoint's caller."""

    prompt = "(jdb) "
    intro = "Entering jdb:"

    def __init__(self, frames, stdin=None, stdout=None):
        super().__init__(stdin=stdin, stdout=stdout)
        self.use_rawinput = stdin is None  # input() works in Jupyter; a given stream is read
        self.frames = frames
        self.index = 0

    def _say(self, text):
        print(text, file=self.stdout)

    @property
    def frame(self) -> Frame:
        return self.frames[self.index]

    def evaluate(self, expr):
        return eval(expr, dict(self.frame.globals), dict(self.frame.locals))

    def _show(self, expr, fmt):
        try:
            self._say(fmt(self.evaluate(expr)))
        except Exception:  # a mistyped expression is reported, as pdb does
            self._say("*** " + traceback.format_exception_only(*sys.exc_info()[:2])[-1].strip())

    def default(self, line):
        """Evaluate an expression in the current frame and print its repr."""
        self._show(line, repr)

    def emptyline(self):
        return False  # pdb repeats the last command; jdb does nothing

    def do_p(self, arg):
        """p expression
        Evaluate the expression in the current frame and print its value."""
        self._show(arg, repr)

    def do_pp(self, arg):
        """pp expression
        Evaluate the expression in the current frame and pretty-print its value."""
        self._show(arg, pprint.pformat)

    def print_context(self, num_lines=2):
        """The current line, `num_lines` + 1 lines before it and `num_lines` after (JAX's
        window), within the frame's function."""
        f = self.frame
        lines = [f"> {f.filename}({f.lineno})"]
        # the line after the function shows as empty, as in JAX (its source ends in "\n")
        for n in range(max(f.first, f.lineno - num_lines - 1),
                       min(f.last + 1, f.lineno + num_lines) + 1):
            text = f.line(n) if n <= f.last else ""
            lines.append(("->  " if n == f.lineno else "    ") + text)
        self._say("\n".join(lines))

    def do_list(self, arg):
        """l(ist)
        List the source around the current line of the current frame."""
        self.print_context(num_lines=5)
    do_l = do_list

    def do_up(self, arg):
        """u(p)
        Move to the frame that called the current one."""
        if self.index == len(self.frames) - 1:
            self._say("At topmost frame.")
        else:
            self.index += 1
        self.print_context()
    do_u = do_up

    def do_down(self, arg):
        """d(own)
        Move to the frame the current one called."""
        if self.index == 0:
            self._say("At bottommost frame.")
        else:
            self.index -= 1
        self.print_context()
    do_d = do_down

    def do_where(self, arg):
        """w(here)
        Print the stack, the most recent frame last ('bt' is an alias)."""
        out = ["Traceback:"]
        for f in reversed(self.frames):
            out += [f'  File "{f.filename}", line {f.lineno}',
                    "    " + (f.line().strip() or "<no source>")]
        self._say("\n".join(out))
    do_w = do_bt = do_where

    def do_continue(self, arg):
        """c(ont(inue))
        Leave the debugger and continue the program."""
        return True
    do_c = do_cont = do_continue

    def do_quit(self, arg):
        """q(uit) / exit
        Leave the debugger and stop the program (SystemExit, as JAX's jdb)."""
        raise SystemExit(0)
    do_q = do_exit = do_quit

    def do_EOF(self, arg):  # noqa: N802 - cmd's name for the end of input
        """The end of the input: continue rather than wait for a line that cannot come."""
        self._say("no more input (EOF): continuing")
        return True


DEBUGGERS = {"cli": Jdb}


def _stack_frames(start, filter_frames, num_frames):
    """The caller's frames from `start` outwards (jitviz's own frames left out when
    `filter_frames`), cut to `num_frames`."""
    frames, f = [], start
    while f is not None:
        inside_jitviz = os.path.abspath(f.f_code.co_filename).startswith(_JITVIZ_DIR + os.sep)
        if not (filter_frames and inside_jitviz):
            frames.append(Frame(f.f_code.co_filename, f.f_lineno, f.f_code.co_name,
                                dict(f.f_locals), f.f_globals, *_source_span(f)))
        f = f.f_back
    return frames if num_frames is None else frames[:num_frames]


def _source_span(frame):
    """The first and last line of the frame's function (the whole file for module code);
    no lines where the source cannot be found (code run by exec)."""
    try:
        lines, start = inspect.getsourcelines(frame)
    except (OSError, TypeError):
        return frame.f_lineno, frame.f_lineno if linecache.getline(
            frame.f_code.co_filename, frame.f_lineno) else frame.f_lineno - 1
    start = max(start, 1)
    return start, start + len(lines) - 1


def _is_live_tracer(x):
    """A traced value of the trace under way (or one enclosing it): it can be an operand."""
    from .core.trace import Tracer, current_trace
    if not isinstance(x, Tracer):
        return False
    trace, owner = current_trace(), x._trace
    return trace is not None and owner.alive and (owner is trace or trace.is_enclosed_by(owner))


def _split_locals(frames):
    """Each frame's locals flattened; the live traced leaves become operands. Returns the
    operands and a function that rebuilds the frames from their runtime values."""
    from .tree import tree_flatten, tree_unflatten
    operands, rebuilders = [], []
    for frame in frames:
        for name, value in frame.locals.items():
            try:
                leaves, treedef = tree_flatten(value)
            except Exception:  # an object that does not flatten is shown as it is
                continue
            slots = [i for i, leaf in enumerate(leaves) if _is_live_tracer(leaf)]
            if slots:
                rebuilders.append((frame, name, leaves, treedef, slots, len(operands)))
                operands += [leaves[i] for i in slots]

    def rebuild(values):
        out = [replace(f, locals=dict(f.locals)) for f in frames]
        by_id = {id(f): o for f, o in zip(frames, out)}
        for frame, name, leaves, treedef, slots, first in rebuilders:
            filled = list(leaves)
            for k, i in enumerate(slots):
                filled[i] = _runtime_value(values[first + k], leaves[i])
            by_id[id(frame)].locals[name] = tree_unflatten(treedef, filled)
        return out
    return operands, rebuild


def _runtime_value(value, tracer):
    """A callback's NumPy value as a jitviz Array of the traced value's dtype."""
    import numpy as np
    from .array import as_array
    return as_array(np.asarray(value, dtype=tracer.dtype))  # strong, as JAX's callbacks get


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False, token=None,
               **kwargs: Any) -> None:
    """`jax.debug.breakpoint()`: stop here when the program runs and open the debugger on
    this frame, its traced values shown as their runtime values.

    backend: the debugger ('cli', the text prompt; None picks it). filter_frames: leave
    jitviz's own frames out of the stack. num_frames: how many frames (from this one out)
    can be inspected. ordered: run in order with other ordered effects (debug.print).
    Other keywords go to the debugger: `stdin=`, `stdout=` (streams; a test drives the
    prompt with `io.StringIO`)."""
    if backend not in (None, *DEBUGGERS):
        raise ValueError(f"breakpoint: unknown backend={backend!r}; jitviz's debugger is "
                         f"{sorted(DEBUGGERS)} (the text prompt): pass backend=None or 'cli'")
    if token is not None:
        raise NotImplementedError("breakpoint(token=...) is not supported by jitviz: use "
                                  "ordered=True to order the breakpoint with debug.print")
    if num_frames is not None and (not isinstance(num_frames, int) or num_frames < 1):
        raise ValueError(f"breakpoint: num_frames must be a positive int or None, got "
                         f"{num_frames!r}")
    debugger = DEBUGGERS[backend or "cli"]
    frames = _stack_frames(sys._getframe(1), filter_frames, num_frames)
    operands, rebuild = _split_locals(frames)

    def stop(*values):
        with _lock:
            debugger(rebuild(values), **kwargs).cmdloop()

    from .core.trace import current_trace
    if current_trace() is None:  # eager: every value is already concrete
        stop()
        return None
    from .callbacks import debug_callback
    debug_callback(stop, *operands, ordered=ordered)
    return None
