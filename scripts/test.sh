#!/usr/bin/env bash
# Install everything jitviz and its tests need, then run the whole test suite.
#
#   bash scripts/test.sh              # install (skips what is there) + python -m pytest -q tests/
#   bash scripts/test.sh tests/test_notebooks.py -x   # arguments replace the default `tests/`
#   JITVIZ_SKIP_INSTALL=1 bash scripts/test.sh   # run the tests only
#
# System packages: graphviz (the `dot` binary, for the IR explorer's SVG) and chromium (for the
# browser tests of the front end). Python: `pip install -e ".[test,lab]"` into python3 (see
# scripts/lib.sh for where it goes). Exits non-zero when any test fails or none ran.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$JITVIZ_ROOT"

start=$(date +%s)
choose_python
if [ "${JITVIZ_SKIP_INSTALL:-0}" != 1 ]; then
    ensure_apt graphviz chromium fonts-dejavu-core
    pip_install_jitviz "test,lab,cuda"
    ensure_kernel
fi
log "set-up took $(( $(date +%s) - start )) s"

# Notebooks and Numba must not wait for a display or a GPU.
export MPLBACKEND="${MPLBACKEND:-Agg}"
export PYDEVD_DISABLE_FILE_VALIDATION=1

[ $# -eq 0 ] && set -- tests/
set +e
"$PY" -m pytest -q "$@"
rc=$?
set -e
case $rc in
    0) log "all tests passed ($(( $(date +%s) - start )) s in all)" ;;
    5) log "pytest collected no tests: treating that as a failure"; rc=1 ;;
    *) log "pytest failed with exit code $rc" ;;
esac
exit $rc
