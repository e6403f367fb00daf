#!/usr/bin/env bash
# Runs Autobahn|Testsuite cases 1-10 (everything but the permessage-deflate
# groups 12 and 13, which Spotter does not negotiate) against the echo
# endpoint of the given spotter binary, and fails on any FAILED case.
#
# With CONFORMANCE_TLS=1 the server speaks TLS (a certificate from a CA made for
# the run) and wstest, which speaks ws:// only, goes through tls-relay.py, a
# plaintext-to-TLS relay on loopback: every case then crosses Spotter's TLS layer.
#
# The suite lives in ../shared/tools/autobahn beside this repository (or
# AUTOBAHN_TOOL); its Python venv and reports go under .build/ so the
# shared folder may stay read-only.
set -euo pipefail
BIN=${1:?usage: conformance.sh path/to/spotter}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOL=${AUTOBAHN_TOOL:-$ROOT/../shared/tools/autobahn}
if [ ! -x "$TOOL/run.sh" ]; then
    # Users clone the repo without ../shared; CI (CI=true, set by .ci/run) must have it.
    if [ "${CI:-}" = "true" ]; then
        echo "conformance: Autobahn tool not found at $TOOL (set AUTOBAHN_TOOL); required in CI" >&2
        exit 1
    fi
    echo "############################################################" >&2
    echo "## conformance: SKIPPED - Autobahn|Testsuite not found at" >&2
    echo "##   $TOOL" >&2
    echo "## (set AUTOBAHN_TOOL to run it; CI requires it)" >&2
    echo "############################################################" >&2
    echo "conformance: autobahn: 0 passed (SKIPPED)"
    exit 0
fi
export AUTOBAHN_VENV=${AUTOBAHN_VENV:-$ROOT/.build/autobahn-venv}
export AUTOBAHN_REPORTS=${AUTOBAHN_REPORTS:-$ROOT/.build/autobahn-reports}
export AUTOBAHN_TIMEOUT=${AUTOBAHN_TIMEOUT:-900}

if [ ! -x "$AUTOBAHN_VENV/bin/wstest" ]; then
    echo "conformance: setting up the suite in $AUTOBAHN_VENV"
    "$TOOL/setup.sh"
fi

. "$(dirname "$0")/spotter-server.sh"
DATA=$(mktemp -d /tmp/spotter-autobahn.XXXXXX)
trap 'spotter_stop; rm -rf "$DATA"' EXIT
# Autobahn's 9.x cases send messages up to 16 MiB: raise the limits for this run only.
LIMITS=(--echo --log-level warning --max-message-bytes 16777216 --max-outbound-bytes 67108864)
TARGET_PORT=""
if [ "${CONFORMANCE_TLS:-}" = "1" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$DATA/ca.key" -out "$DATA/ca.pem" \
        -days 2 -subj "/CN=Spotter conformance CA" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$DATA/server.key" -out "$DATA/server.csr" \
        -subj "/CN=localhost" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$DATA/ext.cnf"
    openssl x509 -req -in "$DATA/server.csr" -CA "$DATA/ca.pem" -CAkey "$DATA/ca.key" -set_serial 1 -days 2 \
        -out "$DATA/server.pem" -extfile "$DATA/ext.cnf" 2>/dev/null
    export SPOTTER_CACERT="$DATA/ca.pem"
    spotter_start "$BIN" "$DATA" "${LIMITS[@]}" --tls-cert "$DATA/server.pem" --tls-key "$DATA/server.key"
    TARGET_PORT=$("$(dirname "$0")/free-port.sh")
    python3 "$(dirname "$0")/tls-relay.py" "$TARGET_PORT" "$PORT" "$DATA/ca.pem" >"$DATA/relay.out" 2>&1 &
    RELAY=$!
    trap 'kill "$RELAY" 2>/dev/null; spotter_stop; rm -rf "$DATA"' EXIT
    for _ in $(seq 1 50); do grep -q ready "$DATA/relay.out" 2>/dev/null && break; sleep 0.1; done
    echo "conformance: over TLS (wss://127.0.0.1:$PORT/echo through a relay on $TARGET_PORT)"
else
    spotter_start "$BIN" "$DATA" "${LIMITS[@]}"
    TARGET_PORT=$PORT
fi

set +e
"$TOOL/run.sh" "ws://127.0.0.1:$TARGET_PORT/echo" | tee "$DATA/autobahn.out"
status=${PIPESTATUS[0]}
set -e
summary=$(grep '^autobahn: [0-9]* passed' "$DATA/autobahn.out" || true)
if [ "$status" -ne 0 ] || [ -z "$summary" ]; then
    echo "conformance: FAILED (run.sh status $status)" >&2
    exit 1
fi
echo "conformance: $summary"
