# Sourced by the scripts that run a spotter binary on loopback (smoke,
# conformance, benchmarks): one way to start it and wait for it.
#
#   spotter_start BIN DATA [serve flags…]  starts `BIN serve` on a free port with
#       DATA as its data dir (log in DATA/server.log); sets PORT and PID and
#       returns once /healthz answers. Exits 1 if the server exits first or
#       does not answer within 10 s.
#       With SPOTTER_CACERT set (a server started with --tls-cert), /healthz is asked over HTTPS
#       trusting that CA.
#   spotter_stop  sends SIGTERM to PID and waits for it (its status is not checked).
SPOTTER_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

spotter_start() {
    local bin=$1 data=$2
    shift 2
    PORT=$("$SPOTTER_SCRIPTS/free-port.sh")
    "$bin" serve --port "$PORT" --data-dir "$data" "$@" >>"$data/server.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 100); do
        if [ -n "${SPOTTER_CACERT:-}" ]; then
            curl -fsS --cacert "$SPOTTER_CACERT" "https://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && return 0
        else
            curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && return 0
        fi
        kill -0 "$PID" 2>/dev/null || { cat "$data/server.log" >&2; echo "$(basename "$0"): server exited early" >&2; exit 1; }
        sleep 0.1
    done
    echo "$(basename "$0"): server did not answer /healthz" >&2
    exit 1
}

spotter_stop() {
    [ -n "${PID:-}" ] || return 0
    kill -TERM "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=""
}
