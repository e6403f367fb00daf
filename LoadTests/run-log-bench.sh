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

. LoadTests/pg-throwaway.sh
[ "${SKIP_BUILD:-0}" = 1 ] || swift build -c release --product spotter-log-bench

work=$(mktemp -d)
trap 'pg_throwaway_stop; rm -rf "$work"' EXIT
pg_throwaway_start
url=$(pg_throwaway_database bench)
mkdir -p "$work/sqlite"
echo "run-log-bench: $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') (fsync on, synchronous_commit on) on 127.0.0.1:$PG_PORT; SQLite $(sqlite3 --version 2>/dev/null | cut -d' ' -f1 || echo '3.x') (WAL, synchronous=FULL)"
.build/release/spotter-log-bench --postgres "$url" --pg-data "$PG_WORK/pg" \
    --sqlite-directory "$work/sqlite" "$@"
