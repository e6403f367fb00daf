#!/usr/bin/env python3
"""Checks SpotterPushCrypto against independent implementations from PyPI.

Run by Tests/SpotterPushCryptoTests/PushCryptoInteropTests.swift, one JSON document on stdin, one on stdout:

  probe  prints the versions of the packages it needs; exits 3 when one is missing
         (pip install http_ece pywebpush PyJWT cryptography; .ci/run installs them).
  check  reads {"cases": [...]} that Swift produced and reports, for each, whether the
         independent implementation accepts it: {"results": [{"name", "valid", "detail"}]}.
         The Swift test knows which cases must be accepted and which (tampered) must not.
  make   reads {"ua_public", "auth", "plaintexts", "endpoint", "subject"} and produces what
         Swift must read: bodies encrypted by http_ece and pywebpush, a VAPID header signed by
         py_vapid, an ES256 JWT signed by PyJWT.

Kinds of case for check:
  webpush  body (b64url), ua_private_pem, auth (b64url), plaintext (b64url)
           -> http_ece.decrypt(version="aes128gcm") recovers the plaintext
  vapid    authorization ("vapid t=..., k=..."), endpoint, subject, vapid_private_pem, now
           -> k is the PEM key's public half; PyJWT verifies the JWT under k with
              aud = the endpoint's origin, now < exp <= now + 24 h, sub = subject
  apns     jwt, public_pem, key_id, team_id, iat
           -> header alg ES256 + kid; PyJWT verifies; iss = team id, iat
  fcm      jwt, public_pem, client_email, token_uri, iat, form_body
           -> PyJWT verifies RS256 with aud = token_uri; the claims; and the form body
              parses (urllib) to the grant type and this assertion
"""
import base64
import json
import sys
import urllib.parse

MISSING = []
try:
    import http_ece
except ImportError:
    MISSING.append("http_ece")
try:
    import jwt
except ImportError:
    MISSING.append("PyJWT")
try:
    import cryptography
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
except ImportError:
    MISSING.append("cryptography")
try:
    import pywebpush
    import py_vapid
except ImportError:
    MISSING.append("pywebpush")


