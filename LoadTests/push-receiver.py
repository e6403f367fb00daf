#!/usr/bin/env python3
"""A Web Push service for the `notify` load scenario: HTTP/2 over TLS on 127.0.0.1 that answers 201 to every
POST /push/<id> and checks a sample in full.

Tests/scripts/push-standins.py checks and decrypts every push and keeps each one, which a Python process cannot
do thousands of times a second. Here every Nth push (--sample) goes through the stand-in's Web Push check (the
VAPID JWT verified, the headers, the aes128gcm body decrypted with the subscription's private key); the others
are only counted. For a sampled push whose body starts with 16 hex digits (spotter-load's send stamp,
CLOCK_MONOTONIC in ns, which the server puts in the body with --push-preview full) the latency send → arrival
is kept. Both clocks are the same machine's monotonic clock.

The first line on stdout is one JSON object: {"webpush": URL, "ca": CA file, "subscription": {"endpoint_base",
"p256dh", "auth"}}. Every --stats-interval seconds, and at exit, the figures go to --stats-file (JSON, written
whole and renamed): received, answered, sampled, sample_ok, sample_failures, latencies_ms (the sample's),
per_second (arrivals per wall-clock second), first_arrival/last_arrival (time.time()), cpu_seconds (this
process). Exits when stdin closes (not with --detached), on SIGTERM, or after --max-seconds. Needs the packages push-standins.py needs."""
import argparse
import asyncio
import importlib.util
import json
import os
import resource
import secrets
import shutil
import signal
import ssl
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "Tests", "scripts")
sys.path.insert(0, SCRIPTS)
try:
    import h2.config
    import h2.connection
    import h2.events
    import h2.exceptions
    import h2.settings
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from push_standin_services import WebPush
except ImportError as missing:
    print(f"push-receiver: {missing.name} is missing: python3 -m pip install --target .build/push-python "
          "h2 http_ece PyJWT cryptography", file=sys.stderr)
    sys.exit(3)

spec = importlib.util.spec_from_file_location("push_standins", os.path.join(SCRIPTS, "push-standins.py"))
standins = importlib.util.module_from_spec(spec)
spec.loader.exec_module(standins)


class Figures:
    def __init__(self, sample):
        self.sample = sample
        self.received = 0
        self.answered = 0
        self.sampled = 0
        self.sample_ok = 0
        self.sample_failures = {}
        self.latencies_ms = []
        self.per_second = {}
        self.first_arrival = None
        self.last_arrival = None
        self.service = None

    def arrived(self):
        now = time.time()
        self.received += 1
        second = int(now)
        self.per_second[second] = self.per_second.get(second, 0) + 1
        if self.first_arrival is None:
            self.first_arrival = now
        self.last_arrival = now
        return self.received % self.sample == 0

    def check(self, headers, body):
        """The stand-in's full Web Push check of one sampled push; its latency when the body carries a stamp."""
        self.sampled += 1
        status, _, out, record = self.service.handle("POST", headers.get(":path", ""), headers, body)
        if record is None:
            reason = json.loads(out or b"{}").get("reason", str(status))
            self.sample_failures[reason] = self.sample_failures.get(reason, 0) + 1
            return status
        self.sample_ok += 1
        text = str(record["payload"].get("body", ""))
        try:
            stamp = int(text[:16], 16)
            self.latencies_ms.append(round((time.monotonic_ns() - stamp) / 1e6, 3))
        except ValueError:
            pass
        return status

    def write(self, path):
        usage = resource.getrusage(resource.RUSAGE_SELF)
        data = {key: getattr(self, key) for key in ("sample", "received", "answered", "sampled", "sample_ok",
                                                     "sample_failures", "latencies_ms", "first_arrival", "last_arrival")}
        data["per_second"] = {str(k): v for k, v in sorted(self.per_second.items())}
        data["cpu_seconds"] = round(usage.ru_utime + usage.ru_stime, 3)
        temporary = path + ".tmp"
        with open(temporary, "w") as out:
            json.dump(data, out)
        os.replace(temporary, path)


class Receiver(asyncio.Protocol):
    """One HTTP/2 connection: headers and body kept only for a sampled stream."""

    def __init__(self, figures):
        self.figures = figures
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(
            client_side=False, header_encoding=None, validate_inbound_headers=False, normalize_inbound_headers=False,
            validate_outbound_headers=False, normalize_outbound_headers=False))
        self.kept = {}  # stream id -> (headers, body) of sampled streams
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport
        self.conn.initiate_connection()
        self.conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 1000,
                                   h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 20})
        self.conn.increment_flow_control_window(1 << 24)
        transport.write(self.conn.data_to_send())

    def data_received(self, data):
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError:
            self.transport.write(self.conn.data_to_send())
            self.transport.close()
            return
        for event in events:
            kind = type(event)
            if kind is h2.events.RequestReceived:
                if self.figures.arrived():
                    self.kept[event.stream_id] = ({k.decode().lower(): v.decode() for k, v in event.headers}, bytearray())
            elif kind is h2.events.DataReceived:
                kept = self.kept.get(event.stream_id)
                if kept is not None:
                    kept[1].extend(event.data)
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif kind is h2.events.StreamEnded:
                kept = self.kept.pop(event.stream_id, None)
                status = self.figures.check(kept[0], bytes(kept[1])) if kept is not None else 201
                try:
                    self.conn.send_headers(event.stream_id, [(b":status", str(status).encode()), (b"content-length", b"0")],
                                           end_stream=True)
                    self.figures.answered += 1
                except h2.exceptions.StreamClosedError:
                    pass
            elif kind is h2.events.StreamReset:
                self.kept.pop(event.stream_id, None)
        self.transport.write(self.conn.data_to_send())


async def main(args):
    directory = tempfile.mkdtemp(prefix="push-receiver-")
    certs = standins.make_certificates(directory)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certs["server.pem"], certs["server.key"])
    context.set_alpn_protocols(["h2"])
    subscriber = ec.generate_private_key(ec.SECP256R1())
    auth_secret = secrets.token_bytes(16)
    figures = Figures(max(1, args.sample))
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Receiver(figures), "127.0.0.1", 0, ssl=context)
    url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    figures.service = WebPush(subscriber, auth_secret)
    figures.service.origin = url
    point = subscriber.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    print(json.dumps({"webpush": url, "ca": certs["ca.pem"], "subscription": {
        "endpoint_base": url + "/push/", "p256dh": standins.b64e(point), "auth": standins.b64e(auth_secret)}}), flush=True)

    def report():
        if args.stats_file:
            figures.write(args.stats_file)
        loop.call_later(args.stats_interval, report)
    report()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    if not args.detached:
        threading.Thread(target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(stop.set)), daemon=True).start()
    loop.call_later(args.max_seconds, stop.set)
    await stop.wait()
    if args.stats_file:
        figures.write(args.stats_file)
    shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=10, help="check every Nth push in full (1: every push)")
    parser.add_argument("--stats-file", help="where the figures go")
    parser.add_argument("--stats-interval", type=float, default=1.0)
    parser.add_argument("--max-seconds", type=float, default=600)
    parser.add_argument("--detached", action="store_true", help="do not watch stdin: run until SIGTERM or --max-seconds")
    arguments = parser.parse_args()
    asyncio.run(main(arguments))
