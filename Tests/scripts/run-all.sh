#!/usr/bin/env bash
# The whole test suite, as the README promises and CI runs it:
#   1. unit and integration tests (swift test: codec, loop, live server),
#   2. a smoke test of the release binary: /healthz, then SIGTERM -> exit 0,
#   3. the Autobahn|Testsuite conformance run, cases 1-10, 0 failures allowed,
#   4. libFuzzer, 60 s on each of the three parser targets (Tests/Fuzz/README.md),
#   5. the JavaScript client against a live server, and the console's modules linked (Node's test runner, Tests/js),
#   6. the web console in headless Chromium (Tests/browser),
#   7. the server's suites again with everything kept in PostgreSQL (cluster mode's store), on a
#      throwaway cluster the tests start themselves (initdb/pg_ctl; postgresql from install-deps).
#   8. the socket suites once more with app sockets on a second event loop (SPOTTER_TEST_LOOPS=2),
#   9. the conformance and property suites on three processes (SPOTTER_TEST_CLUSTER=3: every test server a cluster
#      of three nodes on one PostgreSQL and its own NATS, each connection to the next node).
# Exits non-zero at the first failing step.
set -euo pipefail
cd "$(dirname "$0")/../.."

deploy/install-deps.sh --test

LOG=$(mktemp /tmp/spotter-tests.XXXXXX)
# The suites step 9 runs on three processes (Tests/TestSupport/TestCluster.swift: SPOTTER_TEST_CLUSTER).
# (2026-11-27 census: which others pass and why the rest do not, Sources/SpotterPostgres/CLUSTER.md.)
CLUSTER_SUITES='ProtocolTranscriptTests|MessagingTests|CommandExecutionFuzzTests|SessionsTests|SessionLimitsTests|NumbersAtTheEdgeTests|AuthorizationMatrixTests|ReplyFrameTests|EventFrameTests|EventBytesTests|PagingTests|AppSocketTests'
trap 'rm -f "$LOG"' EXIT

echo "== swift test"
swift build --build-tests
rm -rf .build/schema-samples  # written afresh by the transcript replay
swift test --skip-build --skip SpotterClientTests 2>&1 | tee "$LOG"
swift_tests=$(grep -oE 'Test run with [0-9]+ tests? in [0-9]+ suites? passed' "$LOG" | grep -oE '[0-9]+' | head -1)
[ -n "$swift_tests" ] || { echo "run-all: swift test reported no passing run" >&2; exit 1; }

# SpotterClient's tests are async (the client is an actor); in the same process as the blocking suites above they
# wait for the cooperative pool's threads (two on a 2-core machine), which those suites hold for seconds at a time,
# and time out (seen: 9 of 24 under the full run, none on their own). So they run as a second process.
echo "== the Swift client's suites (SpotterClient against a live server), on their own"
swift test --skip-build --filter SpotterClientTests 2>&1 | tee "$LOG.client"
client_tests=$(grep -oE 'Test run with [0-9]+ tests? in [0-9]+ suites? passed' "$LOG.client" | grep -oE '[0-9]+' | head -1)
rm -f "$LOG.client"
[ -n "$client_tests" ] || { echo "run-all: the Swift client's tests reported no passing run" >&2; exit 1; }
swift_tests=$((swift_tests + client_tests))

echo "== the server's suites again, everything kept in PostgreSQL (SPOTTER_TEST_STORE=postgres)"
SPOTTER_TEST_STORE=postgres swift test --skip-build --filter SpotterServerTests 2>&1 | tee "$LOG.pg"
pg_tests=$(grep -oE 'Test run with [0-9]+ tests? in [0-9]+ suites? passed' "$LOG.pg" | grep -oE '[0-9]+' | head -1)
rm -f "$LOG.pg"
[ -n "$pg_tests" ] || { echo "run-all: the PostgreSQL pass reported no passing run" >&2; exit 1; }

echo "== the socket suites again with app sockets on a second loop (SPOTTER_TEST_LOOPS=2, serve --loops 2)"
SPOTTER_TEST_LOOPS=2 swift test --skip-build --filter \
    'ProtocolTranscriptTests|MessagingTests|AppSocketTests|SessionsTests|LivenessTests|AccountOutboundTests|CommandExecutionFuzzTests|SocketLoopsTests' \
    2>&1 | tee "$LOG.loops"
