#!/usr/bin/env bash
# The standard load suite: builds release, and for each scenario starts a
# fresh `spotter serve` (new data dir under /tmp, an admin created with
# `spotter admin create-admin`), runs `spotter-load <scenario>` against it
# with the server's PID, and stops that server (by its PID only).
# Writes LoadTests/results/<UTC date>/<scenario>.json, <scenario>.md and
# summary.md. Exit status non-zero if the build fails, a server does not
# come up or dies, or a scenario counted an error.
#
# Settings (environment, defaults in brackets):
#   LOAD_SCENARIOS [chat,idle,fanin,reconnect,ceiling,sessions,quota]
#   PAIRS [5000]        chat/reconnect/ceiling pairs (2 sockets each)
#   RATE [10000]        chat msgs/s           RECONNECT_RATE [500]  reconnect msgs/s
#   DURATION [60]       chat window (s)      IDLE_SOCKETS [10000]  IDLE_HOLD [60]
#   FANIN_DURATION [15] FANIN_RATE [200]     FANIN_COACH_COMMANDS [8] (per coach per s)
#   RECONNECT_TAIL [5]  JITTER [2]  (reconnect: traffic after recovery; reconnect delay spread)
#   CEILING_START [500] CEILING_FACTOR [1.5] CEILING_MAX [60000] CEILING_DURATION [5]
#   QUOTA_PAIRS [5000] QUOTA_RATE [5000] QUOTA_DURATION [30] (quota: Freemium clients past their 20 messages; server with --tiers)
#   SESSIONS_COACHES [1000] SESSIONS_CLIENTS [10] (per coach) SESSIONS_RATE [1000] (actions/s) SESSIONS_DURATION [60]
#   SCRATCH [.build]    swift build --scratch-path
#   SKIP_BUILD [0]      1: use the binaries already built
#   SPOTTER_BIN         the server binary to run [$SCRATCH/release/spotter]
#   LOAD_STORE [sqlite] postgres: each server keeps everything in a fresh database of a throwaway
#                       PostgreSQL cluster started for the run (LoadTests/pg-throwaway.sh), fsync on
# Chat and idle run the issue's 60 s; fan-in (15 s) and the ceiling steps
# (5 s) are shorter so the whole suite fits in 5 minutes (see the README).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)

LOAD_SCENARIOS=${LOAD_SCENARIOS:-chat,idle,fanin,reconnect,ceiling,sessions,quota}
PAIRS=${PAIRS:-5000}
RATE=${RATE:-10000}
DURATION=${DURATION:-60}
IDLE_SOCKETS=${IDLE_SOCKETS:-10000}
IDLE_HOLD=${IDLE_HOLD:-60}
FANIN_DURATION=${FANIN_DURATION:-15}
FANIN_RATE=${FANIN_RATE:-200}
FANIN_COACH_COMMANDS=${FANIN_COACH_COMMANDS:-8}
RECONNECT_TAIL=${RECONNECT_TAIL:-5}
# The storm measures recovery, so its traffic stays below the server's ceiling (see the ceiling scenario).
RECONNECT_RATE=${RECONNECT_RATE:-500}
JITTER=${JITTER:-2}
CEILING_START=${CEILING_START:-500}
CEILING_FACTOR=${CEILING_FACTOR:-1.5}
CEILING_MAX=${CEILING_MAX:-60000}
CEILING_DURATION=${CEILING_DURATION:-5}
SESSIONS_COACHES=${SESSIONS_COACHES:-1000}
QUOTA_PAIRS=${QUOTA_PAIRS:-5000}
QUOTA_RATE=${QUOTA_RATE:-5000}
QUOTA_DURATION=${QUOTA_DURATION:-30}
SESSIONS_CLIENTS=${SESSIONS_CLIENTS:-10}
SESSIONS_RATE=${SESSIONS_RATE:-1000}
SESSIONS_DURATION=${SESSIONS_DURATION:-60}
SCRATCH=${SCRATCH:-.build}
SKIP_BUILD=${SKIP_BUILD:-0}

