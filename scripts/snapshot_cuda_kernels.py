"""Every CUDA kernel source (and program step structure) planned for the test tables, on the
simulator's tiny target and the hardware target: the refactor must keep them byte-identical."""
import sys, json, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, "tests")
import jitviz
from jitviz.passes import optimize
from jitviz.backends.cuda.plan import plan_program, Target, SIMULATOR_TARGET
from test_cuda_backend import DIFF_CASES, PROGRAMS, case_jaxpr
from test_primitives import _case_id

def steps(prog):
    out = []
    for s in prog.steps:
        out.append(type(s).__name__ + (":" + s.kernel.name if hasattr(s, "kernel") else ""))
        for attr in ("branches",):
            for b in getattr(s, attr, ()) or ():
                out.append(steps(b))
        for attr in ("cond", "body"):
            sub = getattr(s, attr, None)
            if sub is not None and hasattr(sub, "steps"):
                out.append(steps(sub))
    return out

res = {}
jaxprs = [(n, jitviz.make_jaxpr(fn)(*mk())) for n, (fn, mk) in PROGRAMS.items()]
jaxprs += [(_case_id(c), case_jaxpr(c)) for c in DIFF_CASES]
for tname, target in (("sim", SIMULATOR_TARGET), ("hw", Target())):
    for label, closed in jaxprs:
        for stage, j in (("traced", closed), ("opt", optimize(closed))):
            key = f"{tname}|{label}|{stage}"
            try:
                prog = plan_program(j, target)
                res[key] = {"kernels": [(k.name, k.source, k.grid, k.block, k.kind) for k in prog.kernels()],
                            "steps": steps(prog)}
            except Exception as e:
                res[key] = {"error": f"{type(e).__name__}: {e}"}
json.dump(res, open(sys.argv[1], "w"), indent=0, sort_keys=True, default=str)
print(len(res), sum(len(v.get("kernels", [])) for v in res.values()))
