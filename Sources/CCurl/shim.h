#ifndef SPOTTER_CCURL_SHIM_H
#define SPOTTER_CCURL_SHIM_H
/* libcurl for the push providers (SpotterPush's HTTP2Client). curl_easy_setopt, curl_multi_setopt and
   curl_easy_getinfo are variadic, which Swift cannot call: these wrappers give one typed spelling per kind of
   argument. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <sys/types.h>

typedef size_t (*spotter_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode spotter_curl_easy_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode spotter_curl_easy_setopt_pointer(CURL *easy, CURLoption option, const void *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode spotter_curl_easy_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode spotter_curl_easy_setopt_off_t(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}
/* CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION share this signature. */
static inline CURLcode spotter_curl_easy_setopt_callback(CURL *easy, CURLoption option, spotter_curl_data_callback value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLMcode spotter_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLcode spotter_curl_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLcode spotter_curl_easy_getinfo_pointer(CURL *easy, CURLINFO info, void **value) {
    return curl_easy_getinfo(easy, info, value);
}
/* Whether this libcurl was built with HTTP/2 (nghttp2). */
static inline int spotter_curl_has_http2(void) {
    curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    return info != NULL && (info->features & CURL_VERSION_HTTP2) != 0;
}
#endif
