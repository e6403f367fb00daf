#!/usr/bin/env python3
"""A provider's key set endpoint for the sign-in tests (IdentitySignInTests): serves the JWKS file named in argv[1]
at any path with `Cache-Control: public, max-age=<argv[2]>`, and `{"count": n}` at /count (the key set fetches so
far). Prints its port on the first line of stdout; ends when its stdin closes."""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

path, max_age = sys.argv[1], sys.argv[2]
count = 0
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        global count
        if self.path == "/count":
            with lock:
                body = json.dumps({"count": count}).encode()
            cache = "no-store"
        else:
            with lock:
                count += 1
            with open(path, "rb") as file:
                body = file.read()
            cache = f"public, max-age={max_age}, must-revalidate, no-transform"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", cache)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
