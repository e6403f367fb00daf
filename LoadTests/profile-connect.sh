#!/usr/bin/env bash
# Callgrind profile of connect + authenticate (issue 33: "≥ 10,000 sockets/s"): one `spotter serve` under
# `valgrind --tool=callgrind`, `spotter-load idle` provisions its accounts uninstrumented, then instructions
# are collected from "connecting N sockets" to "sockets open" (callgrind_control -i on/off), one file per
# thread. Prints the loop thread's top inclusive costs per connect (the calls of AppSocket.opened in the
# window): accept → upgrade request parse → token check → 101 → hello → live. TLS off, as in the load runs.
#
#   LoadTests/profile-connect.sh [SERVER_BIN] [LOAD_BIN]
#   SOCKETS [1000] PENDING [50] OUT [/tmp/connect-profile] TOP [60]
#
# The server starts under callgrind as callgrind-server.sh says (a copy without debug sections: valgrind 3.19
# cannot read Swift 6.3's DWARF).
set -euo pipefail
cd "$(dirname "$0")/.."
SERVER_SRC=${1:-.build/release/spotter}
LOAD=${2:-.build/release/spotter-load}
SOCKETS=${SOCKETS:-1000}
PENDING=${PENDING:-50}
OUT=${OUT:-/tmp/connect-profile}
TOP=${TOP:-60}

IDLE_TIMEOUT=300
source LoadTests/callgrind-server.sh
# Provision first (uninstrumented), then connect with the accounts file, so the window holds connects only.
SPOTTER_LOAD_ADMIN_PASSWORD="$PASSWORD" "$LOAD" idle --port "$PORT" --admin-email admin@load.test \
    --sockets "$SOCKETS" --provision-to "$OUT/accounts.json" >"$OUT/provision.out" 2>&1
callgrind_control -i on "$PID" >/dev/null
SPOTTER_LOAD_ADMIN_PASSWORD="$PASSWORD" "$LOAD" idle --port "$PORT" --server-pid "$PID" \
    --admin-email admin@load.test --sockets "$SOCKETS" --accounts-file "$OUT/accounts.json" --hold 1 \
    --max-pending-connects "$PENDING" --connect-timeout 120 --json "$OUT/idle.json" >"$OUT/idle.out" 2>"$OUT/idle.progress" &
GEN=$!
until grep -q "sockets open in" "$OUT/idle.progress" 2>/dev/null; do
    kill -0 $GEN 2>/dev/null || break
    sleep 0.1
done
callgrind_control -i off "$PID" >/dev/null
callgrind_control -d "$PID" >/dev/null
wait $GEN || echo "spotter-load exited with $? (see $OUT/idle.out)"
kill $PID
wait $PID 2>/dev/null || true
trap - EXIT
echo "load after: $(cat /proc/loadavg)" | tee -a "$OUT/loadavg"
grep "sockets open" "$OUT/idle.progress" || true
for file in "$OUT"/callgrind.out.*-*; do
    total=$(callgrind_annotate "$file" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    [ "${total:-0}" = 0 ] || echo "$file: $total instructions"
done
LOOP=$(ls "$OUT"/callgrind.out.*.1-01 | head -1)
callgrind_annotate --inclusive=yes --tree=calling "$LOOP" 2>/dev/null | swift demangle --simplified > "$OUT/loop-tree.txt"
callgrind_annotate --inclusive=no "$LOOP" 2>/dev/null | swift demangle --simplified > "$OUT/loop-self.txt"
python3 LoadTests/hotpath-summary.py "$OUT/loop-tree.txt" "$TOP" --per 'AppSocket.opened(on:)' | tee "$OUT/summary.txt"
