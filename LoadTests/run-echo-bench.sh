#!/usr/bin/env bash
# Builds release, starts `spotter serve --echo` on a free loopback port, runs
# spotter-echo-bench against it with the server's PID, writes the JSON to
# LoadTests/results/<UTC date>/echo.json, and stops the server (by its PID).
# Exits non-zero if the build fails, the server does not come up, or the
# bench reports any error.
#
# Settings come from the environment (defaults in brackets):
#   CONNECTIONS [1000]  DURATION [10]  WARMUP [2]  MESSAGE_BYTES [100]
#   IN_FLIGHT [1]  IDLE_SECONDS [3]  SOURCE_ADDRESSES [1]
# Anything after the script's name is passed on to the bench, e.g.
#   LoadTests/run-echo-bench.sh --max-pending-connects 100
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)

CONNECTIONS=${CONNECTIONS:-1000}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
MESSAGE_BYTES=${MESSAGE_BYTES:-100}
IN_FLIGHT=${IN_FLIGHT:-1}
IDLE_SECONDS=${IDLE_SECONDS:-3}
SOURCE_ADDRESSES=${SOURCE_ADDRESSES:-1}

echo "== building release"
set +e
swift build -c release 2>&1 | tail -3
build_status=${PIPESTATUS[0]}
set -e
if [ "$build_status" -ne 0 ]; then
    echo "build failed" >&2
    exit "$build_status"
fi
SERVER="$ROOT/.build/release/spotter"
BENCH="$ROOT/.build/release/spotter-echo-bench"

# A port nothing listens on: ask ss when it exists, else try to connect.
port_is_free() {
    if command -v ss >/dev/null 2>&1; then
        [ -z "$(ss -Htln "sport = :$1" 2>/dev/null)" ]
    else
        ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
    fi
}
PORT=""
for _ in $(seq 1 50); do
    candidate=$((20000 + RANDOM % 30000))
    if port_is_free "$candidate"; then PORT=$candidate; break; fi
done
[ -n "$PORT" ] || { echo "no free port found" >&2; exit 1; }

DATA_DIR=$(mktemp -d /tmp/spotter-echo-bench.XXXXXX)
SERVER_LOG="$DATA_DIR/server.log"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$DATA_DIR"
}
trap cleanup EXIT

echo "== starting server on 127.0.0.1:$PORT"
"$SERVER" serve --port "$PORT" --data-dir "$DATA_DIR" --echo --log-level warning >"$SERVER_LOG" 2>&1 &
SERVER_PID=$!

# Wait (at most 10 s) until the server answers /healthz.
ready=""
for _ in $(seq 1 100); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT" && printf 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3 \
        && head -c 12 <&3 | grep -q '200') 2>/dev/null; then
        ready=yes
        break
    fi
    sleep 0.1
done
if [ -z "$ready" ]; then
    echo "server did not come up; its log:" >&2
    cat "$SERVER_LOG" >&2
    exit 1
fi

OUT_DIR="$ROOT/LoadTests/results/$(date -u +%Y-%m-%d)"
mkdir -p "$OUT_DIR"
JSON="$OUT_DIR/echo.json"

echo "== load before the run: $(cat /proc/loadavg)"
# Every run is bounded: warm-up + window + idle + generous room for connects and closes.
LIMIT=$(awk -v d="$DURATION" -v w="$WARMUP" -v i="$IDLE_SECONDS" 'BEGIN { printf "%d", d + w + i + 180 }')
set +e
timeout "$LIMIT" "$BENCH" --port "$PORT" --server-pid "$SERVER_PID" \
    --connections "$CONNECTIONS" --duration "$DURATION" --warmup "$WARMUP" \
    --message-bytes "$MESSAGE_BYTES" --in-flight "$IN_FLIGHT" --idle-seconds "$IDLE_SECONDS" \
    --source-addresses "$SOURCE_ADDRESSES" --json "$JSON" "$@"
bench_status=$?
set -e

if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "the server exited during the run; its log:" >&2
    cat "$SERVER_LOG" >&2
    bench_status=1
fi
if [ "$bench_status" -ne 0 ]; then
    echo "bench reported errors (exit status $bench_status)" >&2
else
    echo "== results in $JSON"
fi
exit "$bench_status"
