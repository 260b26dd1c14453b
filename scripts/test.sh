#!/usr/bin/env bash
# Install everything jitviz and its tests need, then run the whole test suite.
#
#   bash scripts/test.sh              # install (skips what is there) + pytest on every core
#   bash scripts/test.sh tests/test_notebooks.py -x   # arguments replace the default `tests/`
#   JITVIZ_TEST_WORKERS=1 bash scripts/test.sh       # one process (default: one per core)
#   JITVIZ_SKIP_INSTALL=1 bash scripts/test.sh   # run the tests only
#
# System packages: graphviz (the `dot` binary, for the IR explorer's SVG) and chromium (for the
# browser tests of the front end). Python: `pip install -e ".[test,lab,cuda,jax]"` into python3 (see
# scripts/lib.sh for where it goes). Exits non-zero when any test fails or none ran.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$JITVIZ_ROOT"

start=$(date +%s)
choose_python
if [ "${JITVIZ_SKIP_INSTALL:-0}" != 1 ]; then
    ensure_apt graphviz chromium fonts-dejavu-core
    pip_install_jitviz "test,lab,cuda,jax"
    ensure_kernel
fi
log "set-up took $(( $(date +%s) - start )) s"

# Notebooks and Numba must not wait for a display or a GPU.
export MPLBACKEND="${MPLBACKEND:-Agg}"
export PYDEVD_DISABLE_FILE_VALIDATION=1

[ $# -eq 0 ] && set -- tests/
# pytest-xdist: one worker per core, each test file on one worker (module fixtures such as the
# JupyterLab server of the browser tests start once)
workers="${JITVIZ_TEST_WORKERS:-auto}"
parallel=()
if [ "$workers" != 1 ] && "$PY" -c "import xdist" 2>/dev/null; then
    parallel=(-n "$workers" --dist loadfile)
fi
set +e
# in CI, the slowest tests are listed, so that a suite creeping towards CI's 30 minutes shows
# where the time went
durations=()
[ "${CI:-}" = true ] && durations=(--durations=20)
"$PY" -m pytest -q "${parallel[@]}" "${durations[@]}" "$@"
rc=$?
set -e
case $rc in
    0) log "all tests passed ($(( $(date +%s) - start )) s in all)" ;;
    5) log "pytest collected no tests: treating that as a failure"; rc=1 ;;
    *) log "pytest failed with exit code $rc" ;;
esac
exit $rc
