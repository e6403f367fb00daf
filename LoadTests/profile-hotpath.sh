#!/usr/bin/env bash
# Callgrind profile of the per-message hot path (issue 33 item 1): one `spotter serve` under
# `valgrind --tool=callgrind`, a bounded `spotter-load chat` run against it, instructions collected only during
# the generator's measured window (callgrind_control -i on/off), one file per thread. Instruction counts are
# repeatable on a loaded machine where wall-clock figures are not. Writes the callgrind files and the
# generator's result under OUT (default /tmp/hotpath-profile) and prints the top inclusive costs of the loop
# thread per `message.send` (the count of AppSocket.sendMessage calls in the window).
#
#   LoadTests/profile-hotpath.sh [SERVER_BIN] [LOAD_BIN]
#   PAIRS [100] RATE [30] WARMUP [3] DURATION [10] OUT [/tmp/hotpath-profile] TOP [40]
#
# The server starts under callgrind as callgrind-server.sh says (a copy without debug sections: valgrind 3.19
# cannot read Swift 6.3's DWARF).
set -euo pipefail
cd "$(dirname "$0")/.."
SERVER_SRC=${1:-.build/release/spotter}
LOAD=${2:-.build/release/spotter-load}
PAIRS=${PAIRS:-100}
RATE=${RATE:-30}
WARMUP=${WARMUP:-3}
DURATION=${DURATION:-10}
OUT=${OUT:-/tmp/hotpath-profile}
TOP=${TOP:-40}

IDLE_TIMEOUT=120
source LoadTests/callgrind-server.sh
SPOTTER_LOAD_ADMIN_PASSWORD="$PASSWORD" "$LOAD" chat --port "$PORT" --server-pids "$PID" \
    --admin-email admin@load.test --pairs "$PAIRS" --rate "$RATE" --warmup "$WARMUP" --duration "$DURATION" \
    --connect-timeout 60 --json "$OUT/chat.json" >"$OUT/chat.out" 2>"$OUT/chat.progress" &
GEN=$!
# The window: from the end of the warm-up to "window over".
until grep -q "^.*chat: .* msgs/s" "$OUT/chat.progress" 2>/dev/null; do
    kill -0 $GEN 2>/dev/null || break
    sleep 0.2
done
sleep "$WARMUP"
callgrind_control -i on "$PID" >/dev/null
until grep -q "window over" "$OUT/chat.progress" 2>/dev/null; do
    kill -0 $GEN 2>/dev/null || break
    sleep 0.2
done
callgrind_control -i off "$PID" >/dev/null
callgrind_control -d "$PID" >/dev/null
wait $GEN || echo "spotter-load exited with $? (see $OUT/chat.out)"
kill $PID
wait $PID 2>/dev/null || true
trap - EXIT
echo "load after: $(cat /proc/loadavg)" | tee -a "$OUT/loadavg"
grep -E "acked|delivered|lost|errors|server CPU" "$OUT/chat.out" | head -12 || true
echo
# The dump made by `callgrind_control -d` holds the window (instrumentation was off before and after); thread 1
# is the loop. Per send: inclusive instructions divided by the calls of AppSocket.sendMessage.
for file in "$OUT"/callgrind.out.*.1-*; do
    total=$(callgrind_annotate "$file" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    [ "${total:-0}" = 0 ] || echo "$file: $total instructions"
done
LOOP=$(ls "$OUT"/callgrind.out.*.1-01)
callgrind_annotate --inclusive=yes --tree=calling "$LOOP" 2>/dev/null | swift demangle --simplified > "$OUT/loop-tree.txt"
python3 LoadTests/hotpath-summary.py "$OUT/loop-tree.txt" "$TOP" | tee "$OUT/summary.txt"
