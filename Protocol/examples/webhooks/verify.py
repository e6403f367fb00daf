"""Checks a Spotter webhook delivery's signature (Protocol/README.md, "Webhooks").

    verify(secret, header, body) -> bool

`header` is the `Spotter-Signature` header, `body` the request body exactly as received (bytes: do not parse
and re-serialize it first), `secret` the endpoint's `whsec_…` secret. Standard library only.
"""
import hashlib
import hmac
import time

TOLERANCE_SECONDS = 300


def verify(secret: str, header: str, body: bytes, now: float | None = None) -> bool:
    timestamp, signatures = None, []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdigit():
            timestamp = int(value)
        elif key == "v1":
            signatures.append(value)
    if timestamp is None or not signatures:
        return False
    if abs((time.time() if now is None else now) - timestamp) > TOLERANCE_SECONDS:
        return False  # too old (or from the future): a captured delivery sent again
    signed = str(timestamp).encode() + b"." + body
    expected = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, candidate) for candidate in signatures)


if __name__ == "__main__":
    # python3 verify.py SECRET HEADER < body  → exit 0 when the signature is good
    import sys
    sys.exit(0 if verify(sys.argv[1], sys.argv[2], sys.stdin.buffer.read()) else 1)
