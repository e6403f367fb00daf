#!/usr/bin/env bash
# Starts Spotter the way the README promises: installs missing system
# packages, builds in release mode, and serves on 127.0.0.1:8080 with its
# SQLite data under ./data/. Extra arguments go to `spotter serve`
# (e.g. --port 9000, --log-level debug); SPOTTER_* variables work too.
set -euo pipefail
cd "$(dirname "$0")/.."

deploy/install-deps.sh
swift build -c release --product spotter
exec .build/release/spotter serve --host "${SPOTTER_HOST:-127.0.0.1}" --port "${SPOTTER_PORT:-8080}" \
    --data-dir "${SPOTTER_DATA_DIR:-./data}" "$@"
