// SpotterPushCrypto: the cryptography of the three push providers, pure (no sockets, no loop, no clock: `now`
// is passed in; OpenSSL's CSPRNG is the one outside input, and every use of it can be replaced by a value).
//
//   Web Push   WebPushEncryption   RFC 8291 message encryption, `aes128gcm` (RFC 8188): encrypt, and decrypt for
//                                  the local push-service stand-in and the tests
//              VAPIDKey            RFC 8292: the ES256 JWT and `Authorization: vapid t=…, k=…`; the public key
//                                  for GET /v1/push/vapid-public-key; VAPIDAuthorization checks one as a push
//                                  service does; PushOrigin is the `aud` of an endpoint
//   APNs       APNsSigningKey      the ES256 provider token from a `.p8` key, key id and team id;
//              APNsProviderToken   which token a request carries: reused, renewed at 50 minutes (Apple: 20–60)
//   FCM        FCMServiceAccount   the service-account JSON, the RS256 JWT-bearer assertion and the grant's body;
//              FCMAccessTokenCache the access token in use, refreshed a minute before it expires, one grant at a time
//   Keys       P256PrivateKey, P256PublicKey, RSAPrivateKey over OpenSSL's EVP_PKEY; ES256 signatures in JOSE form
//
// Keys, auth secrets and tokens never appear in a `description`, a mirror or an error: the types that hold them
// print "redacted", so a value logged by mistake leaks nothing. Checked against independent implementations
// (http_ece, pywebpush, py_vapid, PyJWT over `cryptography`) by Tests/scripts/push-crypto-check.py.
