"""Every pass's output (each stage's printed jaxpr and a digest of its constants) for the test
tables and the tutorials' examples, with and without fastmath: a refactor of the passes must
keep it byte-identical.

    python scripts/snapshot_passes.py /tmp/snap/passes_before.json
"""
import hashlib
import json
import os
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]  # this checkout's jitviz, not an installed one
import jitviz  # noqa: E402
from jitviz import examples, lax  # noqa: E402
from jitviz import numpy as jnp  # noqa: E402
from jitviz.passes import run_pipeline  # noqa: E402
from test_cuda_backend import DIFF_CASES, PROGRAMS, case_jaxpr  # noqa: E402
from test_primitives import _case_id  # noqa: E402

f32 = np.float32
x5 = np.linspace(-1, 1, 5, dtype=f32)


@jitviz.jit
def _inner(x):
    return jnp.sin(x) * 2.0


EXTRA = {  # what the test tables do not stress: calls to inline, algebra, duplicates, dead code
    "seed_slow_f": (examples.slow_f, (x5,)),
    "seed_selu": (examples.selu, (x5,)),
    "seed_norm": (examples.norm, (np.ones((4, 3), f32),)),
    "seed_sum_up_to": (examples.sum_up_to, (np.int32(10),)),
    "seed_myabs": (examples.myabs, (f32(-2),)),
    "nested_jit": (lambda x: _inner(x) + _inner(x + 1.0), (x5,)),
    "nested_jit_in_loop": (lambda x: lax.fori_loop(0, 3, lambda i, y: _inner(y), x), (x5,)),
    "cancel": (lambda x, y: x + y - x, (x5, x5)),
    "cancel_mul": (lambda x, y: (x * y) / x * 3.0 * 2.0, (x5, x5)),
    "cse_dce": (lambda x: (jnp.exp(x) + jnp.exp(x), jnp.cos(x))[0], (x5,)),
    "fold_consts": (lambda x: x + np.arange(5, dtype=f32) * 2.0 + jnp.sum(np.ones(3, f32)), (x5,)),
    "known_cond": (lambda x: lax.cond(True, lambda v: v + 1.0, lambda v: v - 1.0, x), (x5,)),
    "print": (lambda x: (jitviz.debug.print("x {}", x), x * 2.0)[1], (x5,)),
}


def digest(consts):
    h = hashlib.sha1()
    for c in consts:
        a = np.asarray(c)
        h.update(f"{a.dtype.str}{a.shape}".encode() + a.tobytes())
    return h.hexdigest()[:12]


def snapshot(closed):
    out = {}
    for fastmath in (False, True):
        try:
            stages = run_pipeline(closed, fastmath=fastmath)
        except Exception as e:
            out[f"fastmath={fastmath}"] = f"{type(e).__name__}: {e}"
            continue
        out[f"fastmath={fastmath}"] = [(s[0], str(s[1]), digest(s[1].consts)) for s in stages]
    return out


jaxprs = [(n, jitviz.make_jaxpr(fn)(*mk())) for n, (fn, mk) in PROGRAMS.items()]
jaxprs += [(_case_id(c), case_jaxpr(c)) for c in DIFF_CASES]
jaxprs += [(n, jitviz.make_jaxpr(fn)(*args)) for n, (fn, args) in EXTRA.items()]
res = {label: snapshot(closed) for label, closed in jaxprs}
res["jitviz"] = jitviz.__file__
json.dump(res, open(sys.argv[1], "w"), indent=0, sort_keys=True)
print(len(res), "programs")
