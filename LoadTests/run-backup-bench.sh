#!/usr/bin/env bash
# How long `spotter admin backup` holds up the writer of a live SQLite database.
#
# Makes a data directory (`spotter migrate`) and grows it with filler rows to SIZE_MB, then a writer (Python's
# sqlite3, WAL, synchronous=FULL like the server's) commits one small row at a time for the whole run, first
# alone, then while `spotter admin backup` copies the database. Prints the writer's commit latencies (p50, p99,
# max) alone and during the backup, the backup's own line, and the WAL's size at the end of the backup.
# Everything stays in a temporary directory that is removed at the end.
#
#   LoadTests/run-backup-bench.sh [SIZE_MB=256] [PAGES_PER_STEP=1024] [STEP_PAUSE_MS=1]
#   SPOTTER_BIN=.build/release/spotter LoadTests/run-backup-bench.sh 1024
set -euo pipefail
SIZE_MB=${1:-256}
PAGES=${2:-1024}
PAUSE=${3:-1}
BIN=${SPOTTER_BIN:-.build/debug/spotter}
WORK=$(mktemp -d /tmp/spotter-backup-bench.XXXXXX)
trap 'kill "${WRITER:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
"$BIN" migrate --data-dir "$WORK/data" --log-level error >/dev/null
python3 "$(dirname "$0")/backup/writer.py" fill "$WORK/data/spotter.sqlite" "$SIZE_MB"
python3 "$(dirname "$0")/backup/writer.py" write "$WORK/data/spotter.sqlite" "$WORK/latencies" &
WRITER=$!
sleep 3
date +%s.%N > "$WORK/backup-start"
"$BIN" admin backup --data-dir "$WORK/data" --output "$WORK/copy" --pages-per-step "$PAGES" --step-pause "$PAUSE"
date +%s.%N > "$WORK/backup-end"
WAL=$(stat -c %s "$WORK/data/spotter.sqlite-wal" 2>/dev/null || echo 0)
sleep 3
kill "$WRITER"; wait "$WRITER" 2>/dev/null || true
echo "database $(stat -c %s "$WORK/data/spotter.sqlite") bytes, copy $(stat -c %s "$WORK/copy/spotter.sqlite") bytes, WAL at the backup's end $WAL bytes"
python3 "$(dirname "$0")/backup/writer.py" report "$WORK/latencies" "$(cat "$WORK/backup-start")" "$(cat "$WORK/backup-end")"
