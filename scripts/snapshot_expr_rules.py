"""The text of every elementwise primitive's expression rule on both Numba targets ("cpu.expr"
after the renderer's cast, "cuda.expr"), for every dtype and param set its shape/dtype rule
accepts: a refactor of the rules (numba_expr.py, cpu/rules.py, cuda/rules.py) must keep it
byte-identical, also for the combinations the test tables do not compile.

    python scripts/snapshot_expr_rules.py /tmp/snap/rules_before.json
"""
import json
import os
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT]  # this checkout's jitviz, not an installed one
import jitviz  # noqa: E402,F401
import jitviz.random  # noqa: E402,F401  (threefry2x32 brings its rules)
from jitviz.backends import get_backend  # noqa: E402
from jitviz.core.ir import ShapedArray  # noqa: E402
from jitviz.core.registry import PRIMITIVES  # noqa: E402

get_backend("cpu")
from jitviz.backends.cpu.rules import cast_text, expr_rule  # noqa: E402
from jitviz.backends.cuda.rules import elementwise_expr  # noqa: E402

DTYPES = [np.dtype(d) for d in ("bool", "int8", "int32", "int64", "uint8", "uint32", "float16",
                                "float32", "float64", "complex64", "complex128")]
PARAM_SETS = [{}, {"y": 3}, {"y": -2}, {"y": 0}, {"rounding_method": 0},
              {"rounding_method": 1}, {"word": 0}, {"word": 1}]
PARAM_SETS += [{"new_dtype": d, "weak_type": False} for d in DTYPES]


def accepted(prim):
    """(operand dtypes, params, result dtype) of every combination `prim` accepts: all operands
    of one dtype (select_n's selector: bool or int32), one to four operands."""
    for n in range(1, 5):
        for dt in DTYPES:
            for first in ([dt] if n < 2 else [dt, np.dtype(bool), np.dtype(np.int32)]):
                ins = [first] + [dt] * (n - 1)
                for params in PARAM_SETS:
                    try:
                        out = prim.abstract_eval(*[ShapedArray((), d) for d in ins], **params)
                    except Exception:
                        continue
                    yield ins, params, out.dtype


def texts(prim):
    found = {}
    for ins, params, out in accepted(prim):
        args = [f"x{i}" for i in range(len(ins))]
        key = f"{prim.name}({', '.join(d.name for d in ins)}) {sorted(params.items())}"
        rule = expr_rule(prim)
        found["cpu|" + key] = None if rule is None else cast_text(out, rule(args, ins, out, params))
        try:
            found["cuda|" + key] = elementwise_expr(prim, args, ins, out, params)
        except Exception as e:  # select_n: read by the CUDA renderer, no expression rule
            found["cuda|" + key] = f"{type(e).__name__}"
    return found


res = {}
for name, prim in sorted(PRIMITIVES.items()):
    if prim.kind == "elementwise":
        res.update(texts(prim))
json.dump(res, open(sys.argv[1], "w"), indent=0, sort_keys=True, default=str)
print(len(res), "rule texts")
