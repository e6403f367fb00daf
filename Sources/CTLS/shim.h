#ifndef SPOTTER_CTLS_SHIM_H
#define SPOTTER_CTLS_SHIM_H
/* TLS on the loop (SpotterTLS): SSL_CTX/SSL driven through memory BIOs. */
#include <string.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/x509.h>
#include <openssl/pem.h>
#include <openssl/buffer.h>

/* Macros Swift cannot import. */
static inline long spotter_tls_set_min_proto(SSL_CTX *ctx, int version) { return SSL_CTX_set_min_proto_version(ctx, version); }
static inline long spotter_tls_set_max_proto(SSL_CTX *ctx, int version) { return SSL_CTX_set_max_proto_version(ctx, version); }
static inline long spotter_tls_set_session_cache(SSL_CTX *ctx, long mode) { return SSL_CTX_set_session_cache_mode(ctx, mode); }
static inline long spotter_tls_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
static inline size_t spotter_tls_pending_out(BIO *bio) { return BIO_ctrl_pending(bio); }
static inline long spotter_tls_set_eof_return(BIO *bio, int value) { return BIO_set_mem_eof_return(bio, value); }
/* Bytes a memory BIO has allocated (it keeps its largest size once grown). */
static inline size_t spotter_tls_bio_capacity(BIO *bio) {
    BUF_MEM *memory = NULL;
    BIO_get_mem_ptr(bio, &memory);
    return memory == NULL ? 0 : memory->max;
}
static inline int spotter_tls_set_host(SSL *ssl, const char *name) { return (int)SSL_set_tlsext_host_name(ssl, name); }
static inline int spotter_tls1_1(void) { return TLS1_1_VERSION; }
static inline int spotter_tls1_2(void) { return TLS1_2_VERSION; }
static inline int spotter_tls1_3(void) { return TLS1_3_VERSION; }
static inline long spotter_tls_sess_cache_server(void) { return SSL_SESS_CACHE_SERVER; }
static inline long spotter_tls_sess_cache_client(void) { return SSL_SESS_CACHE_CLIENT; }
/* Buffers are given back while a connection is idle (per-socket memory). */
static inline long spotter_tls_mode_flags(void) { return SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER; }
static inline uint64_t spotter_tls_server_options(void) {
    return SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_NO_SSLv3 | SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1;
}

/* ALPN: the server speaks http/1.1 only; a client offering other protocols only gets no ALPN answer. */
static const unsigned char spotter_tls_alpn_wire[] = { 8, 'h', 't', 't', 'p', '/', '1', '.', '1' };
static inline int spotter_tls_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                          const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl; (void)arg;
    unsigned char *chosen = NULL;
    if (SSL_select_next_proto(&chosen, outlen, spotter_tls_alpn_wire, sizeof spotter_tls_alpn_wire, in, inlen)
        != OPENSSL_NPN_NEGOTIATED) return SSL_TLSEXT_ERR_NOACK;
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
}
static inline void spotter_tls_use_alpn_http11(SSL_CTX *ctx) { SSL_CTX_set_alpn_select_cb(ctx, spotter_tls_alpn_select, NULL); }
static inline int spotter_tls_offer_alpn_http11(SSL_CTX *ctx) {
    return SSL_CTX_set_alpn_protos(ctx, spotter_tls_alpn_wire, sizeof spotter_tls_alpn_wire);
}
#endif
