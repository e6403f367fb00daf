#!/usr/bin/env bash
# The standard load suite: builds release, and for each scenario starts a
# fresh `spotter serve` (new data dir under /tmp, an admin created with
# `spotter admin create-admin`), runs `spotter-load <scenario>` against it
# with the server's PID, and stops that server (by its PID only). The cluster
# scenarios start several servers on one store and one nats-server instead.
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
#   CEILING_REFINEMENTS [3]  after the first failing step, halve the gap to the last passing one this many times
#   QUOTA_PAIRS [5000] QUOTA_RATE [5000] QUOTA_DURATION [30] (quota: Freemium clients past their 20 messages; server with --tiers)
#   SESSIONS_COACHES [1000] SESSIONS_CLIENTS [10] (per coach) SESSIONS_RATE [1000] (actions/s) SESSIONS_DURATION [60]
#   Cluster scenarios (issue 15; not in the default list): always on a throwaway PostgreSQL (whatever
#   LOAD_STORE says) and a nats-server of their own on a free port; every process gets --broker and one
#   SPOTTER_TOKEN_SECRET; pair i's coach is on process i % n, its client on process (i + 1) % n; the
#   accounts are provisioned through the first process before the others start (provisioned threads
#   are not in the log, so a process knows them only if it made them or started after):
#     cluster1, cluster3  chat on one process / on three, the same offered load:
#                         CLUSTER_PAIRS [2000] CLUSTER_RATE [1000] CLUSTER_DURATION [30]
#                         CLUSTER_SENDER_ORDER [adjacent]: spread puts a thread's two sends half a round apart
#                         instead of 1/rate (spotter-load --sender-order)
#     cluster-sockets     idle: CLUSTER_SOCKETS [20000] over three processes for CLUSTER_HOLD [30] s, from
#                         two generators of half each (one holds at most its 20,000 open files)
#   notify (issue 28; not in the default list, about 6 minutes): Web Push to offline clients, pushes on vs off;
#                       NOTIFY_* settings in LoadTests/notify-load.sh
#   NATS_SERVER [nats-server on PATH, else /usr/sbin/nats-server]
#   RESULT_SUFFIX []    appended to every result file's name, summary.md's too (-spread: cluster3-spread.json,
#                       summary-spread.md), so a run with other settings keeps the day's other results
#   SCRATCH [.build]    swift build --scratch-path
#   SKIP_BUILD [0]      1: use the binaries already built
#   SPOTTER_BIN         the server binary to run [$SCRATCH/release/spotter]
#   KEEP_LOGS           a folder: the servers' and nats-server's logs are copied there before the data goes
#   FLOOR [1]           0: skip the disk's floor. With 1, each scenario is measured beside the floor of the file
#                       system holding the data (the data dir; PostgreSQL's with LOAD_STORE=postgres): write +
#                       fdatasync of a 4 KiB append (LoadTests/run-floor.sh -s), FLOOR_QUIET_SYNCS [300] quiet ones just
#                       before the generator, then one every FLOOR_INTERVAL_MS [20] while it runs; NAME.md gets both
#                       and p99 send→ack ÷ p99 fdatasync
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
CEILING_REFINEMENTS=${CEILING_REFINEMENTS:-3}
SESSIONS_COACHES=${SESSIONS_COACHES:-1000}
QUOTA_PAIRS=${QUOTA_PAIRS:-5000}
QUOTA_RATE=${QUOTA_RATE:-5000}
QUOTA_DURATION=${QUOTA_DURATION:-30}
SESSIONS_CLIENTS=${SESSIONS_CLIENTS:-10}
SESSIONS_RATE=${SESSIONS_RATE:-1000}
SESSIONS_DURATION=${SESSIONS_DURATION:-60}
CLUSTER_PAIRS=${CLUSTER_PAIRS:-2000}
CLUSTER_RATE=${CLUSTER_RATE:-1000}
CLUSTER_DURATION=${CLUSTER_DURATION:-30}
CLUSTER_SENDER_ORDER=${CLUSTER_SENDER_ORDER:-adjacent}
CLUSTER_SOCKETS=${CLUSTER_SOCKETS:-20000}
CLUSTER_HOLD=${CLUSTER_HOLD:-30}
NATS_SERVER=${NATS_SERVER:-$(command -v nats-server || echo /usr/sbin/nats-server)}
RESULT_SUFFIX=${RESULT_SUFFIX:-}
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

