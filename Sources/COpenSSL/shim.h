#ifndef SPOTTER_COPENSSL_SHIM_H
#define SPOTTER_COPENSSL_SHIM_H
#include <openssl/sha.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
/* Keys and signatures for the push providers (SpotterPushCrypto): PEM, SPKI, ECDSA_SIG, the error queue. */
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/ec.h>
#include <openssl/err.h>
/* RSA public keys from a JSON Web Key's n and e (Sign in with Apple / Google ID tokens). */
#include <openssl/bn.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>
#endif