if [ "$SKIP_BUILD" != 1 ]; then
    echo "== building release (scratch path $SCRATCH)"
    set +e
    swift build -c release --product spotter --scratch-path "$SCRATCH" 2>&1 | tail -1
    s1=${PIPESTATUS[0]}
    swift build -c release --product spotter-load --scratch-path "$SCRATCH" 2>&1 | tail -1
    s2=${PIPESTATUS[0]}
    set -e
    if [ "$s1" -ne 0 ] || [ "$s2" -ne 0 ]; then echo "build failed" >&2; exit 1; fi
fi
# SPOTTER_BIN: another server binary to measure (a before/after comparison with the same generator).
SERVER="${SPOTTER_BIN:-$ROOT/$SCRATCH/release/spotter}"
LOAD="$ROOT/$SCRATCH/release/spotter-load"

port_is_free() {
    if command -v ss >/dev/null 2>&1; then
        [ -z "$(ss -Htln "sport = :$1" 2>/dev/null)" ]
    else
        ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
    fi
}

OUT_DIR="$ROOT/LoadTests/results/$(date -u +%Y-%m-%d)"
mkdir -p "$OUT_DIR"
ADMIN_EMAIL=admin@load.test
ADMIN_PASSWORD="load-admin-$RANDOM$RANDOM"
export SPOTTER_LOAD_ADMIN_PASSWORD="$ADMIN_PASSWORD"

SERVER_PID=""
DATA_DIR=""
stop_server() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        # An overloaded server works through its queue before it exits; give it 10 s, then SIGKILL (this PID only).
        for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "   server $SERVER_PID still busy 10 s after SIGTERM: SIGKILL" >&2
            kill -9 "$SERVER_PID" 2>/dev/null || true
        fi
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
    if [ -n "$DATA_DIR" ]; then rm -rf "$DATA_DIR"; DATA_DIR=""; fi
}
LOAD_STORE=${LOAD_STORE:-sqlite}
. LoadTests/pg-throwaway.sh
STORE_OPTS=()
PG_DATABASES=0
trap 'stop_server; pg_throwaway_stop' EXIT
if [ "$LOAD_STORE" = postgres ]; then pg_throwaway_start; fi

# start_server [extra serve options...]: fresh data dir, admin, server on a free port.
start_server() {
    DATA_DIR=$(mktemp -d /tmp/spotter-load.XXXXXX)
    PORT=""
    for _ in $(seq 1 50); do
        candidate=$((20000 + RANDOM % 30000))
        if port_is_free "$candidate"; then PORT=$candidate; break; fi
    done
    [ -n "$PORT" ] || { echo "no free port found" >&2; return 1; }
    STORE_OPTS=()
    if [ "$LOAD_STORE" = postgres ]; then
        PG_DATABASES=$((PG_DATABASES + 1))
        STORE_OPTS=(--store "$(pg_throwaway_database "load_$PG_DATABASES")")
    fi
    SPOTTER_ADMIN_PASSWORD="$ADMIN_PASSWORD" "$SERVER" admin create-admin --data-dir "$DATA_DIR" "${STORE_OPTS[@]}" \
        --email "$ADMIN_EMAIL" --full-name Load >/dev/null
    "$SERVER" serve --port "$PORT" --data-dir "$DATA_DIR" "${STORE_OPTS[@]}" --log-level warning --idle-timeout 120 --load-test-provisioning "$@" \
        >"$DATA_DIR/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 100); do
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
        if (exec 3<>"/dev/tcp/127.0.0.1/$PORT" && printf 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3 \
            && head -c 12 <&3 | grep -q '200') 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    echo "server did not come up; its log:" >&2
    cat "$DATA_DIR/server.log" >&2 || true
    return 1
}

