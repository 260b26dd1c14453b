#!/usr/bin/env bash
# Install jitviz with JupyterLab and open the tour notebook.
#
#   bash scripts/tour.sh                 # http://127.0.0.1:8888/... (next free port if taken)
#   PORT=9000 bash scripts/tour.sh
#   IP=0.0.0.0 bash scripts/tour.sh      # listen on every interface (remote machines)
#   bash scripts/tour.sh --ServerApp.some_option=...   # extra arguments go to `jupyter lab`
#
# The server runs in the foreground: Ctrl-C stops it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$JITVIZ_ROOT"

choose_python
if [ "${JITVIZ_SKIP_INSTALL:-0}" != 1 ]; then
    ensure_apt graphviz
    pip_install_jitviz "lab"
    ensure_kernel
fi

IP="${IP:-127.0.0.1}"
NOTEBOOK="demo_notebooks/00_tour.ipynb"
[ -f "$NOTEBOOK" ] || die "$NOTEBOOK is missing"
PORT="$("$PY" - "${PORT:-8888}" "$IP" <<'EOF'
import socket, sys
port, ip = int(sys.argv[1]), sys.argv[2]
for p in range(port, port + 50):
    with socket.socket() as s:
        try:
            s.bind((ip, p))
        except OSError:
            continue
        print(p)
        break
else:
    sys.exit("no free port in %d..%d" % (port, port + 49))
EOF
)"
TOKEN="${JITVIZ_TOKEN:-$("$PY" -c 'import secrets; print(secrets.token_hex(24))')}"
HOST="$IP"; [ "$IP" = 0.0.0.0 ] && HOST="$(hostname -f 2>/dev/null || echo localhost)"
URL="http://$HOST:$PORT/lab/tree/$NOTEBOOK?token=$TOKEN"

cat >&2 <<EOF

  jitviz tour: JupyterLab is starting on $NOTEBOOK
  Open this URL in a browser:

      $URL

  (Ctrl-C stops the server.)

EOF

exec "$PY" -m jupyter lab "$NOTEBOOK" \
    --ip="$IP" --port="$PORT" --ServerApp.port_retries=0 --no-browser --allow-root \
    --IdentityProvider.token="$TOKEN" --ServerApp.root_dir="$JITVIZ_ROOT" "$@"
