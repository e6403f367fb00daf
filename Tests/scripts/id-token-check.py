#!/usr/bin/env python3
"""Independent ID tokens for the Sign in with Apple / Google tests (IDTokenInteropTests), made with PyJWT over
`cryptography`, not with the server's code. Reads one JSON request on stdin, writes one JSON answer on stdout.

Modes:
  probe                      exit 0 when PyJWT and cryptography import
  sign   {"pem", "kid", "claims", "alg"?}
                             {"token"}: the claims signed with the PEM private key (RS256 unless told; "HS256" signs
                             with the public key's PEM as the HMAC secret, the classic algorithm-confusion forgery)
  verify {"jwks", "token", "audience", "issuer"}
                             {"ok", "sub"|"error"}: PyJWT's own verdict on a token, with the key set as published

Packages: python3 -m pip install --target .build/push-python PyJWT cryptography (as .ci/run does)."""
import json
import sys


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "probe"
    import jwt  # noqa: F401  (PyJWT)
    from cryptography.hazmat.primitives import serialization
    if mode == "probe":
        return
    request = json.load(sys.stdin)
    if mode == "sign":
        key = serialization.load_pem_private_key(request["pem"].encode(), password=None)
        alg = request.get("alg", "RS256")
        headers = {"kid": request["kid"]}
        if alg == "HS256":
            public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo)
            # PyJWT refuses a PEM as an HMAC secret: sign by hand, as an attacker would.
            import base64, hashlib, hmac
            def b64(data):
                return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
            head = b64(json.dumps({"alg": "HS256", "kid": request["kid"], "typ": "JWT"}).encode())
            body = b64(json.dumps(request["claims"]).encode())
            signature = hmac.new(public, f"{head}.{body}".encode(), hashlib.sha256).digest()
            token = f"{head}.{body}.{b64(signature)}"
        else:
            token = jwt.encode(request["claims"], key, algorithm=alg, headers=headers)
        json.dump({"token": token}, sys.stdout)
    elif mode == "verify":
        keys = jwt.PyJWKSet.from_dict(request["jwks"])
        kid = jwt.get_unverified_header(request["token"])["kid"]
        try:
            claims = jwt.decode(request["token"], keys[kid].key, algorithms=["RS256"], audience=request["audience"],
                                issuer=request["issuer"])
            json.dump({"ok": True, "sub": claims["sub"]}, sys.stdout)
        except jwt.PyJWTError as error:
            json.dump({"ok": False, "error": type(error).__name__}, sys.stdout)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
