#!/usr/bin/env bash
# SQLite's floor for Spotter's chat log: compiles LoadTests/floor/floor.c and runs it once.
#
# What it measures: appending rows to Spotter's `log` table exactly as the server's writer does
# (WAL, synchronous=FULL, 64 MiB page cache, one prepared INSERT, BEGIN IMMEDIATE ... COMMIT every
# 10 or 100 rows), with no server around it, into a fresh database per case in a temp directory.
# Layouts: `plain` (table without index) and `log` (with the log_thread(threadNo, seq) index,
# rows spread over 5,000 threads as in the 5,000-pair chat load test).
#
# How to read it: rows/s is the best append rate SQLite gives on this disk at that commit size;
# commits/s is bounded by the WAL fsync (one per commit), so at small batches it is the limit.
# CPU µs per row is the process's user+sys time per row (SQLite + fsync syscalls): the share of
# a core the server must spend on persistence at a given rate, at least. Compare the server's
# persisted-records/s and per-record CPU against the row with its typical batch size.
#
# The disk's floor alone: `LoadTests/run-floor.sh -s [-n SYNCS] [-i MS] [-t SECONDS] [-d DIR]` times write +
# fdatasync of a 4 KiB append (p50/p90/p99/max in ms, one key=value line); run-load.sh runs it beside every
# scenario on the data dir's file system. FLOOR_BUILD_ONLY=PATH only compiles the program to PATH (run-load.sh
# builds it once that way).
#
# Needs gcc and the SQLite headers (apt-get install -y gcc libsqlite3-dev). Extra arguments are
# passed to the program, e.g.  LoadTests/run-floor.sh -n 50000
# Data goes to a `mktemp -d` directory under $TMPDIR (default /tmp): point TMPDIR at the disk
# the server uses to measure that disk. Everything temporary is removed on exit.
set -euo pipefail

cd "$(dirname "$0")"

if ! command -v gcc >/dev/null 2>&1 || [ ! -f /usr/include/sqlite3.h ]; then
    echo "run-floor: needs gcc and the SQLite headers (/usr/include/sqlite3.h)." >&2
    echo "  install with: apt-get install -y gcc libsqlite3-dev" >&2
    exit 1
fi

if [ -n "${FLOOR_BUILD_ONLY:-}" ]; then
    gcc -O2 -Wall -Wextra -o "$FLOOR_BUILD_ONLY" floor/floor.c -lsqlite3
    exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/data"

gcc -O2 -Wall -Wextra -o "$work/floor" floor/floor.c -lsqlite3
"$work/floor" -d "$work/data" "$@"
