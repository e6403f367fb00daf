#!/usr/bin/env bash
# The log's append path on SQLite and on PostgreSQL, side by side in one sitting (spotter-log-bench).
#
# Starts a throwaway PostgreSQL 15 cluster (initdb + pg_ctl, Debian's postgresql package) in a temp
# directory on a free loopback port, with the durability the cluster mode runs with (fsync on,
# synchronous_commit on: a COMMIT returns after its WAL is flushed), and runs spotter-log-bench
# against it and against SQLite (WAL, synchronous=FULL) in the same temp directory. PostgreSQL's
# server CPU (backends, WAL writer, checkpointer) is read from /proc and reported beside the
# client's. Everything temporary is removed on exit. Extra arguments go to the benchmark, e.g.
#   LoadTests/run-log-bench.sh --rows 50000 --batches 1,10,100
# Set SKIP_BUILD=1 to use an existing .build/release/spotter-log-bench.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
    echo "run-log-bench: PostgreSQL's server programs are missing: apt-get install -y postgresql" >&2
    exit 1
fi
[ "${SKIP_BUILD:-0}" = 1 ] || swift build -c release --product spotter-log-bench

work=$(mktemp -d)
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
    as_pg "$PG_BIN/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
[ "$(id -u)" -ne 0 ] || chown postgres:postgres "$work"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
as_pg "$PG_BIN/initdb" -D "$work/pg" -U spotter -A trust -E UTF8 --locale=C >/dev/null
as_pg "$PG_BIN/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w -o "-p $port -k $work -c listen_addresses=127.0.0.1" start >/dev/null
"$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$port" -U spotter -d postgres -c "CREATE DATABASE bench"
mkdir -p "$work/sqlite"
echo "run-log-bench: $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') (fsync on, synchronous_commit on) on 127.0.0.1:$port; SQLite $(sqlite3 --version 2>/dev/null | cut -d' ' -f1 || echo '3.x') (WAL, synchronous=FULL)"
.build/release/spotter-log-bench --postgres "postgresql://spotter@127.0.0.1:$port/bench" --pg-data "$work/pg" \
    --sqlite-directory "$work/sqlite" "$@"
