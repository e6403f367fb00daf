#!/usr/bin/env python3
"""A webhook receiver for the tests (issue 29), over HTTP or (--tls-cert, --tls-key) HTTPS: 127.0.0.1 only, one per test, stopped when its stdin closes.

It checks every delivery's signature with the documented example (Protocol/examples/webhooks/verify.py: Python's
hmac, nothing of the server's), and records what came. Prints {"port": N} once listening.

Control (the test's, not the server's):
  POST /_config {"secrets": [...], "status": 200, "delay": 0}  secrets to check with; the status to answer with;
                                                              seconds to wait before answering
  GET  /_log                                                  every delivery so far, in arrival order
Any other POST is a delivery: answered with the configured status (503 until a secret is configured).
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Protocol", "examples", "webhooks"))
from verify import verify  # noqa: E402

state = {"secrets": [], "status": 503, "delay": 0.0}
log = []
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/_log":
            with lock:
                body = json.dumps(log).encode()
            return self.reply(200, body)
        self.reply(404)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/_config":
            with lock:
                state.update(json.loads(body))
            return self.reply(204)
        with lock:
            secrets, status, delay = list(state["secrets"]), state["status"] if state["secrets"] else 503, state["delay"]
        header = self.headers.get("Spotter-Signature", "")
        entry = {
            "path": self.path,
            "event_id": self.headers.get("Spotter-Event-Id"),
            "event_type": self.headers.get("Spotter-Event-Type"),
            "content_type": self.headers.get("Content-Type"),
            "signature": header,
            "verified": any(verify(secret, header, body) for secret in secrets),
            "body": body.decode("utf-8", "replace"),
            "answered": status,
            "at": time.time(),
        }
        with lock:
            log.append(entry)
        if delay:
            time.sleep(delay)
        self.reply(status, b"{}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-seconds", type=float, default=600)
    parser.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM) and --tls-key")
    parser.add_argument("--tls-key")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if args.tls_cert:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    # Ends when the test closes our stdin (or dies), or after --max-seconds.
    watcher = threading.Thread(target=lambda: sys.stdin.read(), daemon=True)
    watcher.start()
    watcher.join(args.max_seconds)
    server.shutdown()


if __name__ == "__main__":
    main()
