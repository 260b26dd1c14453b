"""Every CPU module text (kernels, regions, drivers) rendered for the test tables: the refactor
must keep them byte-identical. Kernels are not compiled (a fake cache records the texts)."""
import sys, json, warnings, hashlib, types
warnings.simplefilter("ignore")
sys.path.insert(0, "tests")
import jitviz
from jitviz.passes import optimize
from jitviz.backends import get_backend
from test_cuda_backend import DIFF_CASES, PROGRAMS, case_jaxpr
from test_primitives import _case_id

TEXTS = []

class FakeCache:
    def key(self, text): return hashlib.sha1(text.encode()).hexdigest()
    def module(self, text):
        TEXTS.append(text)
        class M:
            def __getattr__(self, n): return lambda *a, **k: None
        return M()
    def compile(self, text, disp, sig): return False
    def path(self, key): return ""

cpu = get_backend("cpu")
backend = type(cpu)(cache=FakeCache())
res = {}
jaxprs = [(n, jitviz.make_jaxpr(fn)(*mk())) for n, (fn, mk) in PROGRAMS.items()]
jaxprs += [(_case_id(c), case_jaxpr(c)) for c in DIFF_CASES]
for label, closed in jaxprs:
    for stage, j in (("opt", optimize(closed)),):
        for par in (False, True, None):
            key = f"{label}|{stage}|{par}"
            TEXTS.clear()
            try:
                ex = backend.compile(j, parallel=par)
                res[key] = {"modules": list(TEXTS), "driver": ex.driver_source,
                            "kernels": [k.source if hasattr(k, "source") else str(k) for k in ex.kernels]}
            except Exception as e:
                res[key] = {"error": f"{type(e).__name__}: {e}", "modules": list(TEXTS)}
json.dump(res, open(sys.argv[1], "w"), indent=0, sort_keys=True, default=str)
print(len(res), sum(len(v.get("modules", [])) for v in res.values()), sum("error" in v for v in res.values()))
