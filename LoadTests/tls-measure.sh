#!/usr/bin/env bash
# Rough TLS costs of a spotter binary (issue 31): full and resumed handshakes per second with
# `openssl s_time` (one client process: the client's own handshake work is in the number), and the
# resident memory an upgraded, idle wss:// socket adds (RSS with 200 open, then with 2200), beside the
# same for ws:// on the same binary. Then, in the same sitting, the same two measures with HAProxy (2.6,
# Debian's) terminating TLS in front of a plain Spotter, as deploy/cluster's recipe could: handshakes/s through
# HAProxy, and the RSS of HAProxy plus Spotter per idle wss:// socket. HAProxy runs with one thread (`nbthread 1`:
# the CPU Spotter's one loop thread has) and sends PROXY v2 as the recipe does. Missing haproxy: that half says
# SKIPPED. Everything on 127.0.0.1, bounded (2200 sockets, SECONDS per handshake run); only what it started is
# stopped.  Usage: LoadTests/tls-measure.sh path/to/spotter [SECONDS]
set -euo pipefail
BIN=${1:?usage: tls-measure.sh path/to/spotter [seconds]}
SECONDS_EACH=${2:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../Tests/scripts/spotter-server.sh"
DATA=$(mktemp -d /tmp/spotter-tls-measure.XXXXXX)
HAPROXY_PID=""
trap '[ -z "$HAPROXY_PID" ] || kill "$HAPROXY_PID" 2>/dev/null; spotter_stop; rm -rf "$DATA"' EXIT
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

# The resident memory (kB) of the server's processes: Spotter, and HAProxy when it is in front.
rss() { local total=0 p; for p in $PID $HAPROXY_PID; do total=$(( total + $(awk '/VmRSS/ {print $2}' "/proc/$p/status") )); done; echo "$total"; }

per_socket() {  # $1: CA file or "-" for plain
    python3 "$DATA/hold.py" "$PORT" 200 "$1" >"$DATA/a.out" 2>&1 & local a=$!
    for _ in $(seq 1 300); do grep -q open "$DATA/a.out" && break; kill -0 "$a" 2>/dev/null || break; sleep 0.1; done
    sleep 1; local before; before=$(rss)
    python3 "$DATA/hold.py" "$PORT" 2000 "$1" >"$DATA/b.out" 2>&1 & local b=$!
    for _ in $(seq 1 1200); do grep -q open "$DATA/b.out" && break; kill -0 "$b" 2>/dev/null || break; sleep 0.1; done
    sleep 1; local after; after=$(rss)
    kill "$a" "$b"; wait "$a" "$b" 2>/dev/null || true
    if ! grep -q "open 200" "$DATA/a.out" || ! grep -q "open 2000" "$DATA/b.out"; then
        echo "INCOMPLETE (not every socket opened: $(tail -n 1 "$DATA/a.out") / $(tail -n 1 "$DATA/b.out"))"
        return
    fi
    echo "RSS $before kB with 200 sockets, $after kB with 2200: $(( (after - before) * 1024 / 2000 )) bytes per socket ($(( (after - before) * 1024 / 2 )) per 1,000)"
}

spotter_start "$BIN" "$DATA" --echo --log-level warning --max-http-connections 8192
echo "ws:// (plain): $(per_socket -)"
spotter_stop

export SPOTTER_CACERT="$DATA/cert.pem"
spotter_start "$BIN" "$DATA" --echo --log-level warning --max-http-connections 8192 --tls-cert "$DATA/cert.pem" --tls-key "$DATA/key.pem"
echo "full handshakes:    $(openssl s_time -connect 127.0.0.1:$PORT -new -time "$SECONDS_EACH" 2>/dev/null | grep 'real seconds')"
echo "resumed handshakes: $(openssl s_time -connect 127.0.0.1:$PORT -reuse -time "$SECONDS_EACH" 2>/dev/null | grep 'real seconds')"
echo "wss:// (TLS 1.3): $(per_socket "$DATA/cert.pem")"
spotter_stop
unset SPOTTER_CACERT

# HAProxy terminating TLS in front of a plain Spotter that trusts it for the PROXY v2 header.
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
if [ ! -x "$HAPROXY" ]; then
    echo "HAProxy in front: SKIPPED (no haproxy; apt-get install -y haproxy)"
    exit 0
fi
cat "$DATA/cert.pem" "$DATA/key.pem" >"$DATA/haproxy.pem"
spotter_start "$BIN" "$DATA" --echo --log-level warning --max-http-connections 8192 --trusted-proxy 127.0.0.1/32
FRONT=$("$HERE/../Tests/scripts/free-port.sh")
cat >"$DATA/haproxy.cfg" <<CFG
global
    nbthread 1
    # 2200 client sockets and as many to Spotter: within a 20,000 open-file limit (HAProxy refuses to start when
    # maxconn needs more than it may raise its limit to).
    maxconn 4096
defaults
    mode http
    timeout connect 5s
    timeout client 75s
    timeout server 75s
    timeout tunnel 1h
frontend tls
    bind 127.0.0.1:$FRONT ssl crt $DATA/haproxy.pem alpn http/1.1
    default_backend spotter
backend spotter
    server spotter 127.0.0.1:$PORT send-proxy-v2
CFG
"$HAPROXY" -c -q -f "$DATA/haproxy.cfg"
"$HAPROXY" -db -f "$DATA/haproxy.cfg" >"$DATA/haproxy.log" 2>&1 &
HAPROXY_PID=$!
for _ in $(seq 1 100); do
    curl -fsS --cacert "$DATA/cert.pem" "https://127.0.0.1:$FRONT/healthz" >/dev/null 2>&1 && break
    kill -0 "$HAPROXY_PID" 2>/dev/null || { cat "$DATA/haproxy.log" >&2; echo "HAProxy exited early" >&2; exit 1; }
    sleep 0.1
done
SPOTTER_PORT=$PORT PORT=$FRONT
echo "HAProxy $("$HAPROXY" -v | awk 'NR==1 {print $3}') full handshakes:    $(openssl s_time -connect 127.0.0.1:$PORT -new -time "$SECONDS_EACH" 2>/dev/null | grep 'real seconds')"
echo "HAProxy resumed handshakes: $(openssl s_time -connect 127.0.0.1:$PORT -reuse -time "$SECONDS_EACH" 2>/dev/null | grep 'real seconds')"
echo "wss:// through HAProxy (RSS of HAProxy + Spotter): $(per_socket "$DATA/cert.pem")"
kill "$HAPROXY_PID" 2>/dev/null || true
wait "$HAPROXY_PID" 2>/dev/null || true
HAPROXY_PID=""
PORT=$SPOTTER_PORT
