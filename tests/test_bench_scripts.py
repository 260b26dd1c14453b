"""The benchmark scripts and the GPU check still run: each in a fresh process on tiny sizes
(the CUDA ones in Numba's simulator), checking what they print, not how fast anything is
(speed is measured by the scripts themselves, not asserted here)."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from helpers import ROOT, child_env


def run_script(args, **env):
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, env=child_env(**env),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return proc.stdout


def rows(out, names):
    """The table rows of `names` (one per function and dtype)."""
    return [line.split() for line in out.splitlines() if line.split()[:1] in ([n] for n in names)]


def test_bench_math_rows_agree_with_numpy():
    names = ["exp", "pow", "pow_y2.5"]
    out = run_script(["benchmarks/bench_math.py", "--quick", "--only", ",".join(names),
                      "--dtype", "float32", "--clock", "thread"])
    found = rows(out, names)
    assert [r[0] for r in found] == names
    assert all(r[-1] == "yes" for r in found), out  # within 4 ulp of NumPy's float64


def test_bench_reductions_of_functions_agree_with_numpy():
    """bench_reductions.py's second table: each of its six rows (FUNCTIONS) has jitviz's
    result within its tolerance of NumPy's float64."""
    out = run_script(["benchmarks/bench_reductions.py", "--quick", "--functions-only",
                      "--shape", "40x300"])
    found = [line for line in out.splitlines() if "40x300 f32" in line]
    assert len(found) == 6, out
    assert all(line.split()[-1] == "yes" for line in found), out


def test_bench_cuda_math_runs_in_the_simulator():
    pytest.importorskip("numba.cuda")
    names = ["exp", "logistic", "arctan2"]
    out = run_script(["benchmarks/bench_cuda_math.py", "--smoke", "--only", ",".join(names)],
                     NUMBA_ENABLE_CUDASIM="1")
    found = rows(out, names)
    assert [(r[0], r[1]) for r in found] == [(n, d) for n in names
                                             for d in ("float32", "float64")]
    assert all(float(r[-1]) <= 4 for r in found), out  # the ulp column


def test_bench_cuda_runs_in_the_simulator():
    pytest.importorskip("numba.cuda")
    out = run_script(["benchmarks/bench_cuda.py", "--smoke"], NUMBA_ENABLE_CUDASIM="1")
    for workload in ("x*x + x*2.0", "selu", "norm", "softmax over rows", "layernorm over rows",
                     "forward pass", "fori_loop"):
        assert workload in out, out
    only = run_script(["benchmarks/bench_cuda.py", "--smoke", "--only", "selu,fori"],
                      NUMBA_ENABLE_CUDASIM="1")
    lines = only.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("---"))
    rows = [line.split()[0] for line in lines[start + 1:] if not line.startswith("(vs")]
    assert rows == ["selu", "fori_loop"] and "norm" not in only, only


def test_bench_cuda_dispatch_runs_in_the_simulator():
    pytest.importorskip("numba.cuda")
    out = run_script(["benchmarks/bench_cuda_dispatch.py", "--smoke", "--profile"],
                     NUMBA_ENABLE_CUDASIM="1")
    for row in ("synchronize alone", "hand-written kernel", "by its launcher",
                "f(x): the jitted call", "norm(X)", "cProfile of 20 calls"):
        assert row in out, out


def test_gpu_check_leaves_out_the_steps_set_to_zero(tmp_path):
    """`STEP_<name>=0` leaves that step out (a lent GPU's minutes go to the steps asked for):
    with every step at 0 the script runs none of them and says so for each."""
    steps = ("STEP_TESTS", "STEP_MATH_TESTS", "STEP_BENCH", "STEP_MATH", "STEP_DISPATCH")
    # run from a bare folder: a checkout's .whl/ (wheels for the GPU machine) is not for here
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "gpu_check.sh").write_text(
        (ROOT / "scripts" / "gpu_check.sh").read_text())
    out = tmp_path / "out"
    env = dict(child_env(), OUT=str(out), PYTHON=sys.executable, **dict.fromkeys(steps, "0"))
    proc = subprocess.run(["bash", "scripts/gpu_check.sh"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.stdout.count(": left out") == len(steps), proc.stdout + proc.stderr
    assert "passed" not in proc.stdout  # no pytest ran


def test_gpu_check_names_tests_that_exist():
    """scripts/gpu_check.sh runs and deselects tests by name: a rename must not turn its
    deselection into a failure on the next lent GPU, or its file list into an error."""
    script = (ROOT / "scripts" / "gpu_check.sh").read_text()
    files = set(re.findall(r"\btests/(test_\w+\.py)\b", script))
    assert files >= {"test_cuda_backend.py", "test_cuda_ptx.py", "test_vecmath.py"}
    for name in files:
        assert (ROOT / "tests" / name).exists(), name
    deselected = re.findall(r"--deselect tests/(test_\w+\.py)::(\w+)", script)
    assert deselected
    for file, test in deselected:
        assert re.search(rf"^def {test}\(", (ROOT / "tests" / file).read_text(), re.M), test
    assert subprocess.run(["bash", "-n", str(ROOT / "scripts" / "gpu_check.sh")]).returncode == 0


def test_an_unknown_function_name_is_refused_with_the_list():
    proc = subprocess.run([sys.executable, "benchmarks/bench_math.py", "--only", "exp,tnah"],
                          cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "--only: no function tnah; the functions are exp, log, tanh" in proc.stderr