def b64d(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64e(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def origin(endpoint):
    parts = urllib.parse.urlsplit(endpoint)
    default = {"https": 443, "http": 80}[parts.scheme]
    host = parts.hostname
    port = parts.port
    return f"{parts.scheme}://{host}" + ("" if port in (None, default) else f":{port}")


def raw_public(key):
    return key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


def check_webpush(case):
    key = serialization.load_pem_private_key(case["ua_private_pem"].encode(), password=None)
    plaintext = http_ece.decrypt(b64d(case["body"]), private_key=key, auth_secret=b64d(case["auth"]),
                                 version="aes128gcm")
    if plaintext != b64d(case["plaintext"]):
        return False, "decrypted to other bytes"
    body = b64d(case["body"])
    if int.from_bytes(body[16:20], "big") != 4096 or body[20] != 65:
        return False, "header is not rs=4096, idlen=65"
    return True, f"http_ece decrypted {len(plaintext)} bytes"


def check_vapid(case):
    scheme, _, params = case["authorization"].partition(" ")
    if scheme != "vapid":
        return False, f"scheme {scheme!r}"
    fields = dict(p.strip().split("=", 1) for p in params.split(","))
    private = serialization.load_pem_private_key(case["vapid_private_pem"].encode(), password=None)
    if b64d(fields["k"]) != raw_public(private.public_key()):
        return False, "k is not the VAPID key's public half"
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64d(fields["k"]))
    header = jwt.get_unverified_header(fields["t"])
    if header.get("alg") != "ES256" or header.get("typ") != "JWT":
        return False, f"header {header}"
    claims = jwt.decode(fields["t"], public, algorithms=["ES256"], audience=origin(case["endpoint"]),
                        options={"require": ["exp", "aud", "sub"]}, leeway=0)
    now = case["now"]
    if not (now < claims["exp"] <= now + 24 * 3600):
        return False, f"exp {claims['exp']} not within 24 h of {now}"
    if claims["sub"] != case["subject"]:
        return False, f"sub {claims['sub']!r}"
    return True, f"PyJWT verified, aud {claims['aud']}"


def check_apns(case):
    public = serialization.load_pem_public_key(case["public_pem"].encode())
    header = jwt.get_unverified_header(case["jwt"])
    if header.get("alg") != "ES256" or header.get("kid") != case["key_id"]:
        return False, f"header {header}"
    claims = jwt.decode(case["jwt"], public, algorithms=["ES256"], options={"verify_exp": False, "require": ["iat"]})
    if claims != {"iss": case["team_id"], "iat": case["iat"]}:
        return False, f"claims {claims}"
    return True, "PyJWT verified"


def check_fcm(case):
    public = serialization.load_pem_public_key(case["public_pem"].encode())
    header = jwt.get_unverified_header(case["jwt"])
    if header.get("alg") != "RS256":
        return False, f"header {header}"
    claims = jwt.decode(case["jwt"], public, algorithms=["RS256"], audience=case["token_uri"],
                        options={"verify_exp": False, "verify_iat": False, "require": ["exp", "iat", "aud", "iss"]})
    expected = {"iss": case["client_email"], "scope": "https://www.googleapis.com/auth/firebase.messaging",
                "aud": case["token_uri"], "iat": case["iat"], "exp": case["iat"] + 3600}
    if claims != expected:
        return False, f"claims {claims}"
    form = urllib.parse.parse_qs(case["form_body"], strict_parsing=True)
    if form != {"grant_type": ["urn:ietf:params:oauth:grant-type:jwt-bearer"], "assertion": [case["jwt"]]}:
        return False, f"form body {form}"
    return True, "PyJWT verified, form body parsed"


CHECKS = {"webpush": check_webpush, "vapid": check_vapid, "apns": check_apns, "fcm": check_fcm}


def check(request):
    results = []
    for case in request["cases"]:
        try:
            valid, detail = CHECKS[case["kind"]](case)
        except Exception as error:  # a refusal by the independent implementation is an answer, not a crash
            valid, detail = False, f"{type(error).__name__}: {error}"
        results.append({"name": case["name"], "valid": valid, "detail": detail})
    return {"results": results}


def make(request):
    ua_public = b64d(request["ua_public"])
    auth = b64d(request["auth"])
    out = {"http_ece": [], "pywebpush": []}
    for text in request["plaintexts"]:
        plaintext = b64d(text)
        for rs in (4096, 25):  # one record, and many small ones
            server_key = ec.generate_private_key(ec.SECP256R1())
            body = http_ece.encrypt(plaintext, private_key=server_key, dh=ua_public, auth_secret=auth, rs=rs,
                                    version="aes128gcm")
            out["http_ece"].append({"plaintext": text, "rs": rs, "body": b64e(body)})
        pusher = pywebpush.WebPusher({"endpoint": request["endpoint"],
                                      "keys": {"p256dh": request["ua_public"], "auth": request["auth"]}})
        out["pywebpush"].append({"plaintext": text, "body": b64e(pusher.encode(plaintext)["body"])})
    vapid = py_vapid.Vapid02()
    vapid.generate_keys()
    claims = {"aud": origin(request["endpoint"]), "exp": request["now"] + 3600, "sub": request["subject"]}
    out["vapid"] = {"authorization": vapid.sign(claims)["Authorization"], "claims": claims}
    signer = ec.generate_private_key(ec.SECP256R1())
    out["es256"] = {"jwt": jwt.encode({"iss": "python", "iat": request["now"]}, signer, algorithm="ES256"),
                    "public": b64e(raw_public(signer.public_key()))}
    return out


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if MISSING:
        print(f"push-crypto-check: missing Python packages: {', '.join(MISSING)}", file=sys.stderr)
        sys.exit(3)
    if mode == "probe":
        print(json.dumps({"cryptography": cryptography.__version__, "PyJWT": jwt.__version__,
                          "http_ece": getattr(http_ece, "__version__", "?")}))
        return
    if mode not in ("check", "make"):
        print("usage: push-crypto-check.py probe|check|make < request.json", file=sys.stderr)
        sys.exit(2)
    request = json.load(sys.stdin)
    json.dump(check(request) if mode == "check" else make(request), sys.stdout)


if __name__ == "__main__":
    main()
