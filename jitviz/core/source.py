"""Find the user's line: the first frame outside jitviz (and NumPy, and the stdlib)."""
from __future__ import annotations

import linecache
import os
import sys
import sysconfig

import numpy as np

from .ir import SourceInfo

_JITVIZ_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__)) + os.sep
_STDLIB_DIR = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep
_SITE_DIRS = tuple(os.path.abspath(p) + os.sep for p in
                   {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
_INTERNAL = (_JITVIZ_DIR, _NUMPY_DIR)
_WITH_STDLIB = (_JITVIZ_DIR, _NUMPY_DIR, _STDLIB_DIR)
_cache: dict = {}


# jitviz.examples holds the tutorials' programs: user code that happens to ship with jitviz
_USER_CODE_IN_PACKAGE = (_JITVIZ_DIR + "examples.py",)


def is_internal_file(filename: str, skip_stdlib: bool = False) -> bool:
    prefixes = _WITH_STDLIB if skip_stdlib else _INTERNAL
    if filename in _USER_CODE_IN_PACKAGE:
        return False
    if filename.startswith(prefixes):
        # the stdlib dir contains site-packages: user-installed libraries are "user code"
        return not (skip_stdlib and filename.startswith(_SITE_DIRS)
                    and not filename.startswith(_INTERNAL))
    return filename.startswith("<frozen")


def user_frame(frame=None, skip_stdlib: bool = False):
    f = frame if frame is not None else sys._getframe(1)
    while f is not None and is_internal_file(f.f_code.co_filename, skip_stdlib):
        f = f.f_back
    return f


def user_and_entry_frames(frame):
    """(the innermost user frame, the jitviz frame it called: where its call entered)."""
    entry = None
    while frame is not None and is_internal_file(frame.f_code.co_filename):
        entry, frame = frame, frame.f_back
    return frame, entry


def source_info_of_frame(frame) -> SourceInfo | None:
    if frame is None:
        return None
    code = frame.f_code
    key = (code.co_filename, frame.f_lineno, code.co_name, frame.f_lasti)
    info = _cache.get(key)
    if info is None:
        text = linecache.getline(code.co_filename, frame.f_lineno).strip()
        info = _cache[key] = SourceInfo(code.co_filename, frame.f_lineno, code.co_name, text,
                                        _column(code, frame.f_lasti),
                                        getattr(code, "co_qualname", code.co_name))
        if len(_cache) > 100_000:
            _cache.clear()
    return info


_positions: dict = {}  # code object -> its instructions' (line, end, column, end column)


def _column(code, lasti):
    """The column the frame's current instruction starts at (its call's first character),
    or None where Python does not say."""
    if not hasattr(code, "co_positions") or lasti < 0:  # Python 3.11+
        return None
    positions = _positions.get(code)
    if positions is None:
        if len(_positions) > 1000:
            _positions.clear()
        positions = _positions[code] = list(code.co_positions())
    index = lasti // 2  # one position per 2-byte code unit
    return positions[index][2] if index < len(positions) else None


def user_source_info() -> SourceInfo | None:
    return source_info_of_frame(user_frame(sys._getframe(1)))


def function_location(fun) -> str:
    code = getattr(getattr(fun, "__wrapped__", fun), "__code__", None)
    if code is None:
        return "<unknown>"
    return f"{code.co_filename}:{code.co_firstlineno}"


def function_name(fun) -> str:
    f = getattr(fun, "__wrapped__", fun)
    return getattr(f, "__name__", None) or getattr(type(f), "__name__", "fun")


def notebook_cell_of(filename: str, shell=None) -> int | None:
    """The `In [N]` whose code IPython compiled under `filename` (its
    `/tmp/ipykernel_NNN/NNN.py` names), or None outside IPython or for any other file."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover - IPython is a dependency
            return None
        shell = get_ipython()
    fmap = getattr(getattr(shell, "compile", None), "_filename_map", None) or {}
    return fmap.get(filename)


def argument_positions(fun, argnums, argnames, option: str) -> set:
    """The positions `argnums` (an int or ints) and `argnames` (a name or names, looked up in
    `fun`'s signature) select, for options such as `static_argnames` or `nondiff_argnames`;
    a name `fun` does not have is a ValueError naming the option and `fun`'s parameters."""
    import inspect
    nums = {argnums} if isinstance(argnums, int) else set(argnums)
    names = (argnames,) if isinstance(argnames, str) else tuple(argnames)
    if names:
        params = list(inspect.signature(fun).parameters)
        for name in names:
            if name not in params:
                raise ValueError(f"{option}: {function_name(fun)} has no parameter {name!r} "
                                 f"(its parameters: {', '.join(params)})")
            nums.add(params.index(name))
    return nums