# Prints a free port, not one of PORTS (servers started but perhaps not listening yet).
free_port() {
    local candidate
    for _ in $(seq 1 50); do
        candidate=$((20000 + RANDOM % 30000))
        if [[ " ${PORTS[*]} " != *" $candidate "* ]] && port_is_free "$candidate"; then echo "$candidate"; return 0; fi
    done
    echo "no free port found" >&2
    return 1
}

OUT_DIR="$ROOT/LoadTests/results/$(date -u +%Y-%m-%d)"
mkdir -p "$OUT_DIR"
ADMIN_EMAIL=admin@load.test
ADMIN_PASSWORD="load-admin-$RANDOM$RANDOM"
export SPOTTER_LOAD_ADMIN_PASSWORD="$ADMIN_PASSWORD"

SERVER_PIDS=()  # the scenario's servers, and their ports in the same order
PORTS=()
NATS_PID=""
DATA_DIR=""
stop_servers() {
    local pid
    for pid in "${SERVER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${SERVER_PIDS[@]}"; do
        # An overloaded server works through its queue before it exits; give it 10 s, then SIGKILL (this PID only).
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            echo "   server $pid still busy 10 s after SIGTERM: SIGKILL" >&2
            kill -9 "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
    SERVER_PIDS=()
    PORTS=()
    if [ -n "$NATS_PID" ]; then
        kill "$NATS_PID" 2>/dev/null || true
        wait "$NATS_PID" 2>/dev/null || true
        NATS_PID=""
    fi
    if [ -n "$DATA_DIR" ]; then
        # KEEP_LOGS=DIR: the servers' and nats-server's logs are kept there (a run to look into afterwards).
        if [ -n "${KEEP_LOGS:-}" ]; then
            mkdir -p "$KEEP_LOGS" && for f in "$DATA_DIR"/*.log; do [ -e "$f" ] && cp "$f" "$KEEP_LOGS/$(basename "$DATA_DIR")-$(basename "$f")"; done
        fi
        rm -rf "$DATA_DIR"; DATA_DIR=""
    fi
}
LOAD_STORE=${LOAD_STORE:-sqlite}
. LoadTests/pg-throwaway.sh
. LoadTests/notify-load.sh
PG_DATABASES=0
trap 'stop_receiver; stop_servers; pg_throwaway_stop' EXIT
if [ "$LOAD_STORE" = postgres ]; then pg_throwaway_start; fi

# Answers 200 on /healthz at 127.0.0.1:PORT.
healthy() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3 \
        && head -c 12 <&3 | grep -q '200') 2>/dev/null
}

# start_nats: a nats-server of the scenario's own on a free port (NATS_PID, NATS_URL), log in the data dir.
start_nats() {
    local port
    port=$(free_port) || return 1
    "$NATS_SERVER" -a 127.0.0.1 -p "$port" >"$DATA_DIR/nats.log" 2>&1 &
    NATS_PID=$!
    NATS_URL="nats://127.0.0.1:$port"
    for _ in $(seq 1 100); do
        if ! kill -0 "$NATS_PID" 2>/dev/null; then break; fi
        if ! port_is_free "$port"; then return 0; fi
        sleep 0.1
    done
    echo "nats-server did not come up; its log:" >&2
    cat "$DATA_DIR/nats.log" >&2 || true
    return 1
}

# make_store STORE: a fresh data dir, store (sqlite in it, or postgres: a fresh database of the throwaway
# cluster; STORE_OPTS) and admin, and a token secret for the servers (TOKEN_SECRET).
make_store() {
    DATA_DIR=$(mktemp -d /tmp/spotter-load.XXXXXX)
    STORE_OPTS=()
    if [ "$1" = postgres ]; then
        if [ -z "${PG_WORK:-}" ]; then pg_throwaway_start; fi
        PG_DATABASES=$((PG_DATABASES + 1))
        STORE_OPTS=(--store "$(pg_throwaway_database "load_$PG_DATABASES")")
    fi
    SPOTTER_ADMIN_PASSWORD="$ADMIN_PASSWORD" "$SERVER" admin create-admin --data-dir "$DATA_DIR" "${STORE_OPTS[@]}" \
        --email "$ADMIN_EMAIL" --full-name Load >/dev/null
    TOKEN_SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
}

# start_servers COUNT [extra serve options...]: COUNT more servers on free ports (SERVER_PIDS, PORTS) on
# make_store's data dir, store and token secret; returns once each answers /healthz.
start_servers() {
    local count=$1
    shift
    local port pid i first=${#SERVER_PIDS[@]}
    for _ in $(seq 1 "$count"); do
        port=$(free_port) || return 1
        SPOTTER_TOKEN_SECRET="$TOKEN_SECRET" "$SERVER" serve --port "$port" --data-dir "$DATA_DIR" "${STORE_OPTS[@]}" \
            --log-level warning --idle-timeout 120 --load-test-provisioning "$@" >"$DATA_DIR/server-$((${#PORTS[@]} + 1)).log" 2>&1 &
        SERVER_PIDS+=("$!")
        PORTS+=("$port")
    done
    for i in $(seq "$first" $((${#SERVER_PIDS[@]} - 1))); do
        pid=${SERVER_PIDS[$i]}
        for _ in $(seq 1 100); do
            if ! kill -0 "$pid" 2>/dev/null || healthy "${PORTS[$i]}"; then break; fi
            sleep 0.1
        done
        if ! healthy "${PORTS[$i]}"; then
            echo "server $((i + 1)) did not come up; its log:" >&2
            cat "$DATA_DIR/server-$((i + 1)).log" >&2 || true
            return 1
        fi
    done
}

# run_generator OUT SCENARIO BOUND spotter-load options...: one spotter-load run against the scenario's
# servers; its result in $OUT_DIR/OUT.{json,md,out}, its progress also in $DATA_DIR/OUT.progress.
run_generator() {
    local out=$1 scenario=$2 bound=$3
    shift 3
    timeout "$bound" "$LOAD" "$scenario" --port "${PORTS[0]}" --ports "$(IFS=,; echo "${PORTS[*]}")" \
        --server-pids "$(IFS=,; echo "${SERVER_PIDS[*]}")" --admin-email "$ADMIN_EMAIL" \
        --json "$OUT_DIR/$out.json" --markdown "$OUT_DIR/$out.md" --max-run-seconds "$((bound - 30))" "$@" \
        > "$OUT_DIR/$out.out" 2> >(tee "$DATA_DIR/$out.progress" >&2)
}

# provision_first GENERATORS SCENARIO spotter-load options...: each generator's accounts provisioned through the
# first server into $DATA_DIR/accounts-G.json (provisioned threads are known to the process that made them and,
# read from the store at start, to processes started later: so a cluster's other processes start after this).
provision_first() {
    local generators=$1 scenario=$2 g
    shift 2
    for g in $(seq 1 "$generators"); do
        timeout 120 "$LOAD" "$scenario" --port "${PORTS[0]}" --admin-email "$ADMIN_EMAIL" \
            --provision-to "$DATA_DIR/accounts-$g.json" "$@" || return 1
    done
}

# side_cpu STORE: the scenario's CPU outside the servers so far, "PostgreSQL nats-server" in seconds ("-" for none).
side_cpu() {
    local pg=- nats=-
    if [ "$1" = postgres ]; then pg=$(pg_throwaway_cpu); fi
    if [ -n "$NATS_PID" ]; then nats=$(proc_cpu_seconds "$NATS_PID"); fi
    echo "$pg $nats"
}

# Table rows for NAME.md: CPU of PostgreSQL and nats-server between two side_cpu readings (spotter-load counts
# the servers' only), and per message delivered in the window when RESULT (a spotter-load JSON) has traffic.
side_cpu_rows() {  # before, after, result JSON
    local -a before=($1) after=($2)
    local delivered label cpu i
    delivered=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["traffic"]["delivered_to_peer"])' "$3" 2>/dev/null || true)
    for i in 0 1; do
        [ "${before[$i]}" != - ] || continue
        label=$([ "$i" -eq 0 ] && echo PostgreSQL || echo nats-server)
        cpu=$(printf '%.2f' "$(echo "${after[$i]} - ${before[$i]}" | bc)")
        echo "| $label CPU (spotter-load's whole run, /proc) | $cpu s$( [ -n "$delivered" ] && [ "$delivered" -gt 0 ] \
            && echo ", $(echo "scale=1; $cpu * 1000000 / $delivered" | bc) µs per message delivered in the window") |"
    done
}

# Each server's RSS in KiB, in the order of SERVER_PIDS ("0" for one that cannot be read).
rss_each() {
    local pid
    for pid in "${SERVER_PIDS[@]}"; do awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0; done | xargs
}

# Waits (at most BOUND s) until every generator of NAME printed that it holds its sockets (cluster-sockets).
wait_until_holding() {  # name, generators, bound
    local name=$1 generators=$2 bound=$3 g holding
    for _ in $(seq 1 $((bound * 2))); do
        holding=0
        for g in $(seq 1 "$generators"); do
            if grep -q "idle: holding" "$DATA_DIR/$name-$g.progress" 2>/dev/null; then holding=$((holding + 1)); fi
        done
        [ "$holding" -lt "$generators" ] || return 0
        sleep 0.5
    done
}

# cluster-sockets: NAME.md from the generators' results: sockets summed, each process's sockets and RSS (KiB lists
# BEFORE the generators and HOLDING, once all held theirs), ROWS (more table rows), then each generator's section.
combine_generators() {  # name, generators, before, holding, rows
    local name=$1 generators=$2
    { python3 - "$OUT_DIR" "$name" "$generators" "$3" "$4" "${SERVER_PIDS[*]}" <<'PY'; [ -z "$5" ] || echo "$5"; } > "$OUT_DIR/$name.md"
import json, sys
out, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
before, holding, pids = ([int(x) for x in arg.split()] for arg in sys.argv[4:7])
results = [json.load(open(f"{out}/{name}-{g}.json")) for g in range(1, count + 1)]
connects = [r.get("connect") or {} for r in results]
idles = [r.get("idle") or {} for r in results]
# Sockets per server as spotter-load places them: pair i's coach on ports[i % n], its client on ports[(i + 1) % n].
sockets = [0] * len(pids)
for r in results:
    n = len(r["config"]["ports"])
    for i in range(r["config"]["sockets"] // 2):
        sockets[i % n] += 1
        sockets[(i + 1) % n] += 1
mib = lambda kib: f"{kib / 1024:.1f} MiB"
print(f"### {name}\n")
print(f"{count} generators at once against the same servers (one holds at most its open-file limit); each one's own "
      "section follows (their RSS growth per socket divides by their own sockets only: use the rows here).\n")
print("| measure | value |\n|---|---|")
print(f"| sockets | {sum(c.get('opened', 0) for c in connects)} of {sum(c.get('requested', 0) for c in connects)} open, "
      f"{sum(c.get('failures', 0) for c in connects)} failed; {sum(i.get('sockets_open_at_end', 0) for i in idles)} open at the end of the hold |")
print("| connect+hello rate | " + ", ".join(f"{c.get('rate_per_second', 0):.0f}/s" for c in connects) + " (per generator, at once) |")
for k, pid in enumerate(pids):
    print(f"| process {k + 1} (pid {pid}) | {sockets[k]} sockets; RSS {mib(before[k])} before, {mib(holding[k])} with every "
          f"generator holding: {(holding[k] - before[k]) * 1024 // max(1, sockets[k])} B per socket |")
print(f"| all processes | RSS {mib(sum(before))} → {mib(sum(holding))}: {(sum(holding) - sum(before)) * 1024 // max(1, sum(sockets))} B per socket |")
PY
    for g in $(seq 1 "$generators"); do echo; sed 's/^### /#### /' "$OUT_DIR/$name-$g.md"; done >> "$OUT_DIR/$name.md"
}

# The disk's floor beside each scenario (LoadTests/run-floor.sh -s, the same program as run-floor.sh's).
FLOOR=${FLOOR:-1}
FLOOR_QUIET_SYNCS=${FLOOR_QUIET_SYNCS:-300}
FLOOR_INTERVAL_MS=${FLOOR_INTERVAL_MS:-20}
FLOOR_BIN=""
FLOOR_PID=""
if [ "$FLOOR" = 1 ]; then
    FLOOR_BIN=$(mktemp /tmp/spotter-floor.XXXXXX)
    if ! FLOOR_BUILD_ONLY="$FLOOR_BIN" LoadTests/run-floor.sh; then
        echo "run-load: the disk's floor is not measured (LoadTests/run-floor.sh could not build it)" >&2
        rm -f "$FLOOR_BIN"; FLOOR_BIN=""
    fi
fi
# The directory whose file system holds the scenario's data.
floor_dir() { if [ "$1" = postgres ] && [ -n "${PG_WORK:-}" ]; then echo "$PG_WORK"; else echo "$DATA_DIR"; fi; }
# floor_begin STORE: the quiet probe now (FLOOR_QUIET), then a light one in the background until floor_stop.
floor_begin() {
    FLOOR_QUIET=""
    [ -n "$FLOOR_BIN" ] || return 0
    local dir
    dir=$(floor_dir "$1")
    FLOOR_QUIET=$("$FLOOR_BIN" -s -n "$FLOOR_QUIET_SYNCS" -t 10 -d "$dir" 2>/dev/null || true)
    "$FLOOR_BIN" -s -n 10000000 -i "$FLOOR_INTERVAL_MS" -t 3600 -d "$dir" >"$DATA_DIR/floor-during.txt" 2>/dev/null &
    FLOOR_PID=$!
}
# floor_stop: stops the background probe (in this shell: it is this shell's child), which then prints its figures.
floor_stop() {
    [ -n "$FLOOR_PID" ] || return 0
    kill -TERM "$FLOOR_PID" 2>/dev/null || true
    wait "$FLOOR_PID" 2>/dev/null || true
    FLOOR_PID=""
}
# floor_rows RESULT_JSON: NAME.md's floor rows (after floor_stop).
floor_rows() {
    [ -n "$FLOOR_BIN" ] || return 0
    python3 - "$FLOOR_QUIET" "$(cat "$DATA_DIR/floor-during.txt" 2>/dev/null)" "$1" "$FLOOR_INTERVAL_MS" <<'PY'
import json, sys
def parse(line):
    fields = dict(part.split("=", 1) for part in line.split()[1:] if "=" in part)
    return fields if int(fields.get("samples", "0")) > 0 else None
quiet, during = parse(sys.argv[1]), parse(sys.argv[2])
def text(f):
    return f"p50 {float(f['p50_ms']):.2f} / p99 {float(f['p99_ms']):.2f} / max {float(f['max_ms']):.2f} ms ({f['samples']} syncs)" if f else "not measured"
print(f"| disk floor: write + fdatasync of a 4 KiB append, data's file system | quiet, just before: {text(quiet)}; "
      f"during the run (one every {sys.argv[4]} ms): {text(during)} |")
try:
    ack = json.load(open(sys.argv[3]))["traffic"]["ack_latency_micros"]
except Exception:
    ack = None
if ack and ack.get("samples", 0) > 0:
    ratios = [f"{ack['p99'] / 1000 / float(f['p99_ms']):.1f}× the {label} floor's p99"
              for label, f in (("run's", during), ("quiet", quiet)) if f and float(f["p99_ms"]) > 0]
    if ratios:
        print(f"| p99 send→ack ÷ p99 fdatasync | {ack['p99'] / 1000:.2f} ms: " + ", ".join(ratios) + " |")
PY
}
trap 'if [ -n "$FLOOR_PID" ]; then kill "$FLOOR_PID" 2>/dev/null || true; fi; [ -z "$FLOOR_BIN" ] || rm -f "$FLOOR_BIN"; stop_receiver; stop_servers; pg_throwaway_stop' EXIT

status=0
run_scenario() {  # name, bound in seconds, spotter-load options...
    local name=$1 bound=$2
    shift 2
    echo "== $name (load: $(cat /proc/loadavg))"
    local serve_opts=() scenario=$name store=$LOAD_STORE processes=1 generators=1 result=$name$RESULT_SUFFIX
    case "$name" in
        # idle: ping every 5 s so the hold exercises the keepalive (default: idle timeout / 2 = 60 s).
        idle) serve_opts=(--ping-interval 5) ;;
        # quota: clients are metered (Freemium, 20 messages a month).
        quota) serve_opts=(--tiers) ;;
        # The cluster: chat or idle on processes that share PostgreSQL and a nats-server.
        cluster1 | cluster3) scenario=chat; store=postgres; processes=${name#cluster} ;;
        cluster-sockets) scenario=idle; store=postgres; processes=3; generators=2; serve_opts=(--ping-interval 5) ;;
    esac
    make_store "$store"
    if [ "$name" = "${name#cluster}" ]; then
        start_servers 1 "${serve_opts[@]}" || { status=1; stop_servers; return; }
    else
        # A cluster: nats-server, the first process, the accounts through it, then the other processes.
        start_nats || { status=1; stop_servers; return; }
        serve_opts+=(--broker "$NATS_URL")
        if ! start_servers 1 "${serve_opts[@]}" || ! provision_first "$generators" "$scenario" "$@" \
            || ! start_servers $((processes - 1)) "${serve_opts[@]}"; then
            status=1; stop_servers; return
        fi
    fi
    local cpu_before gens=() outs=() accounts g s=0 rss_before rss_holding
    floor_begin "$store"
    cpu_before=$(side_cpu "$store")
    rss_before=$(rss_each)
    for g in $(seq 1 "$generators"); do
        outs+=("$([ "$generators" -eq 1 ] && echo "$result" || echo "$result-$g")")
        accounts=()
        if [ -f "$DATA_DIR/accounts-$g.json" ]; then accounts=(--accounts-file "$DATA_DIR/accounts-$g.json"); fi
        run_generator "${outs[-1]}" "$scenario" "$bound" "${accounts[@]}" "$@" &
        gens+=("$!")
    done
    if [ "$generators" -gt 1 ]; then wait_until_holding "$result" "$generators" "$bound"; rss_holding=$(rss_each); fi
    for g in "${gens[@]}"; do wait "$g" || s=$?; done
    local side_rows floor_rows
    floor_stop
    floor_rows=$(floor_rows "$OUT_DIR/${outs[0]}.json")
    side_rows=$(side_cpu_rows "$cpu_before" "$(side_cpu "$store")" "$OUT_DIR/${outs[0]}.json")
    if [ -n "$floor_rows" ]; then side_rows=$(printf '%s\n%s' "$floor_rows" "$side_rows" | sed '/^$/d'); fi
    if [ -n "$side_rows" ]; then echo "$side_rows" >> "$OUT_DIR/${outs[-1]}.out"; fi
    if [ "$generators" -gt 1 ]; then
        combine_generators "$result" "$generators" "$rss_before" "$rss_holding" "$side_rows"
    elif [ -n "$side_rows" ]; then
        echo "$side_rows" >> "$OUT_DIR/$result.md"
    fi
    for g in "${outs[@]}"; do cat "$OUT_DIR/$g.out"; done
    for g in "${!SERVER_PIDS[@]}"; do
        if ! kill -0 "${SERVER_PIDS[$g]}" 2>/dev/null; then
            echo "server $((g + 1)) exited during $name; its log:" >&2
            tail -20 "$DATA_DIR/server-$((g + 1)).log" >&2 || true
            s=1
        fi
    done
    stop_servers
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
        ceiling) run_scenario ceiling 260 --pairs "$PAIRS" --rate "$CEILING_START" --ceiling-factor "$CEILING_FACTOR" \
            --ceiling-max "$CEILING_MAX" --ceiling-refinements "$CEILING_REFINEMENTS" --duration "$CEILING_DURATION" \
            --step-warmup 2 --grace 5 ;;
        sessions) run_scenario sessions 200 --coaches "$SESSIONS_COACHES" --clients-per-coach "$SESSIONS_CLIENTS" \
            --rate "$SESSIONS_RATE" --duration "$SESSIONS_DURATION" --warmup 3 ;;
        quota) run_scenario quota 150 --pairs "$QUOTA_PAIRS" --rate "$QUOTA_RATE" --duration "$QUOTA_DURATION" --warmup 3 ;;
        cluster1 | cluster3) run_scenario "$name" $((CLUSTER_DURATION + 120)) --pairs "$CLUSTER_PAIRS" --rate "$CLUSTER_RATE" \
            --duration "$CLUSTER_DURATION" --warmup 3 --sender-order "$CLUSTER_SENDER_ORDER" ;;
        notify) run_notify ;;
        cluster-sockets) run_scenario cluster-sockets $((CLUSTER_HOLD + 150)) --sockets $((CLUSTER_SOCKETS / 2)) --hold "$CLUSTER_HOLD" ;;
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
        [ -f "$OUT_DIR/$name$RESULT_SUFFIX.md" ] && cat "$OUT_DIR/$name$RESULT_SUFFIX.md" && echo
    done
} > "$OUT_DIR/summary$RESULT_SUFFIX.md"
echo "== summary in $OUT_DIR/summary$RESULT_SUFFIX.md"
exit "$status"
