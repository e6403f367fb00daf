"""The three push services of Tests/scripts/push-standins.py: what each checks in a request, as the real service
does, with independent implementations (PyJWT over `cryptography` for the JWTs, `http_ece` for Web Push's
aes128gcm). Each handler gets the request (method, path, lower-cased headers, body) and answers
(status, headers, body bytes, record or None): the record is what /_received reports for an accepted push."""
import base64
import json
import re
import secrets
import time
import urllib.parse

import http_ece
import jwt
from cryptography.hazmat.primitives.asymmetric import ec

UUID_FORM = re.compile(r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$")
TOPIC_FORM = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
TTL_FORM = re.compile(r"^\d+(\.\d{1,9})?s$")


def b64d(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def as_json(value):
    return json.dumps(value).encode()


def apns_error(status, reason):
    return status, [], as_json({"reason": reason}), None


def fcm_error(status, state, message, code=None):
    error = {"code": status, "status": state, "message": message}
    if code:
        error["details"] = [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code}]
    return status, [], as_json({"error": error}), None


class APNs:
    """POST /3/device/<hex token>: the provider token (ES256, kid, iss, at most an hour old), the headers, the
    payload."""

    def __init__(self, public_key, key_id, team_id):
        self.public_key, self.key_id, self.team_id = public_key, key_id, team_id

    def handle(self, method, path, headers, body):
        match = re.fullmatch(r"/3/device/([^/]*)", path)
        if method != "POST" or not match:
            return apns_error(404, "BadPath")
        token = match.group(1)
        auth = headers.get("authorization", "")
        if not auth.lower().startswith("bearer "):
            return apns_error(403, "MissingProviderToken")
        provider_token = auth[7:]
        try:
            header = jwt.get_unverified_header(provider_token)
            claims = jwt.decode(provider_token, self.public_key, algorithms=["ES256"],
                                options={"verify_exp": False, "verify_iat": False, "require": ["iss", "iat"]})
        except jwt.PyJWTError:
            return apns_error(403, "InvalidProviderToken")
        if header.get("alg") != "ES256" or header.get("kid") != self.key_id or claims.get("iss") != self.team_id:
            return apns_error(403, "InvalidProviderToken")
        if claims["iat"] < time.time() - 3600:
            return apns_error(403, "ExpiredProviderToken")
        if not re.fullmatch(r"[0-9a-f]{64,200}", token):
            return apns_error(400, "BadDeviceToken")
        if not headers.get("apns-topic"):
            return apns_error(400, "MissingTopic")
        push_type = headers.get("apns-push-type")
        if push_type not in ("alert", "background"):
            return apns_error(400, "InvalidPushType")
        priority = headers.get("apns-priority", "10")
        if priority not in ("5", "10") or (push_type == "background" and priority != "5"):
            return apns_error(400, "BadPriority")
        if "apns-id" in headers and not UUID_FORM.match(headers["apns-id"]):
            return apns_error(400, "BadMessageId")
        if not re.fullmatch(r"\d+", headers.get("apns-expiration", "0")):
            return apns_error(400, "BadExpirationDate")
        if len(headers.get("apns-collapse-id", "").encode()) > 64:
            return apns_error(400, "BadCollapseId")
        if len(body) > 4096:
            return apns_error(413, "PayloadTooLarge")
        try:
            payload = json.loads(body)
        except ValueError:
            return apns_error(400, "BadPayload")
        aps = payload.get("aps") if isinstance(payload, dict) else None
        if not isinstance(aps, dict):
            return apns_error(400, "PayloadEmpty")
        if push_type == "background":
            if aps.get("content-available") != 1 or "alert" in aps or "sound" in aps:
                return apns_error(400, "BadPayload")
        else:
            alert = aps.get("alert")
            if not isinstance(alert, dict) or not isinstance(alert.get("title"), str) or not isinstance(alert.get("body"), str):
                return apns_error(400, "BadPayload")
            if aps.get("interruption-level") not in ("passive", "active", "time-sensitive", "critical"):
                return apns_error(400, "BadPayload")
        record = {"token": token, "payload": payload, "jwt": {"header": header, "claims": claims, "token": provider_token}}
        return 200, [("apns-id", headers.get("apns-id", ""))], b"", record


class FCM:
    """POST /token (the JWT-bearer grant, RS256 verified with the service account's public key) and
    POST /v1/projects/<project>/messages:send (the bearer token it issued, the message's shape)."""

    def __init__(self, public_key, client_email, project_id, token_uri):
        self.public_key, self.client_email, self.project_id, self.token_uri = public_key, client_email, project_id, token_uri
        self.tokens = {}          # access token -> expiry (time.time())
        self.grants = 0
        self.token_lifetime = 3600

    def handle(self, method, path, headers, body):
        if path == "/token":
            return self.grant(method, headers, body)
        match = re.fullmatch(r"/v1/projects/([^/]+)/messages:send", path)
        if method != "POST" or not match:
            return fcm_error(404, "NOT_FOUND", "no such method")
        auth = headers.get("authorization", "")
        token = auth[7:] if auth.lower().startswith("bearer ") else None
        if token is None or self.tokens.get(token, 0) <= time.time():
            return fcm_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        if match.group(1) != self.project_id:
            return fcm_error(403, "PERMISSION_DENIED", "another project", "SENDER_ID_MISMATCH")
        try:
            message = json.loads(body)["message"]
        except (ValueError, KeyError, TypeError):
            return fcm_error(400, "INVALID_ARGUMENT", "not a message", "INVALID_ARGUMENT")
        problem = self.check_message(message)
        if problem:
            return fcm_error(400, "INVALID_ARGUMENT", problem, "INVALID_ARGUMENT")
        record = {"token": message["token"], "payload": message}
        return 200, [], as_json({"name": f"projects/{self.project_id}/messages/{secrets.token_hex(8)}"}), record

    @staticmethod
    def check_message(message):
        if not isinstance(message, dict) or not isinstance(message.get("token"), str) or not message["token"]:
            return "message.token"
        data = message.get("data", {})
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            return "message.data values must be strings"
        notification = message.get("notification")
        if notification is not None and not all(isinstance(notification.get(k), str) for k in ("title", "body")):
            return "message.notification"
        android = message.get("android", {})
        if android.get("priority", "NORMAL") not in ("HIGH", "NORMAL"):
            return "message.android.priority"
        if "ttl" in android and not TTL_FORM.match(android["ttl"]):
            return "message.android.ttl"
        return None

    def grant(self, method, headers, body):
        form = urllib.parse.parse_qs(body.decode(errors="replace"))
        if method != "POST" or form.get("grant_type") != ["urn:ietf:params:oauth:grant-type:jwt-bearer"]:
            return 400, [], as_json({"error": "unsupported_grant_type"}), None
        try:
            assertion = form["assertion"][0]
            claims = jwt.decode(assertion, self.public_key, algorithms=["RS256"], audience=self.token_uri,
                                options={"verify_iat": False, "require": ["iss", "aud", "iat", "exp", "scope"]})
        except (KeyError, jwt.PyJWTError):
            return 400, [], as_json({"error": "invalid_grant", "error_description": "Invalid JWT Signature."}), None
        if claims["iss"] != self.client_email or "https://www.googleapis.com/auth/firebase.messaging" not in claims["scope"].split():
            return 400, [], as_json({"error": "invalid_grant", "error_description": "claims"}), None
        if claims["exp"] - claims["iat"] > 3600:
            return 400, [], as_json({"error": "invalid_grant", "error_description": "lifetime"}), None
        token = "ya29.standin-" + secrets.token_urlsafe(24)
        self.tokens[token] = time.time() + self.token_lifetime
        self.grants += 1
        return 200, [], as_json({"access_token": token, "expires_in": self.token_lifetime, "token_type": "Bearer"}), None

    def revoke(self):
        self.tokens.clear()


class WebPush:
    """POST /push/<id>: the VAPID JWT (ES256 under k=, aud = this origin, exp within 24 h, sub), the RFC 8030
    headers, and the aes128gcm body decrypted with the subscription's private key."""

    def __init__(self, private_key, auth_secret):
        self.private_key, self.auth_secret = private_key, auth_secret
        self.origin = None

    def handle(self, method, path, headers, body):
        match = re.fullmatch(r"/push/([A-Za-z0-9_-]+)", path)
        if method != "POST" or not match:
            return 404, [], b"", None
        token = match.group(1)
        auth = headers.get("authorization", "")
        params = {}
        if auth.lower().startswith("vapid "):
            for part in auth[6:].split(","):
                name, _, value = part.strip().partition("=")
                params[name.lower()] = value.strip('"')
        if "t" not in params or "k" not in params:
            return 401, [], as_json({"reason": "no vapid authorization"}), None
        try:
            key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64d(params["k"]))
            header = jwt.get_unverified_header(params["t"])
            claims = jwt.decode(params["t"], key, algorithms=["ES256"], audience=self.origin,
                                options={"require": ["aud", "exp", "sub"]})
        except (ValueError, jwt.PyJWTError) as error:
            return 403, [], as_json({"reason": f"vapid: {error}"}), None
        if claims["exp"] > time.time() + 24 * 3600 or not re.match(r"^(mailto:.+@|https://)", claims["sub"]):
            return 403, [], as_json({"reason": "vapid claims"}), None
        if headers.get("content-encoding") != "aes128gcm":
            return 400, [], as_json({"reason": "content-encoding"}), None
        if not re.fullmatch(r"\d+", headers.get("ttl", "")):
            return 400, [], as_json({"reason": "TTL"}), None
        if headers.get("urgency", "normal") not in ("very-low", "low", "normal", "high"):
            return 400, [], as_json({"reason": "Urgency"}), None
        if "topic" in headers and not TOPIC_FORM.match(headers["topic"]):
            return 400, [], as_json({"reason": "Topic"}), None
        if len(body) > 4096:
            return 413, [], as_json({"reason": "too large"}), None
        try:
            plaintext = http_ece.decrypt(body, private_key=self.private_key, auth_secret=self.auth_secret, version="aes128gcm")
            payload = json.loads(plaintext.decode("utf-8"))
        except Exception as error:  # http_ece raises its own ECEException, and ValueError for the JSON
            return 400, [], as_json({"reason": f"decryption: {type(error).__name__}"}), None
        record = {"token": token, "payload": payload, "jwt": {"header": header, "claims": claims, "token": params["t"]}}
        return 201, [("location", f"{self.origin}/message/{secrets.token_hex(6)}")], b"", record
