# Sourced by the load scripts: a throwaway PostgreSQL cluster in a temp directory on a free loopback port,
# with production durability (fsync on, synchronous_commit on). Needs Debian's postgresql package; runs
# the server as the `postgres` user when the caller is root (PostgreSQL refuses root).
#   pg_throwaway_start        sets PG_WORK, PG_PORT, PG_BIN; registers nothing: call pg_throwaway_stop in your trap
#   pg_throwaway_database N   creates database N, prints its URL
#   pg_throwaway_stop         stops the server (immediate) and removes the directory
pg_as_server_user() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

pg_throwaway_start() {
    PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
        echo "PostgreSQL's server programs are missing: apt-get install -y postgresql" >&2
        return 1
    fi
    PG_WORK=$(mktemp -d /tmp/spotter-pg-load.XXXXXX)
    [ "$(id -u)" -ne 0 ] || chown postgres:postgres "$PG_WORK"
    PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    pg_as_server_user "$PG_BIN/initdb" -D "$PG_WORK/pg" -U spotter -A trust -E UTF8 --locale=C >/dev/null
    pg_as_server_user "$PG_BIN/pg_ctl" -D "$PG_WORK/pg" -l "$PG_WORK/pg.log" -w \
        -o "-p $PG_PORT -k $PG_WORK -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
}

pg_throwaway_database() {
    "$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$PG_PORT" -U spotter -d postgres -c "CREATE DATABASE $1" >/dev/null
    echo "postgresql://spotter@127.0.0.1:$PG_PORT/$1"
}

pg_throwaway_stop() {
    [ -n "${PG_WORK:-}" ] || return 0
    pg_as_server_user "$PG_BIN/pg_ctl" -D "$PG_WORK/pg" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$PG_WORK"
    PG_WORK=""
}

# CPU seconds (user + system) of the cluster's processes so far: the postmaster's children that live,
# read from /proc (backends of connections still open, WAL writer, checkpointer).
pg_throwaway_cpu() {
    local master
    master=$(head -1 "$PG_WORK/pg/postmaster.pid")
    proc_cpu_seconds "$master" $(pgrep -P "$master")
}

# proc_cpu_seconds PID...: CPU seconds (user + system) the processes used so far, summed, from /proc
# (one that has exited counts 0). Also run-load.sh's for nats-server.
proc_cpu_seconds() {
    local ticks total=0 pid
    ticks=$(getconf CLK_TCK)
    for pid in "$@"; do
        total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo "scale=2; $total / $ticks" | bc
}
