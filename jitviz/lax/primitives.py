"""The array primitives, one namespace for all of them (`from jitviz.lax import primitives as
P; P.exp_p`), defined by theme in the modules next to this one:

    dtype_kinds.py   the dtype kinds a primitive accepts (FLOAT, NUMERIC, ...) and the error
                     for one it does not; NumPy kernels run without floating-point warnings
    elementwise.py   arithmetic, math functions, comparisons, bitwise operations,
                     convert_element_type, select_n, clamp (`unary`/`binary` make most)
    structural.py    broadcasts, reshapes, transposes, slices, concatenation, gathers,
                     scatters, iota
    reductions.py    reductions, arg-reductions, cumulative scans
    contractions.py  dot_general

Control flow (cond, while, scan, jit), sort, erf and stop_gradient have modules of their own.
A new primitive goes into the module of its theme; the helpers those modules share are
re-exported here too, for code that reaches them as `P._check_kind`.
"""
from __future__ import annotations

from .dtype_kinds import *  # noqa: F401,F403
from .dtype_kinds import _check_kind, _quiet  # noqa: F401
from .elementwise import *  # noqa: F401,F403
from .elementwise import _real_dtype, _saturating_float_to_int  # noqa: F401
from .structural import *  # noqa: F401,F403
from .structural import _pp_with  # noqa: F401
from .reductions import *  # noqa: F401,F403
from .reductions import (_arg_rule, _check_cumulative_axis, _cum_impl, _cum_rule,  # noqa: F401
                         _reduce_rule)
from .contractions import *  # noqa: F401,F403
