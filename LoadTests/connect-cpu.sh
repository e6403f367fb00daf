#!/usr/bin/env bash
# Server CPU per connect + authenticate (issue 33: "≥ 10,000 sockets/s"), less tied to the machine's load than the
# rate: one `spotter serve` (no valgrind), `spotter-load idle --provision-to` first, then the server's user+system
# CPU ticks (/proc/PID/stat, every thread) read just before and just after `spotter-load idle --accounts-file`
# connects SOCKETS sockets. Prints one line: CPU µs per connect (user and system), the generator's rate, p50/p99
# connect→hello. The ticks are 10 ms: with 10,000 sockets one tick is 1 µs per connect.
#
#   LoadTests/connect-cpu.sh SERVER_BIN LOAD_BIN        SOCKETS [10000]
set -euo pipefail
SERVER=$1
LOAD=$2
SOCKETS=${SOCKETS:-10000}
WORK=$(mktemp -d /tmp/connect-cpu.XXXXXX)
PASSWORD="cpu-$RANDOM$RANDOM"
SPOTTER_ADMIN_PASSWORD="$PASSWORD" "$SERVER" admin create-admin --data-dir "$WORK" --email admin@load.test --full-name Load >/dev/null
PORT=$((20000 + RANDOM % 30000))
"$SERVER" serve --port "$PORT" --data-dir "$WORK" --log-level warning --load-test-provisioning >"$WORK/server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
    sleep 0.1
done
export SPOTTER_LOAD_ADMIN_PASSWORD="$PASSWORD"
"$LOAD" idle --port "$PORT" --admin-email admin@load.test --sockets "$SOCKETS" --provision-to "$WORK/accounts.json" >/dev/null 2>&1
ticks() { awk '{print $14 "," $15}' "/proc/$PID/stat"; }  # user,system
load=$(cut -d' ' -f1-3 /proc/loadavg)
before=$(ticks)
"$LOAD" idle --port "$PORT" --server-pid "$PID" --admin-email admin@load.test --sockets "$SOCKETS" \
    --accounts-file "$WORK/accounts.json" --hold 0 --json "$WORK/idle.json" >/dev/null 2>"$WORK/progress" &
GEN=$!
until grep -q "sockets open in" "$WORK/progress" 2>/dev/null; do
    kill -0 $GEN 2>/dev/null || break
    sleep 0.02
done
after=$(ticks)
wait $GEN || true
hz=$(getconf CLK_TCK)
python3 - "$WORK/idle.json" "$before" "$after" "$hz" "$SOCKETS" "$load" <<'EOF'
import json, sys
result = json.load(open(sys.argv[1]))["connect"]
(user0, system0), (user1, system1) = (map(int, sys.argv[i].split(",")) for i in (2, 3))
hz, sockets = int(sys.argv[4]), int(sys.argv[5])
def micros(ticks): return ticks / hz * 1e6 / sockets
print(f"server CPU {micros(user1 - user0 + system1 - system0):.1f} µs/connect (user {micros(user1 - user0):.1f}, "
      f"system {micros(system1 - system0):.1f}), rate {result['rate_per_second']:.0f}/s, "
      f"p50 {result['latency_micros']['p50'] / 1000:.1f} ms, p99 {result['latency_micros']['p99'] / 1000:.1f} ms, "
      f"{result['opened']} opened, {result['failures']} failed; load {sys.argv[6]}")
EOF