status=0
run_scenario() {  # name, bound in seconds, spotter-load options...
    local name=$1 bound=$2
    shift 2
    echo "== $name (load: $(cat /proc/loadavg))"
    local serve_opts=()
    # idle: ping every 5 s so the hold exercises the keepalive (default: idle timeout / 2 = 60 s).
    if [ "$name" = idle ]; then serve_opts=(--ping-interval 5); fi
    # quota: clients are metered (Freemium, 20 messages a month).
    if [ "$name" = quota ]; then serve_opts=(--tiers); fi
    start_server "${serve_opts[@]}" || { status=1; return; }
    local pg_before=""
    if [ "$LOAD_STORE" = postgres ]; then pg_before=$(pg_throwaway_cpu); fi
    set +e
    timeout "$bound" "$LOAD" "$name" --port "$PORT" --server-pid "$SERVER_PID" --admin-email "$ADMIN_EMAIL" \
        --json "$OUT_DIR/$name.json" --markdown "$OUT_DIR/$name.md" --max-run-seconds "$((bound - 30))" "$@" \
        > "$OUT_DIR/$name.out"
    local s=$?
    set -e
    if [ -n "$pg_before" ]; then
        # spotter-load counts the server process's CPU only; PostgreSQL's is on top of it.
        echo "PostgreSQL CPU during $name: $(echo "$(pg_throwaway_cpu) - $pg_before" | bc) s" >> "$OUT_DIR/$name.out"
    fi
    cat "$OUT_DIR/$name.out"
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "the server exited during $name; its log:" >&2
        tail -20 "$DATA_DIR/server.log" >&2 || true
        s=1
    fi
    stop_server
    if [ "$s" -ne 0 ]; then echo "!! $name: exit status $s" >&2; status=1; fi
}

SUITE_START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
LOAD_BEFORE=$(cat /proc/loadavg)
IFS=',' read -r -a scenarios <<< "$LOAD_SCENARIOS"
for name in "${scenarios[@]}"; do
    case "$name" in
        chat) run_scenario chat 150 --pairs "$PAIRS" --rate "$RATE" --duration "$DURATION" --warmup 3 ;;
        idle) run_scenario idle 120 --sockets "$IDLE_SOCKETS" --hold "$IDLE_HOLD" ;;
        fanin) run_scenario fanin 120 --rate "$FANIN_RATE" --coach-commands-per-second "$FANIN_COACH_COMMANDS" --duration "$FANIN_DURATION" --warmup 2 ;;
        reconnect) run_scenario reconnect 150 --pairs "$PAIRS" --rate "$RECONNECT_RATE" --warmup 5 --duration "$RECONNECT_TAIL" --jitter "$JITTER" ;;
        ceiling) run_scenario ceiling 200 --pairs "$PAIRS" --rate "$CEILING_START" --ceiling-factor "$CEILING_FACTOR" \
            --ceiling-max "$CEILING_MAX" --duration "$CEILING_DURATION" --step-warmup 2 --grace 5 ;;
        sessions) run_scenario sessions 200 --coaches "$SESSIONS_COACHES" --clients-per-coach "$SESSIONS_CLIENTS" \
            --rate "$SESSIONS_RATE" --duration "$SESSIONS_DURATION" --warmup 3 ;;
        quota) run_scenario quota 150 --pairs "$QUOTA_PAIRS" --rate "$QUOTA_RATE" --duration "$QUOTA_DURATION" --warmup 3 ;;
        *) echo "unknown scenario $name" >&2; status=1 ;;
    esac
done

{
    echo "# Spotter load suite — $SUITE_START"
    echo
    echo "Machine: $(nproc) cores, $(uname -sr). Load average before the suite: \`$LOAD_BEFORE\`;"
    echo "after: \`$(cat /proc/loadavg)\`. Server and generator share the machine; a fresh server per scenario."
    echo
    for name in "${scenarios[@]}"; do
        [ -f "$OUT_DIR/$name.md" ] && cat "$OUT_DIR/$name.md" && echo
    done
} > "$OUT_DIR/summary.md"
echo "== summary in $OUT_DIR/summary.md"
exit "$status"
