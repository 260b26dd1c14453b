"""The IR explorer: a traced program as an interactive graph in Jupyter.

`explore(fun, *args, **kwargs)` returns an anywidget with the jaxpr as a graph (equations,
dataflow, constants from globals, ghost nodes for side effects that ran only while tracing,
clusters for sub-jaxprs and kernels), the optimizer's stages, the jit cache's
specializations and the event timeline. `monitor(*fns)` shows jit events as they happen.
The widget module (and anywidget) is imported on first use.
"""
from __future__ import annotations

from . import history
from .dot import render_svg, to_dot, view
from .graph import build_graph

# in a notebook, keep each cell's traces so that a re-run cell can be compared with its
# previous run (history.py; nothing happens outside IPython)
history.watch_cells()


def explore(fun, *args, **kwargs):
    """An `Explorer` widget for `fun` (plain or `jitviz.jit`-ed) traced at `args`."""
    from .widget import explore as _explore
    return _explore(fun, *args, **kwargs)


def monitor(*fns):
    """A live view of jit events (of `fns`, or of every jitted function)."""
    from .widget import monitor as _monitor
    return _monitor(*fns)


__all__ = ["explore", "monitor", "build_graph", "to_dot", "render_svg", "view"]
