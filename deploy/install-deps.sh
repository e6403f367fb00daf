#!/usr/bin/env bash
# Installs the system libraries Spotter builds against, if any is missing:
# libuv, OpenSSL and SQLite development files, pkg-config to find them,
# tzdata (session times in each user's time zone) and libcurl (SMS gateway);
# libpq and libnats (the cluster engines: PostgreSQL store, NATS broker);
# libcurl's development files with HTTP/2 (the push providers: APNs, FCM, Web Push);
# libjpeg-turbo and libpng (thumbnails of image attachments and avatars).
# With --test, also what the test suite drives: Node.js (the JavaScript client's
# tests) and Chromium with its driver (the console's browser test).
# Debian 12; runs apt-get as root, or through sudo when not root.
set -euo pipefail

missing=()
if [ "${1:-}" = "--test" ]; then
    command -v node >/dev/null 2>&1 || missing+=(nodejs)
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
    # The cluster suite starts its own PostgreSQL (initdb, pg_ctl) and NATS server in a temp directory.
    [ -x /usr/lib/postgresql/15/bin/initdb ] || missing+=(postgresql)
    command -v nats-server >/dev/null 2>&1 || missing+=(nats-server)
    # The cluster recipe's HAProxy configuration is checked with `haproxy -c` (Tests/scripts/haproxy-check.sh).
    [ -x /usr/sbin/haproxy ] || command -v haproxy >/dev/null 2>&1 || missing+=(haproxy)
fi
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
for pair in libuv:libuv1-dev openssl:libssl-dev sqlite3:libsqlite3-dev libpq:libpq-dev libnats:libnats-dev \
            libcurl:libcurl4-openssl-dev libjpeg:libjpeg62-turbo-dev libpng:libpng-dev; do
    module=${pair%%:*}
    package=${pair##*:}
    if ! pkg-config --exists "$module" 2>/dev/null; then missing+=("$package"); fi
done
command -v curl >/dev/null 2>&1 || missing+=(curl)
# libcurl: Foundation's networking (the SMS gateway sender) loads it at run time.
compgen -G '/usr/lib/*/libcurl.so.4' >/dev/null || compgen -G '/lib/*/libcurl.so.4' >/dev/null || missing+=(libcurl4)
# The IANA time zone database: session times are shown in each user's zone.
[ -e /usr/share/zoneinfo/America/New_York ] || missing+=(tzdata)

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "install-deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q "${missing[@]}"