loops_tests=$(grep -oE 'Test run with [0-9]+ tests? in [0-9]+ suites? passed' "$LOG.loops" | grep -oE '[0-9]+' | head -1)
rm -f "$LOG.loops"
[ -n "$loops_tests" ] || { echo "run-all: the two-loop pass reported no passing run" >&2; exit 1; }

echo "== Protocol/ schemas against what the server said in the transcripts"
python3 -c 'import jsonschema, referencing, yaml, openapi_spec_validator' 2>/dev/null \
    || python3 -m pip install -q jsonschema pyyaml openapi-spec-validator
python3 Tests/scripts/validate-schemas.py .build/schema-samples

echo "== the conformance and property suites on three processes (SPOTTER_TEST_CLUSTER=3)"
SPOTTER_TEST_CLUSTER=3 swift test --skip-build --filter "$CLUSTER_SUITES" 2>&1 | tee "$LOG.cluster"
cluster_tests=$(grep -oE 'Test run with [0-9]+ tests? in [0-9]+ suites? passed' "$LOG.cluster" | grep -oE '[0-9]+' | head -1)
rm -f "$LOG.cluster"
[ -n "$cluster_tests" ] || { echo "run-all: the three-process pass reported no passing run" >&2; exit 1; }

echo "== the JavaScript client against a live server (node --test)"
SPOTTER_BIN=.build/debug/spotter node --test Tests/js/client.test.js Tests/js/availability.test.js 2>&1 | tee -a "$LOG"
js_passed=$(grep -oE '^# pass [0-9]+' "$LOG" | grep -oE '[0-9]+' | tail -1)
grep -qE '^# fail 0$' "$LOG" || { echo "run-all: JavaScript client tests failed" >&2; exit 1; }

echo "== the console's ES modules link, its /metrics reading, its push service worker (node --test)"
node --experimental-vm-modules --test Tests/js/console.test.js Tests/js/push-worker.test.js 2>&1 | tee "$LOG.console"
console_passed=$(grep -oE '^# pass [0-9]+' "$LOG.console" | grep -oE '[0-9]+' | tail -1)
grep -qE '^# fail 0$' "$LOG.console" || { rm -f "$LOG.console"; echo "run-all: console module tests failed" >&2; exit 1; }
rm -f "$LOG.console"
js_passed=$((js_passed + console_passed))

echo "== release build"
swift build -c release

echo "== the console in headless Chromium"
python3 -c 'import selenium' 2>/dev/null || python3 -m pip install -q selenium
python3 Tests/browser/console_test.py .build/release/spotter 2>&1 | tee -a "$LOG"
browser_passed=$(grep -oE '^browser: [0-9]+ passed' "$LOG" | grep -oE '[0-9]+' | tail -1)
[ -n "$browser_passed" ] || { echo "run-all: the browser test reported no result" >&2; exit 1; }

echo "== fuzz: 60 s per target"
FUZZ_SECONDS=60 Tests/scripts/fuzz.sh | tee -a "$LOG"
fuzz_passed=$(grep -oE '^fuzz: [0-9]+ passed' "$LOG" | grep -oE '[0-9]+' | tail -1)

echo "== the cluster recipe's HAProxy configuration (haproxy -c)"
Tests/scripts/haproxy-check.sh

echo "== smoke: healthz and SIGTERM"
Tests/scripts/smoke.sh .build/release/spotter

echo "== conformance: Autobahn|Testsuite 1-10"
Tests/scripts/conformance.sh .build/release/spotter | tee -a "$LOG"
autobahn_passed=$(grep -oE 'conformance: autobahn: [0-9]+ passed' "$LOG" | grep -oE '[0-9]+' | head -1)

echo "== conformance over TLS: the same cases through wss://"
CONFORMANCE_TLS=1 Tests/scripts/conformance.sh .build/release/spotter | tee -a "$LOG"
autobahn_tls_passed=$(grep -oE 'conformance: autobahn: [0-9]+ passed' "$LOG" | grep -oE '[0-9]+' | sed -n 2p)
autobahn_passed=$((autobahn_passed + ${autobahn_tls_passed:-0}))

echo "run-all: every step passed (swift test: $swift_tests, on PostgreSQL: $pg_tests, on two loops: $loops_tests, on three processes: $cluster_tests, schema check: 1, JavaScript client: $js_passed, browser: $browser_passed, smoke: 1, autobahn cases (ws:// and wss://): $autobahn_passed, fuzz targets: $fuzz_passed)"
echo "total: $((swift_tests + pg_tests + loops_tests + cluster_tests + 2 + js_passed + browser_passed + autobahn_passed + fuzz_passed)) passed, 0 failed"
