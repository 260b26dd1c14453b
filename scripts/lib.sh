# Shared set-up steps for scripts/tour.sh and scripts/test.sh. Source it; don't run it.
#
# Where things go: jitviz installs into the Python that runs these scripts (`python3`, or
# whatever $PYTHON names, e.g. a virtualenv's python). On a machine whose python3 is the
# system's "externally managed" Python (Debian's /usr/bin/python3 with PEP 668), a virtualenv
# is made at $JITVIZ_VENV (default ~/.venvs/jitviz) and used instead.
#
# Environment knobs:
#   PYTHON=...                 interpreter to install into and run with (default python3)
#   JITVIZ_VENV=...            where the fallback virtualenv goes
#   JITVIZ_SKIP_INSTALL=1      skip every install step (apt, pip, kernelspec): just run
#   JITVIZ_SKIP_APT=1          skip only the system-package step

set -euo pipefail

JITVIZ_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export DEBIAN_FRONTEND=noninteractive
export PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_INPUT=1

log() { printf '[jitviz] %s\n' "$*" >&2; }
die() { printf '[jitviz] error: %s\n' "$*" >&2; exit 1; }

_as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo "$@"
    else return 1
    fi
}

# ensure_apt PKG...: install the Debian packages that are missing. Does nothing (and needs
# no network) when all of them are installed already.
ensure_apt() {
    [ "${JITVIZ_SKIP_APT:-0}" = 1 ] && { log "JITVIZ_SKIP_APT=1: not checking $*"; return 0; }
    local missing=() p
    for p in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$p")
        fi
    done
    if [ ${#missing[@]} -eq 0 ]; then
        log "system packages present: $*"
        return 0
    fi
    command -v apt-get >/dev/null 2>&1 || die "missing system packages (${missing[*]}) and no apt-get; install them by hand"
    log "installing system packages: ${missing[*]}"
    _as_root apt-get update -qq || log "apt-get update failed (no network?); trying the install anyway"
    _as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" \
        || die "could not install ${missing[*]} with apt-get (root needed; network needed)"
}

# choose_python: sets $PY to the interpreter everything installs into and runs with.
choose_python() {
    PY="${PYTHON:-python3}"
    command -v "$PY" >/dev/null 2>&1 || die "no '$PY' on PATH (Python >= 3.10 needed)"
    "$PY" - <<'EOF' || die "Python >= 3.10 is needed"
import sys
sys.exit(0 if sys.version_info >= (3, 10) else 1)
EOF
    local managed
    managed="$("$PY" - <<'EOF'
import os, sys, sysconfig
in_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
marker = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
print("1" if (os.path.exists(marker) and not in_venv) else "0")
EOF
)"
    if [ "$managed" = 1 ]; then
        local venv="${JITVIZ_VENV:-$HOME/.venvs/jitviz}"
        if [ ! -x "$venv/bin/python" ]; then
            log "$PY is externally managed (PEP 668): creating a virtualenv at $venv"
            "$PY" -m venv "$venv" 2>/dev/null || { ensure_apt python3-venv; "$PY" -m venv "$venv"; }
        fi
        PY="$venv/bin/python"
    fi
    log "using $("$PY" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
    export PY
}

# pip_install_jitviz EXTRAS: editable install of the repo with the given extras ("test,lab").
pip_install_jitviz() {
    local spec="$JITVIZ_ROOT"
    [ -n "${1:-}" ] && spec="$JITVIZ_ROOT[$1]"
    log "pip install -e \"$spec\""
    # a jitviz.egg-info left in the checkout by an earlier build shadows the installed
    # metadata for anything run from here (importlib.metadata looks in the cwd first)
    rm -rf "$JITVIZ_ROOT/jitviz.egg-info"
    if ! "$PY" -m pip install -q -e "$spec"; then
        # Offline, with every dependency already there, only the isolated build environment
        # (setuptools from the index) is missing: build with the installed setuptools.
        log "pip install failed; retrying without build isolation (offline machine?)"
        "$PY" -m pip install -q --no-build-isolation -e "$spec" \
            || die "pip install -e \"$spec\" failed"
    fi
}

# ensure_kernel: a `python3` Jupyter kernelspec that runs this interpreter (nbclient and
# JupyterLab start notebooks with it).
ensure_kernel() {
    "$PY" -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (jitviz)" >/dev/null \
        || die "could not install the ipykernel kernelspec"
    log "kernelspec python3 -> $("$PY" -c 'import sys; print(sys.executable)')"
}
