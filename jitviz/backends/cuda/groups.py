"""Open kernels: a kernel the planner keeps open while later values join it.

A `Group` is registered in the planner under the shapes of the values that can join it
(`keys`); a materialized value of such a shape is rendered into it (`join`) unless that
conflicts, and the kernel is closed (`Planner.flush`) when something else needs what it
computes or when the program ends. The reduction template's `Segment` is a group too.
"""
from __future__ import annotations

from .render import Renderer, size


class Group:
    """An open kernel that more values of its shape can join: an elementwise grid-stride
    loop, or the end of a reduction kernel (its epilogue, at the reduction's output index)."""

    store_guard = None  # a condition the stores of joined values run under
    store_ind = None  # the indent the stores are written at (None: where rendering ended)

    def __init__(self, planner, shape, kind="elementwise", r=None, idx=None, flat="i",
                 head=None, grid=None, block=None, tail=(), n=None):
        self.shape = tuple(shape)
        self.keys = (self.shape,)
        self.kind = kind
        self.n = size(self.shape) if n is None else n
        if r is None:
            r = Renderer(planner, print_guard="i == 0")
            r.ind = 2
            idx = r.decompose("i", self.shape)
            head = ["for i in range(cuda.grid(1), %d, cuda.gridsize(1)):" % self.n]
            grid, block = planner.grid1(self.n), planner.block1(self.n)
        self.r = r
        self.idx = tuple(idx)
        self.flat = flat
        self.head = head
        self.grid, self.block = grid, block
        self.tail = list(tail)  # (indent, line) after the stores
        # (var, local): stored at `flat` when the kernel closes; local None: already stored
        self.outputs: list = []

    def join(self, planner, v):
        """Render the materialized value `v` here, at the group's index (raises Conflict
        where it cannot be)."""
        r = self.r
        name = r.render_eqn(planner.producer[v], v, self.idx)
        r.remember((v, self.idx), name)
        r.members.add(v)
        self.outputs.append((v, name))
