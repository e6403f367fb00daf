#!/usr/bin/env bash
# Spotter as a cluster on one machine: PostgreSQL (the shared store), a NATS
# server (the broker between processes), several `spotter serve` processes and
# HAProxy in front of them, all from Debian packages, everything in one state
# directory. For trying cluster mode and for tests; deploy/cluster/README.md
# says how to lay it out on several machines.
#
#   deploy/cluster/cluster.sh start     start everything, wait until it serves
#   deploy/cluster/cluster.sh status    what runs; /healthz of each process
#   deploy/cluster/cluster.sh stop      stop what start started
#
# Settings (environment):
#   SPOTTER_CLUSTER_DIR  state directory (/tmp/spotter-cluster): PostgreSQL's
#                        data (pg/), the shared --data-dir (data/), the token
#                        secret, logs, pids/NAME.pid, the HAProxy config
#   SPOTTER_PROCESSES    number of spotter processes (3)
#   SPOTTER_PORT         HAProxy's port (8080); the processes listen on the
#                        ports after it (8081, 8082, 8083)
#   PG_PORT, NATS_PORT   PostgreSQL's and NATS's ports (55432, 54222)
#   SPOTTER_BIN          the spotter binary (.build/release/spotter, built
#                        with `swift build -c release --product spotter` when
#                        missing and SPOTTER_BIN is unset)
#   Other SPOTTER_* variables (SPOTTER_LOG_LEVEL, SPOTTER_IDLE_TIMEOUT, …)
#   reach every spotter process as usual.
#
# Everything listens on 127.0.0.1 only. PostgreSQL trusts every local
# connection (no password): a recipe for one machine you control, not for a
# shared one. The data stays in the state directory across stop and start;
# remove the directory to start afresh. As root, PostgreSQL runs as the
# `postgres` user (it refuses root) and owns pg/; everything else runs as the
# caller. Missing Debian packages (postgresql, nats-server, haproxy, curl) are
# installed with apt-get as root or through sudo.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TEMPLATE="$ROOT/deploy/cluster/haproxy.cfg.template"
DIR=${SPOTTER_CLUSTER_DIR:-/tmp/spotter-cluster}
case "$DIR" in /*) ;; *) DIR="$PWD/$DIR" ;; esac
DIR=${DIR%/}
PG_PORT=${PG_PORT:-55432}
NATS_PORT=${NATS_PORT:-54222}
SPOTTER_PORT=${SPOTTER_PORT:-8080}
SPOTTER_PROCESSES=${SPOTTER_PROCESSES:-3}
PG_BIN=""

say() { echo "cluster: $*"; }
die() { echo "cluster: $*" >&2; exit 1; }

is_root() { [ "$(id -u)" -eq 0 ]; }

[ -n "$DIR" ] || die "SPOTTER_CLUSTER_DIR must not be /"

# PostgreSQL's programs run as `postgres` when we are root, from a directory it may enter.
as_pg() {
    if is_root; then (cd "$DIR" && runuser -u postgres -- "$@"); else "$@"; fi
}

# The newest PostgreSQL server programs Debian installed.
find_pg_bin() {
    local dir best=""
    for dir in /usr/lib/postgresql/*/bin; do
        if [ ! -x "$dir/initdb" ] || [ ! -x "$dir/pg_ctl" ] || [ ! -x "$dir/psql" ]; then continue; fi
        if [ -z "$best" ] || [ "$(basename "$(dirname "$dir")")" -gt "$(basename "$(dirname "$best")")" ]; then
            best=$dir
        fi
    done
    echo "$best"
}

# A program on PATH or in /usr/sbin (not on a normal user's PATH on Debian).
find_program() {
    command -v "$1" 2>/dev/null || { [ -x "/usr/sbin/$1" ] && echo "/usr/sbin/$1"; } || true
}

