#!/usr/bin/env bash
# The sign-up storm benchmark (issue 9, item 4): how much a storm of password
# hashes slows everyone else's reads. Starts the given spotter binary on a
# free loopback port with production hashing (scrypt logN 15), then
#   1. times SAMPLES sequential `GET /v1/me` (a database read) at rest;
#   2. starts WORKERS parallel sign-up loops for STORM seconds and times
#      SAMPLES more `GET /v1/me` meanwhile, 50 ms apart;
# and prints p50/p90/p99/max of both and the sign-up answers by status.
# Bounded: it sends only to 127.0.0.1, for at most STORM seconds, and stops
# the server it started by its PID.
#
#   LoadTests/run-hash-storm.sh .build/release/spotter [extra serve flags]
set -euo pipefail
BIN=${1:?usage: run-hash-storm.sh path/to/spotter [serve flags]}
shift
WORKERS=${WORKERS:-6}
STORM=${STORM:-10}
SAMPLES=${SAMPLES:-100}
. "$(dirname "$0")/../Tests/scripts/spotter-server.sh"
DATA=$(mktemp -d /tmp/spotter-storm.XXXXXX)
trap 'spotter_stop; rm -rf "$DATA"' EXIT
spotter_start "$BIN" "$DATA" --log-level error "$@"
B="http://127.0.0.1:$PORT"

TOKEN=$(curl -fsS -X POST "$B/v1/auth/signup" -d '{"role":"client","full_name":"Probe","email":"probe@storm.test","password":"secret12","password_confirmation":"secret12"}' \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')

# Prints one time_total (seconds) per line for SAMPLES calls of GET /v1/me,
# `sleep $1` apart, stopping early at the epoch second $2 if given.
probe() {
    for _ in $(seq 1 "$SAMPLES"); do
        if [ -n "${2:-}" ] && [ "$(date +%s)" -ge "$2" ]; then break; fi
        curl -s -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $TOKEN" "$B/v1/me"
        sleep "${1:-0}"
    done
}

summary() {
    python3 -c '
import sys
v = sorted(float(x) * 1000 for x in sys.stdin if x.strip())
q = lambda p: v[min(len(v) - 1, int(p * len(v)))]
print(f"{sys.argv[1]}: n={len(v)} p50={q(0.5):.1f} ms p90={q(0.9):.1f} ms p99={q(0.99):.1f} ms max={v[-1]:.1f} ms")
' "$1"
}

probe 0 | summary "GET /v1/me at rest      "

STATUS_DIR="$DATA/status"
mkdir -p "$STATUS_DIR"
END=$(( $(date +%s) + STORM ))
for w in $(seq 1 "$WORKERS"); do
    (
        n=0
        while [ "$(date +%s)" -lt "$END" ]; do
            n=$((n + 1))
            curl -s -o /dev/null -w '%{http_code}\n' -X POST "$B/v1/auth/signup" \
                -d "{\"role\":\"client\",\"full_name\":\"Storm\",\"email\":\"s$w-$n@storm.test\",\"password\":\"secret12\",\"password_confirmation\":\"secret12\"}" \
                >>"$STATUS_DIR/$w" || true
        done
    ) &
done
sleep 1
probe 0.05 "$END" | summary "GET /v1/me during storm "
wait_for_workers() { while [ "$(jobs -rp | grep -vc "^$PID\$")" -gt 0 ]; do sleep 0.2; done; }
wait_for_workers
echo "sign-ups during the storm ($WORKERS workers, $STORM s), by status: $(cat "$STATUS_DIR"/* | sort | uniq -c | awk '{printf "%s×%s ", $2, $1}')"
