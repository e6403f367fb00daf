#!/usr/bin/env python3
"""Local stand-ins for APNs, FCM and a Web Push service, for Tests/SpotterPushTests.

One process, three HTTP/2-over-TLS servers on 127.0.0.1 (ports picked by the kernel), built on the `h2` library
(HTTP/2 only: ALPN offers h2 alone, so a client that does not speak HTTP/2 gets nothing). A fresh CA and server
certificate, and fresh test keys, are made at start with `cryptography`; the first line on stdout is one JSON
object with the URLs, the CA file and the keys the client under test needs:

  {"apns", "fcm", "token_uri", "webpush", "ca", "apns_key": {"p8", "key_id", "team_id"},
   "service_account": {...the JSON key file...}, "subscription": {"endpoint_base", "p256dh", "auth"}}

What each service checks is in push_standin_services.py. Control, on any of the three ports:
  GET  /_received[?token=T]  (only the pushes to T)
                    {"pushes": [{"service", "path", "token", "headers", "payload", "jwt", "http_version",
                               "connection" (which HTTP/2 connection carried it)}],
                     "grants": <FCM token grants>}
  POST /_mode       {"service", "token" (optional), "status", "reason" (optional), "retry_after" (optional),
                     "times" (optional)}: answer pushes to that service (and token) so instead of accepting;
                    {"service", "down": seconds}: close its connections and refuse new ones that long;
                    {"fcm_token_lifetime": seconds}; {"fcm_revoke": true}; {"clear": true, "service" (optional)}
                    ends the modes (of that service).
  POST /_reset      forgets what was received.

Exits when stdin closes, or after --max-seconds (default 600). Needs h2, PyJWT, cryptography and http_ece
(python3 -m pip install --target .build/push-python h2 http_ece PyJWT cryptography)."""
import argparse
import asyncio
import datetime
import ipaddress
import json
import os
import secrets
import shutil
import ssl
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import h2  # noqa: F401
    import http_ece  # noqa: F401
    import jwt  # noqa: F401
    import cryptography  # noqa: F401
except ImportError as missing:
    print(f"push-standins: {missing.name} is missing: python3 -m pip install --target .build/push-python "
          "h2 http_ece PyJWT cryptography", file=sys.stderr)
    sys.exit(3)

import h2.config  # noqa: E402
import h2.connection  # noqa: E402
import h2.events  # noqa: E402
import h2.exceptions  # noqa: E402
import h2.settings  # noqa: E402
from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

from push_standin_services import APNs, FCM, WebPush, as_json, b64d  # noqa: E402,F401


