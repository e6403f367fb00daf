#!/usr/bin/env bash
# Profiles one fresh server under the chat scenario (issue 33): perf record -g on the server for part of the
# window, each server thread's CPU, the loop's stall counters from /metrics (servers that have them), and the
# generator's figures. Bounded in time; 127.0.0.1 only; stops only what it started (by PID).
#
#   LoadTests/run-profile.sh RATE [DURATION] [OUT_DIR]
#   SPOTTER_BIN=/tmp/tail-baseline/spotter LoadTests/run-profile.sh 10000 20 /tmp/prof-base-10k
#
# Settings: PAIRS [5000], PERF [1] (0: no perf, just the figures), PERF_SECONDS [8] (recorded from 4 s into the
# window; metrics-window.txt: the loop's stall counters over the measured window), SCRATCH [.build] for spotter-load (LOAD_BIN: another one). Writes to OUT_DIR: chat.json / chat.md (spotter-load), threads.txt
# (per-thread CPU over the run), metrics.txt (/metrics at the end), perf.data and perf-children.txt /
# perf-self.txt (perf report, loop thread and all threads).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RATE=${1:?rate}
DURATION=${2:-20}
OUT=${3:-/tmp/spotter-profile-$RATE}
PAIRS=${PAIRS:-5000}
PERF=${PERF:-1}
PERF_SECONDS=${PERF_SECONDS:-8}
SCRATCH=${SCRATCH:-.build}
SERVER=${SPOTTER_BIN:-$ROOT/$SCRATCH/release/spotter}
LOAD=${LOAD_BIN:-$ROOT/$SCRATCH/release/spotter-load}
mkdir -p "$OUT"
DATA=$(mktemp -d /tmp/spotter-profile.XXXXXX)
PASSWORD="profile-$RANDOM$RANDOM"
PORT=$((20000 + RANDOM % 30000))
for _ in $(seq 1 50); do  # a port nothing listens on (a run once died of EADDRINUSE)
    [ -n "$(ss -Htln "sport = :$PORT" 2>/dev/null)" ] || break
    PORT=$((20000 + RANDOM % 30000))
done
SERVER_PID=""
PERF_PID=""
cleanup() {
    if [ -n "$PERF_PID" ]; then kill -INT "$PERF_PID" 2>/dev/null || true; wait "$PERF_PID" 2>/dev/null || true; fi
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$DATA"
}
trap cleanup EXIT
SPOTTER_ADMIN_PASSWORD="$PASSWORD" "$SERVER" admin create-admin --data-dir "$DATA" --email admin@load.test --full-name Load >/dev/null
"$SERVER" serve --port "$PORT" --data-dir "$DATA" --log-level warning --idle-timeout 120 --load-test-provisioning \
    >"$OUT/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
echo "== server $SERVER_PID on $PORT; load $(cat /proc/loadavg)"
SPOTTER_LOAD_ADMIN_PASSWORD="$PASSWORD" timeout $((DURATION + 120)) "$LOAD" chat --port "$PORT" --server-pid "$SERVER_PID" \
    --admin-email admin@load.test --pairs "$PAIRS" --rate "$RATE" --duration "$DURATION" --warmup 3 \
    --json "$OUT/chat.json" --markdown "$OUT/chat.md" --max-run-seconds $((DURATION + 90)) >"$OUT/chat.out" 2>"$OUT/chat.progress" &
GEN=$!
# The window starts after the connects and the warm-up: wait for the generator to say it sends.
for _ in $(seq 1 600); do grep -q "warm-up\|sending\|window" "$OUT/chat.progress" 2>/dev/null && break; sleep 0.1; done
# /metrics at the start of the measured window (after the warm-up) and at its end: the loop's stall counters of
# the window alone (metrics-window.txt; the connects and provisioning before it have long iterations of their own).
WINDOW_START=$(date +%s.%N)
sleep 3
# The disk's floor on the data's file system during the window (FLOOR_BIN: LoadTests/run-floor.sh's program,
# FLOOR_BUILD_ONLY=PATH LoadTests/run-floor.sh builds it): one 4 KiB append + fdatasync every 20 ms.
FLOOR_PID=""
if [ -n "${FLOOR_BIN:-}" ]; then "$FLOOR_BIN" -s -n 100000 -i 20 -t "$DURATION" -d "$DATA" >"$OUT/floor.txt" 2>/dev/null & FLOOR_PID=$!; fi
curl -s "http://127.0.0.1:$PORT/metrics" >"$OUT/metrics-start.txt" || true
sleep 1
if [ "$PERF" = 1 ]; then
    perf record -g -F 499 -p "$SERVER_PID" -o "$OUT/perf.data" -- sleep "$PERF_SECONDS" >/dev/null 2>"$OUT/perf.log" || true
fi
# 1 s before the window ends: right after it the generator closes its 10,000 sockets, a burst of its own.
left=$(echo "$WINDOW_START + 3 + $DURATION - 1 - $(date +%s.%N)" | bc)
if [ "$(echo "$left > 0" | bc)" = 1 ]; then sleep "$left"; fi
curl -s "http://127.0.0.1:$PORT/metrics" >"$OUT/metrics-end.txt" || true
python3 - "$OUT/metrics-start.txt" "$OUT/metrics-end.txt" >"$OUT/metrics-window.txt" <<'PY' || true
import sys
def read(path):
    values = {}
    for line in open(path):
        if line.startswith("spotter_loop_"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values
start, end = read(sys.argv[1]), read(sys.argv[2])
for name in sorted(end):
    if "longest" in name: print(f"{name} {end[name]} (longest in the window)")
    else: print(f"{name} {end[name] - start.get(name, 0):.0f} (in the window)")
PY
wait "$GEN" || echo "!! spotter-load exit status $?" >&2
for task in /proc/"$SERVER_PID"/task/*; do
    awk -v tid="${task##*/}" '{ sub(/^[^)]*\) /, ""); print tid, $12 + $13, "ticks" }' "$task/stat" 2>/dev/null \
        | paste - <(cat "$task/comm" 2>/dev/null)
done | sort -k2 -nr >"$OUT/threads.txt"
curl -s "http://127.0.0.1:$PORT/metrics" >"$OUT/metrics.txt" || true
if [ "$PERF" = 1 ] && [ -s "$OUT/perf.data" ]; then
    perf report -i "$OUT/perf.data" --children --no-demangle --stdio --percent-limit 1.5 2>/dev/null \
        | swift demangle --simplified | grep -v '^$' | head -400 >"$OUT/perf-children.txt" || true
    perf report -i "$OUT/perf.data" --no-children --stdio -g none --percent-limit 0.4 2>/dev/null \
        | swift demangle --simplified | grep -v '^$' | head -120 >"$OUT/perf-self.txt" || true
fi
cat "$OUT/chat.out"
cat "$OUT/metrics-window.txt" 2>/dev/null || true
if [ -n "$FLOOR_PID" ]; then wait "$FLOOR_PID" 2>/dev/null || true; fi
cat "$OUT/floor.txt" 2>/dev/null || true
echo "== results in $OUT"
