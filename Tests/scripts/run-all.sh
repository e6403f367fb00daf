#!/usr/bin/env bash
# The whole test suite, as the README promises and CI runs it:
#   1. unit and integration tests (swift test: codec, loop, live server),
#   2. a smoke test of the release binary: /healthz, then SIGTERM -> exit 0,
#   3. the Autobahn|Testsuite conformance run, cases 1-10, 0 failures allowed.
# Exits non-zero at the first failing step.
set -euo pipefail
cd "$(dirname "$0")/../.."

deploy/install-deps.sh

echo "== swift test"
swift build --build-tests
swift test --skip-build

echo "== release build"
swift build -c release

echo "== smoke: healthz and SIGTERM"
Tests/scripts/smoke.sh .build/release/spotter

echo "== conformance: Autobahn|Testsuite 1-10"
Tests/scripts/conformance.sh .build/release/spotter

echo "run-all: every step passed"
