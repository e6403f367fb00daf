#!/usr/bin/env bash
# Starts the given spotter binary on a free port with a fresh data dir,
# checks /healthz and a restart's run counter, then sends SIGTERM and
# expects a clean exit 0 within the shutdown grace.
set -euo pipefail
BIN=${1:?usage: smoke.sh path/to/spotter}
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$(mktemp -d /tmp/spotter-smoke.XXXXXX)
PID=""
cleanup() {
    if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -9 "$PID" 2>/dev/null || true; fi
    rm -rf "$DATA"
}
trap cleanup EXIT

. "$HERE/spotter-server.sh"
start() { spotter_start "$BIN" "$DATA" --log-level info --shutdown-grace 3; }

stop() {
    kill -TERM "$PID"
    local status=0
    for _ in $(seq 1 100); do
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$PID" 2>/dev/null; then echo "smoke: still running 10 s after SIGTERM" >&2; exit 1; fi
    wait "$PID" || status=$?
    PID=""
    [ "$status" -eq 0 ] || { cat "$DATA/server.log"; echo "smoke: exit status $status after SIGTERM" >&2; exit 1; }
}

start
body=$(curl -fsS "http://127.0.0.1:$PORT/healthz")
echo "smoke: healthz $body"
echo "$body" | grep -q '"status":"ok"' || { echo "smoke: unexpected healthz body" >&2; exit 1; }
echo "$body" | grep -q '"run":1' || { echo "smoke: first start should be run 1" >&2; exit 1; }
curl -fsS "http://127.0.0.1:$PORT/metrics" | grep -q '^spotter_connections_accepted_total ' \
    || { echo "smoke: /metrics lacks spotter_connections_accepted_total" >&2; exit 1; }
stop
[ -f "$DATA/spotter.sqlite" ] || { echo "smoke: no database under the data dir" >&2; exit 1; }

# An operator creates an admin while the server is down; it can sign in after the restart.
SPOTTER_ADMIN_PASSWORD=adminpass1 "$BIN" admin create-admin --data-dir "$DATA" --email Admin@Example.com \
    --full-name "Operations Admin" --log-level warning | grep -q '^created admin ' \
    || { echo "smoke: create-admin failed" >&2; exit 1; }
if SPOTTER_ADMIN_PASSWORD=adminpass1 "$BIN" admin create-admin --data-dir "$DATA" --email admin@example.com \
    --full-name "Again" --log-level warning >/dev/null 2>&1; then
    echo "smoke: a second admin with the same email was accepted" >&2; exit 1
fi

# The database survives a restart: the run counter goes on.
start
curl -fsS "http://127.0.0.1:$PORT/healthz" | grep -q '"run":2' || { echo "smoke: restart did not see run 1" >&2; exit 1; }
curl -fsS -X POST "http://127.0.0.1:$PORT/v1/auth/signin" -d '{"email":"admin@example.com","password":"adminpass1"}' \
    | grep -q '"role":"admin"' || { echo "smoke: the admin cannot sign in" >&2; exit 1; }
stop
echo "smoke: passed (healthz, metrics, SIGTERM exit 0 twice, create-admin, data survives restart)"