# Names each missing Debian package and installs them (apt-get as root, or through sudo).
check_packages() {
    local missing=()
    [ -n "$(find_pg_bin)" ] || missing+=(postgresql)
    [ -n "$(find_program nats-server)" ] || missing+=(nats-server)
    [ -n "$(find_program haproxy)" ] || missing+=(haproxy)
    [ -n "$(find_program curl)" ] || missing+=(curl)
    [ ${#missing[@]} -eq 0 ] && return 0
    say "missing Debian packages: ${missing[*]}"
    local sudo=()
    if ! is_root; then
        command -v sudo >/dev/null 2>&1 || die "run as root: apt-get install -y ${missing[*]}"
        sudo=(sudo)
    fi
    "${sudo[@]}" apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

# Settings of the running cluster, written by start and read by stop and status
# (so they act on what was started even if the environment changed since).
CONF_KEYS="PG_PORT NATS_PORT SPOTTER_PORT SPOTTER_PROCESSES PG_BIN"
write_conf() {
    local key
    for key in $CONF_KEYS; do echo "$key=${!key}"; done >"$DIR/cluster.conf"
}
read_conf() {
    local key value
    [ -f "$DIR/cluster.conf" ] || return 0
    while IFS='=' read -r key value; do
        case " $CONF_KEYS " in *" $key "*) printf -v "$key" '%s' "$value" ;; esac
    done <"$DIR/cluster.conf"
}

# A recorded PID that is still one of ours: alive, and its command line names the
# state directory (every program is started with a path in it), so a PID reused
# by an unrelated process is never signalled.
ours() {
    local pid=$1
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    local cmdline
    cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
    [[ "$cmdline" == *"$DIR/"* ]]
}

recorded_pid() { cat "$DIR/pids/$1.pid" 2>/dev/null || true; }

# Starts a program in its own session (a closed terminal or a Ctrl-C does not reach
# it), output appended to LOG; records its PID. setsid execs the program in place,
# so $! is the program's own PID.
launch() {
    local name=$1 log=$2
    shift 2
    setsid "$@" </dev/null >>"$log" 2>&1 &
    echo "$!" >"$DIR/pids/$name.pid"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Waits up to SECONDS for a command to succeed while process NAME lives; fails with its log's tail.
wait_for() {
    local name=$1 seconds=$2 log=$3
    shift 3
    local deadline=$((SECONDS + seconds))
    until "$@"; do
        if ! ours "$(recorded_pid "$name")"; then
            echo "cluster: $name exited; the end of $log:" >&2
            tail -n 20 "$log" >&2 || true
            return 1
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "cluster: $name not ready after ${seconds}s; the end of $log:" >&2
            tail -n 20 "$log" >&2 || true
            return 1
        fi
        sleep 0.2
    done
}

healthy() { curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$1/healthz" 2>/dev/null; }

# Sends SIGTERM to each named process that is ours, waits up to SECONDS for them
# to exit, then SIGKILLs what is left.
terminate() {
    local seconds=$1
    shift
    local name pid left=()
    for name in "$@"; do
        pid=$(recorded_pid "$name")
        if ours "$pid"; then
            say "stopping $name (pid $pid)"
            kill -TERM "$pid" 2>/dev/null || true
            left+=("$name")
        elif [ -n "$pid" ]; then
            say "$name (pid $pid) is not running"
        fi
    done
    local deadline=$((SECONDS + seconds)) alive
    while [ ${#left[@]} -gt 0 ]; do
        alive=()
        for name in "${left[@]}"; do
            ours "$(recorded_pid "$name")" && alive+=("$name")
        done
        left=("${alive[@]+"${alive[@]}"}")
        [ ${#left[@]} -gt 0 ] || break
        if [ "$SECONDS" -ge "$deadline" ]; then
            for name in "${left[@]}"; do
                pid=$(recorded_pid "$name")
                say "$name (pid $pid) still running after ${seconds}s: SIGKILL"
                kill -KILL "$pid" 2>/dev/null || true
            done
            sleep 0.5
            break
        fi
        sleep 0.2
    done
    for name in "$@"; do rm -f "$DIR/pids/$name.pid"; done
}

# The spotter-K names recorded, in order.
spotter_names() {
    local file
    for file in "$DIR"/pids/spotter-*.pid; do
        [ -e "$file" ] || continue
        file=${file##*/}
        echo "${file%.pid}"
    done | sort -t- -k2 -n
}

stop_all() {
    read_conf
    local names=()
    mapfile -t names < <(spotter_names)
    # Spotter first, while the store and the broker still answer: a process drains
    # its sockets (close 1001) for up to its shutdown grace, 10 s by default.
    [ ${#names[@]} -eq 0 ] || terminate 15 "${names[@]}"
    terminate 10 haproxy
    terminate 10 nats
    local pid
    pid=$(recorded_pid postgres)
    if ours "$pid"; then
        say "stopping postgres (pid $pid)"
        as_pg "$PG_BIN/pg_ctl" -D "$DIR/pg" -m fast -w -t 10 stop >/dev/null || true
        if ours "$pid"; then
            say "postgres (pid $pid) still running after 10s: SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    elif [ -n "$pid" ]; then
        say "postgres (pid $pid) is not running"
    fi
    rm -f "$DIR/pids/postgres.pid"
}

# The spotter binary: SPOTTER_BIN, or the release build (built when missing).
resolve_binary() {
    if [ -n "${SPOTTER_BIN:-}" ]; then
        case "$SPOTTER_BIN" in /*) BIN=$SPOTTER_BIN ;; *) BIN="$PWD/$SPOTTER_BIN" ;; esac
        [ -x "$BIN" ] || die "SPOTTER_BIN=$SPOTTER_BIN is not an executable file"
    else
        BIN="$ROOT/.build/release/spotter"
        if [ ! -x "$BIN" ]; then
            say "building $BIN"
            (cd "$ROOT" && swift build -c release --product spotter)
        fi
    fi
    local help
    help=$("$BIN" serve --help 2>&1) || die "$BIN serve --help failed: $help"
    [[ "$help" == *--broker* ]] || die "$BIN has no --broker option (cluster mode): build a newer spotter"
}

start_postgres() {
    local log="$DIR/pg.log" socket="$DIR/pg-socket"
    # A Unix socket path holds at most 107 bytes.
    [ ${#socket} -le 90 ] || die "SPOTTER_CLUSTER_DIR is too long for PostgreSQL's socket path: choose a shorter one"
    mkdir -p "$DIR/pg" "$socket"
    touch "$log"
    if is_root; then
        runuser -u postgres -- test -x "$DIR" \
            || die "the postgres user cannot enter $DIR: choose a SPOTTER_CLUSTER_DIR it can reach (under /tmp or /srv)"
        chown postgres:postgres "$DIR/pg" "$socket" "$log"
    fi
    chmod 700 "$DIR/pg"
    if [ ! -s "$DIR/pg/PG_VERSION" ]; then
        say "initdb $DIR/pg"
        as_pg "$PG_BIN/initdb" -D "$DIR/pg" -U spotter -A trust -E UTF8 --locale=C >"$DIR/initdb.log" 2>&1 \
            || { tail -n 20 "$DIR/initdb.log" >&2; die "initdb failed (whole output in $DIR/initdb.log)"; }
    fi
    say "starting PostgreSQL on 127.0.0.1:$PG_PORT"
    as_pg "$PG_BIN/pg_ctl" -D "$DIR/pg" -l "$log" -w -t 60 \
        -o "-p $PG_PORT -k $socket -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null \
        || { tail -n 20 "$log" >&2; die "PostgreSQL did not start (log: $log)"; }
    head -n 1 "$DIR/pg/postmaster.pid" >"$DIR/pids/postgres.pid"
    local psql=("$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U spotter)
    if [ -z "$("${psql[@]}" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'spotter'")" ]; then
        # Owned by `spotter`, so migrate may create the btree_gist extension.
        "${psql[@]}" -d postgres -c "CREATE DATABASE spotter OWNER spotter" >/dev/null
    fi
}

start_nats() {
    local log="$DIR/nats.log" nats
    nats=$(find_program nats-server)
    say "starting NATS on 127.0.0.1:$NATS_PORT"
    launch nats "$log" "$nats" -a 127.0.0.1 -p "$NATS_PORT" -l "$log"
    wait_for nats 15 "$log" port_in_use "$NATS_PORT"
}

# The shared access-token secret: made once, kept in the state directory.
token_secret() {
    local file="$DIR/token-secret"
    if [ ! -s "$file" ]; then
        (umask 077 && head -c 32 /dev/urandom | od -An -v -tx1 | tr -d ' \n' >"$file")
    fi
    chmod 600 "$file"
    SECRET=$(cat "$file")
    [ ${#SECRET} -ge 32 ] || die "$file holds fewer than 32 characters: remove it to make a new one"
}

start_spotters() {
    local k port
    mkdir -p "$DIR/data"
    chmod 700 "$DIR/data"
    say "spotter migrate"
    "$BIN" migrate --store "$STORE" --data-dir "$DIR/data" >>"$DIR/migrate.log" 2>&1 \
        || { tail -n 20 "$DIR/migrate.log" >&2; die "spotter migrate failed (log: $DIR/migrate.log)"; }
    for k in $(seq 1 "$SPOTTER_PROCESSES"); do
        port=$((SPOTTER_PORT + k))
        say "starting spotter-$k on 127.0.0.1:$port"
        SPOTTER_TOKEN_SECRET=$SECRET launch "spotter-$k" "$DIR/spotter-$k.log" \
            "$BIN" serve --host 127.0.0.1 --port "$port" --data-dir "$DIR/data" --store "$STORE" --broker "$BROKER" \
            --trusted-proxy 127.0.0.1/32
    done
    for k in $(seq 1 "$SPOTTER_PROCESSES"); do
        wait_for "spotter-$k" 120 "$DIR/spotter-$k.log" healthy "$((SPOTTER_PORT + k))"
    done
}

start_haproxy() {
    local haproxy servers="" k config="$DIR/haproxy.cfg"
    haproxy=$(find_program haproxy)
    [ -r "$TEMPLATE" ] || die "missing $TEMPLATE"
    for k in $(seq 1 "$SPOTTER_PROCESSES"); do
        servers+="    server spotter-$k 127.0.0.1:$((SPOTTER_PORT + k)) check send-proxy-v2"$'\n'
    done
    # The placeholders are filled on every line but comments (which name them).
    local line
    while IFS= read -r line || [ -n "$line" ]; do
        if [[ "$line" =~ ^[[:space:]]*# ]]; then
            printf '%s\n' "$line"
            continue
        fi
        line=${line//@BIND@/127.0.0.1}
        line=${line//@PORT@/"$SPOTTER_PORT"}
        line=${line//@SERVERS@/"${servers%$'\n'}"}
        printf '%s\n' "$line"
    done <"$TEMPLATE" >"$config"
    "$haproxy" -c -q -f "$config" || { "$haproxy" -c -f "$config" >&2 || true; die "HAProxy refuses $config"; }
    say "starting HAProxy on 127.0.0.1:$SPOTTER_PORT"
    launch haproxy "$DIR/haproxy.log" "$haproxy" -db -f "$config"
    wait_for haproxy 30 "$DIR/haproxy.log" healthy "$SPOTTER_PORT"
}

cmd_start() {
    local value
    for value in "$PG_PORT" "$NATS_PORT" "$SPOTTER_PORT" "$SPOTTER_PROCESSES"; do
        [[ "$value" =~ ^[0-9]+$ ]] || die "ports and SPOTTER_PROCESSES must be numbers, got '$value'"
    done
    [ "$SPOTTER_PROCESSES" -ge 1 ] || die "SPOTTER_PROCESSES must be at least 1"
    [ $((SPOTTER_PORT + SPOTTER_PROCESSES)) -le 65535 ] || die "SPOTTER_PORT + SPOTTER_PROCESSES must stay below 65536"

    if [ -e "$DIR" ] && [ ! -O "$DIR" ]; then
        die "$DIR belongs to another user: choose another SPOTTER_CLUSTER_DIR"
    fi
    mkdir -p "$DIR/pids"
    # Others (the postgres user, when we are root) may pass through, not list.
    chmod 711 "$DIR"
    local name
    for name in postgres nats haproxy $(spotter_names); do
        ours "$(recorded_pid "$name")" \
            && die "$name is running already (pid $(recorded_pid "$name")): $0 status, or $0 stop first"
    done

    check_packages
    PG_BIN=$(find_pg_bin)
    resolve_binary
    local port
    for port in "$PG_PORT" "$NATS_PORT" "$SPOTTER_PORT" $(seq $((SPOTTER_PORT + 1)) $((SPOTTER_PORT + SPOTTER_PROCESSES))); do
        port_in_use "$port" && die "port $port on 127.0.0.1 is in use (see PG_PORT, NATS_PORT, SPOTTER_PORT)"
    done
    rm -f "$DIR"/pids/*.pid
    write_conf

    # From here on, a failure or an interruption (Ctrl-C) stops whatever was started.
    trap 'if [ $? -ne 0 ]; then echo "cluster: start failed; stopping what was started" >&2; stop_all; fi' EXIT
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 143' TERM
    STORE="postgres://spotter@127.0.0.1:$PG_PORT/spotter"
    BROKER="nats://127.0.0.1:$NATS_PORT"
    start_postgres
    start_nats
    token_secret
    start_spotters
    start_haproxy
    trap - EXIT HUP INT TERM

    local last=$((SPOTTER_PORT + SPOTTER_PROCESSES))
    cat <<EOF

Spotter cluster running ($SPOTTER_PROCESSES processes; state in $DIR)
  WebSocket   ws://127.0.0.1:$SPOTTER_PORT/v1/ws
  HTTP API    http://127.0.0.1:$SPOTTER_PORT/v1/
  console     http://127.0.0.1:$SPOTTER_PORT/console/
  health      http://127.0.0.1:$SPOTTER_PORT/healthz   (through HAProxy)
  processes   http://127.0.0.1:$((SPOTTER_PORT + 1)) … http://127.0.0.1:$last   (logs $DIR/spotter-K.log)
  PostgreSQL  $STORE
  NATS        $BROKER
  token       $DIR/token-secret (SPOTTER_TOKEN_SECRET of every process)
Status: $0 status    Stop: $0 stop
EOF
}

cmd_stop() {
    if [ ! -d "$DIR/pids" ]; then
        say "nothing recorded in $DIR: nothing to stop"
        return 0
    fi
    PG_BIN=$(find_pg_bin)
    stop_all
    say "stopped (data kept in $DIR; remove the directory to start afresh)"
}

# One line per component: NAME  pid PID  running|stopped  detail. Exit status 0
# when everything recorded runs and every spotter process answers 200.
cmd_status() {
    if ! compgen -G "$DIR/pids/*.pid" >/dev/null; then
        say "nothing recorded in $DIR: not running"
        return 3
    fi
    read_conf
    [ -n "$PG_BIN" ] || PG_BIN=$(find_pg_bin)
    local ok=0 name pid state detail port answer code
    for name in postgres nats $(spotter_names) haproxy; do
        pid=$(recorded_pid "$name")
        [ -n "$pid" ] || continue
        if ours "$pid"; then state=running; else state=stopped; ok=1; fi
        case "$name" in
            postgres)
                detail="127.0.0.1:$PG_PORT"
                if [ "$state" = running ]; then
                    if "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"; then
                        detail+=" accepting connections"
                    else
                        detail+=" not accepting connections"
                        ok=1
                    fi
                fi
                ;;
            nats)
                detail="127.0.0.1:$NATS_PORT"
                if [ "$state" = running ]; then
                    if port_in_use "$NATS_PORT"; then detail+=" accepting connections"; else detail+=" not accepting connections"; ok=1; fi
                fi
                ;;
            *)
                if [ "$name" = haproxy ]; then port=$SPOTTER_PORT; else port=$((SPOTTER_PORT + ${name#spotter-})); fi
                detail="127.0.0.1:$port"
                if [ "$state" = running ]; then
                    answer=$(curl -sS --max-time 2 -w '\n%{http_code}' "http://127.0.0.1:$port/healthz" 2>&1 || true)
                    code=${answer##*$'\n'}
                    answer=${answer%$'\n'*}
                    [ "$code" = 200 ] || ok=1
                    detail+=" /healthz $code $(echo "$answer" | tr -d '\n' | cut -c1-160)"
                    [ "$name" != haproxy ] || detail+=" (through HAProxy)"
                fi
                ;;
        esac
        printf '%-10s %-10s %-8s %s\n' "$name" "pid $pid" "$state" "$detail"
    done
    return "$ok"
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    *)
        echo "usage: $0 start|stop|status   (state in SPOTTER_CLUSTER_DIR, now $DIR)" >&2
        exit 2
        ;;
esac
