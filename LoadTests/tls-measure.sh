#!/usr/bin/env bash
# Rough TLS costs of a spotter binary (issue 31): full and resumed handshakes per second with
# `openssl s_time` (one client process: the client's own handshake work is in the number), and the
# resident memory an upgraded, idle wss:// socket adds (RSS with 200 open, then with 2200), beside the
# same for ws:// on the same binary.  Usage: LoadTests/tls-measure.sh path/to/spotter [SECONDS]
set -euo pipefail
BIN=${1:?usage: tls-measure.sh path/to/spotter [seconds]}
SECONDS_EACH=${2:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../Tests/scripts/spotter-server.sh"
DATA=$(mktemp -d /tmp/spotter-tls-measure.XXXXXX)
trap 'spotter_stop; rm -rf "$DATA"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$DATA/key.pem" -out "$DATA/cert.pem" \
    -days 1 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null

cat >"$DATA/hold.py" <<'PY'
import asyncio, ssl, sys
port, n, cafile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ctx = None
if cafile != "-":
    ctx = ssl.create_default_context(cafile=cafile)
async def one():
    r, w = await asyncio.open_connection("127.0.0.1", port, ssl=ctx, server_hostname="localhost" if ctx else None)
    w.write(b"GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    await r.readuntil(b"\r\n\r\n")
    return w
async def main():
    held = []
    for _ in range(0, n, 100):
        held += await asyncio.gather(*[one() for _ in range(100)])
    print("open", len(held), flush=True)
    await asyncio.sleep(3600)
asyncio.run(main())
PY

rss() { awk '/VmRSS/ {print $2}' "/proc/$PID/status"; }

per_socket() {  # $1: CA file or "-" for plain
    python3 "$DATA/hold.py" "$PORT" 200 "$1" >"$DATA/a.out" 2>&1 & local a=$!
    for _ in $(seq 1 300); do grep -q open "$DATA/a.out" && break; sleep 0.1; done
    sleep 1; local before; before=$(rss)
    python3 "$DATA/hold.py" "$PORT" 2000 "$1" >"$DATA/b.out" 2>&1 & local b=$!
    for _ in $(seq 1 600); do grep -q open "$DATA/b.out" && break; sleep 0.1; done
    sleep 1; local after; after=$(rss)
    kill "$a" "$b"; wait "$a" "$b" 2>/dev/null || true
    echo "RSS $before kB with 200 sockets, $after kB with 2200: $(( (after - before) * 1024 / 2000 )) bytes per socket"
}

spotter_start "$BIN" "$DATA" --echo --log-level warning --max-http-connections 8192
echo "ws:// (plain): $(per_socket -)"
spotter_stop

export SPOTTER_CACERT="$DATA/cert.pem"
spotter_start "$BIN" "$DATA" --echo --log-level warning --max-http-connections 8192 --tls-cert "$DATA/cert.pem" --tls-key "$DATA/key.pem"
echo "full handshakes:    $(openssl s_time -connect 127.0.0.1:$PORT -new -time "$SECONDS_EACH" 2>/dev/null | grep 'real seconds')"
echo "resumed handshakes: $(openssl s_time -connect 127.0.0.1:$PORT -reuse -time "$SECONDS_EACH" 2>/dev/null | grep 'real seconds')"
echo "wss:// (TLS 1.3): $(per_socket "$DATA/cert.pem")"