def b64e(data):
    import base64
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def pem_private(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def make_certificates(directory):
    """A CA and a server certificate for 127.0.0.1 and localhost, signed by it."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Spotter push stand-in CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])).issuer_name(ca_name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = {name: os.path.join(directory, name) for name in ("ca.pem", "server.pem", "server.key")}
    with open(paths["ca.pem"], "wb") as out:
        out.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths["server.pem"], "wb") as out:
        out.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(paths["server.key"], "w") as out:
        out.write(pem_private(key))
    return paths


class State:
    """What every connection shares: the services, the modes, what was received."""

    def __init__(self, services):
        self.services = services
        self.received = []
        self.modes = []
        self.down_until = {}
        self.connections = {name: set() for name in services}

    def control(self, method, path, body):
        path, _, query = path.partition("?")
        if path == "/_received" and method == "GET":
            token = urllib.parse.parse_qs(query).get("token", [None])[0]
            pushes = [push for push in self.received if token in (None, push["token"])]
            return 200, [], as_json({"pushes": pushes, "grants": self.services["fcm"].grants}), None
        if path == "/_reset" and method == "POST":
            self.received.clear()
            return 200, [], b"{}", None
        if path == "/_mode" and method == "POST":
            mode = json.loads(body or b"{}")
            if mode.get("clear"):
                service = mode.get("service")
                self.modes = [m for m in self.modes if service not in (None, m["service"])]
                for name in [service] if service else list(self.down_until):
                    self.down_until.pop(name, None)
            elif "down" in mode:
                self.down_until[mode["service"]] = time.time() + float(mode["down"])
                for protocol in list(self.connections[mode["service"]]):
                    protocol.transport.abort()
            elif "fcm_token_lifetime" in mode:
                self.services["fcm"].token_lifetime = int(mode["fcm_token_lifetime"])
            elif mode.get("fcm_revoke"):
                self.services["fcm"].revoke()
            else:
                self.modes.append(mode)
            return 200, [], b"{}", None
        return 404, [], b"", None

    def forced(self, service, token):
        """The answer a mode forces for a push to `service` and `token`, if any."""
        for mode in self.modes:
            if mode["service"] != service or mode.get("token") not in (None, token):
                continue
            if "times" in mode:
                if mode["times"] <= 0:
                    continue
                mode["times"] -= 1
            headers = [("retry-after", str(mode["retry_after"]))] if "retry_after" in mode else []
            if service == "fcm":
                status = mode["status"]
                code = mode.get("reason")
                state = {404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 400: "INVALID_ARGUMENT"}.get(status, "UNAVAILABLE")
                error = {"code": status, "status": state, "message": "stand-in mode"}
                if code:
                    error["details"] = [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code}]
                return status, headers, as_json({"error": error}), None
            body = as_json({"reason": mode["reason"]}) if mode.get("reason") else b""
            return mode["status"], headers, body, None
        return None

    def is_down(self, service):
        return self.down_until.get(service, 0) > time.time()


class H2Server(asyncio.Protocol):
    def __init__(self, service, state):
        self.service, self.state = service, state
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.streams = {}
        self.outgoing = {}      # stream id -> bytes still to send (flow control, frame size)
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport
        if self.state.is_down(self.service):
            transport.abort()
            return
        self.state.connections[self.service].add(self)
        self.conn.initiate_connection()
        self.conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 1000,
                                   h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 20})
        self.conn.increment_flow_control_window(1 << 24)
        transport.write(self.conn.data_to_send())

    def connection_lost(self, exc):
        self.state.connections[self.service].discard(self)

    def data_received(self, data):
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError:
            self.transport.write(self.conn.data_to_send())
            self.transport.close()
            return
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                self.streams[event.stream_id] = ({name.lower(): value for name, value in event.headers}, bytearray())
            elif isinstance(event, h2.events.DataReceived):
                if event.stream_id in self.streams:
                    self.streams[event.stream_id][1].extend(event.data)
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                headers, body = self.streams.pop(event.stream_id, ({}, bytearray()))
                self.answer(event.stream_id, headers, bytes(body))
            elif isinstance(event, h2.events.StreamReset):
                self.streams.pop(event.stream_id, None)
                self.outgoing.pop(event.stream_id, None)
            elif isinstance(event, (h2.events.WindowUpdated, h2.events.RemoteSettingsChanged)):
                for stream_id in list(self.outgoing):
                    self.flush(stream_id)
        self.transport.write(self.conn.data_to_send())

    def answer(self, stream_id, headers, body):
        method, path = headers.get(":method", ""), headers.get(":path", "")
        if path.startswith("/_"):
            status, extra, out, record = self.state.control(method, path, body)
        else:
            token = path.rsplit("/", 1)[-1]
            if self.service == "fcm" and path != "/token":
                try:
                    token = json.loads(body)["message"]["token"]
                except (ValueError, KeyError, TypeError):
                    pass
            forced = self.state.forced(self.service, token) if path != "/token" else None
            status, extra, out, record = forced or self.state.services[self.service].handle(method, path, headers, body)
            if record is not None:
                record.update(service=self.service, path=path, http_version="HTTP/2", connection=id(self),
                              headers={k: v for k, v in headers.items() if not k.startswith(":")})
                self.state.received.append(record)
        response = [(":status", str(status)), ("content-length", str(len(out)))] + extra
        if out:
            response.append(("content-type", "application/json"))
        self.conn.send_headers(stream_id, response, end_stream=not out)
        if out:
            self.outgoing[stream_id] = out
            self.flush(stream_id)

    def flush(self, stream_id):
        """Sends what the stream's and connection's windows allow, in frames no larger than the peer's maximum."""
        data = self.outgoing.get(stream_id, b"")
        while data:
            room = min(self.conn.local_flow_control_window(stream_id), self.conn.max_outbound_frame_size)
            if room <= 0:
                break
            chunk, data = data[:room], data[room:]
            self.conn.send_data(stream_id, chunk, end_stream=not data)
        if data:
            self.outgoing[stream_id] = data
        else:
            self.outgoing.pop(stream_id, None)


async def main(args):
    directory = tempfile.mkdtemp(prefix="push-standins-")
    certs = make_certificates(directory)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certs["server.pem"], certs["server.key"])
    context.set_alpn_protocols(["h2"])

    apns_key = ec.generate_private_key(ec.SECP256R1())
    account_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subscriber = ec.generate_private_key(ec.SECP256R1())
    auth_secret = secrets.token_bytes(16)

    loop = asyncio.get_running_loop()
    sockets = {}
    for name in ("apns", "fcm", "webpush"):
        sockets[name] = await loop.create_server(lambda name=name: H2Server(name, state), "127.0.0.1", 0, ssl=context)
    urls = {name: f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}" for name, server in sockets.items()}
    token_uri = urls["fcm"] + "/token"
    services = {
        "apns": APNs(apns_key.public_key(), args.key_id, args.team_id),
        "fcm": FCM(account_key.public_key(), "spotter@spotter-test.iam.gserviceaccount.com", "spotter-test", token_uri),
        "webpush": WebPush(subscriber, auth_secret),
    }
    services["webpush"].origin = urls["webpush"]
    state = State(services)

    public_point = subscriber.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    print(json.dumps({
        **urls, "token_uri": token_uri, "ca": certs["ca.pem"],
        "apns_key": {"p8": pem_private(apns_key), "key_id": args.key_id, "team_id": args.team_id},
        "service_account": {"type": "service_account", "project_id": "spotter-test", "private_key_id": "standin1",
                            "private_key": pem_private(account_key),
                            "client_email": "spotter@spotter-test.iam.gserviceaccount.com", "token_uri": token_uri},
        "subscription": {"endpoint_base": urls["webpush"] + "/push/", "p256dh": b64e(public_point), "auth": b64e(auth_secret)},
    }), flush=True)

    stop = asyncio.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(stop.set)), daemon=True).start()
    loop.call_later(args.max_seconds, stop.set)
    await stop.wait()
    shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-seconds", type=float, default=600)
    parser.add_argument("--key-id", default="STANDIN001")
    parser.add_argument("--team-id", default="TEAMSTAND1")
    parser.add_argument("--probe", action="store_true", help="exit 0 when the packages are importable")
    arguments = parser.parse_args()
    if arguments.probe:
        sys.exit(0)
    asyncio.run(main(arguments))
