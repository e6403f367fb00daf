#!/usr/bin/env bash
# Checks deploy/cluster/haproxy.cfg.template as deploy/cluster/cluster.sh fills it (three processes, PROXY v2) with
# `haproxy -c`: the recipe's configuration must be one HAProxy accepts. Cheap (no process started, nothing
# listens). Without haproxy it says SKIPPED loudly, or fails under CI=true (CI installs it: install-deps.sh --test).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HAPROXY=$(command -v haproxy || true)
[ -n "$HAPROXY" ] || { [ -x /usr/sbin/haproxy ] && HAPROXY=/usr/sbin/haproxy; } || true
if [ -z "$HAPROXY" ]; then
    if [ "${CI:-}" = true ]; then
        echo "haproxy-check: FAILED: haproxy is not installed (apt-get install -y haproxy)" >&2
        exit 1
    fi
    echo "haproxy-check: SKIPPED *** haproxy is not installed: the cluster recipe's configuration was NOT checked ***" >&2
    exit 0
fi
CONFIG=$(mktemp /tmp/spotter-haproxy-check.XXXXXX)
trap 'rm -f "$CONFIG"' EXIT
servers=""
for k in 1 2 3; do servers+="    server spotter-$k 127.0.0.1:$((8080 + k)) check send-proxy-v2"$'\n'; done
# The placeholders are filled on every line but comments, as cluster.sh does.
while IFS= read -r line || [ -n "$line" ]; do
    if [[ ! "$line" =~ ^[[:space:]]*# ]]; then
        line=${line//@BIND@/127.0.0.1}
        line=${line//@PORT@/8080}
        line=${line//@SERVERS@/"${servers%$'\n'}"}
    fi
    printf '%s\n' "$line"
done <"$ROOT/deploy/cluster/haproxy.cfg.template" >"$CONFIG"
"$HAPROXY" -c -f "$CONFIG" >/dev/null 2>&1 || { "$HAPROXY" -c -f "$CONFIG" >&2 || true; echo "haproxy-check: FAILED" >&2; exit 1; }
echo "haproxy-check: $("$HAPROXY" -v | awk 'NR==1 {print $3}') accepts deploy/cluster/haproxy.cfg.template"
