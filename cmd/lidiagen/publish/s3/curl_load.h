/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libcurl, loaded when a bucket is first opened (curl_load.c), not linked:
 * it and its 30 libraries cost 6 MiB of resident memory that a conversion
 * which never publishes has no use for. <curl/curl.h> gives the types and
 * constants; its functions are called through s3_curl only, once
 * s3_curl_load has succeeded.
 */
#ifndef LIDIAGEN_CURL_LOAD_H
#define LIDIAGEN_CURL_LOAD_H

#include <curl/curl.h>
#include <stddef.h>

/* Every libcurl function the S3 code calls: curl_NAME is s3_curl.NAME. */
#define S3_CURL_FNS(X)                                                                             \
	X(CURLcode, global_init, (long))                                                           \
	X(CURL *, easy_init, (void))                                                               \
	X(void, easy_cleanup, (CURL *))                                                            \
	X(void, easy_reset, (CURL *))                                                              \
	X(CURLcode, easy_setopt, (CURL *, CURLoption, ...))                                        \
	X(CURLcode, easy_perform, (CURL *))                                                        \
	X(CURLcode, easy_getinfo, (CURL *, CURLINFO, ...))                                         \
	X(const char *, easy_strerror, (CURLcode))                                                 \
	X(struct curl_slist *, slist_append, (struct curl_slist *, const char *))                  \
	X(void, slist_free_all, (struct curl_slist *))

struct s3_curl_fns {
#define X(ret, name, args) ret(*name) args;
	S3_CURL_FNS(X)
#undef X
};

/* Filled by s3_curl_load; not to be called before it succeeds. */
extern struct s3_curl_fns s3_curl;

/*
 * Load libcurl.so.4 and start it (curl_global_init), once for the process,
 * whichever thread asks first. 0 when it is ready; otherwise a negative
 * errno and one line in err (when err_size is not 0): -ELIBACC when the
 * library or one of its functions is missing ("publishing needs
 * libcurl.so.4 (Debian: libcurl4)"), -ENOMEM when it would not start.
 */
int s3_curl_load(char *err, size_t err_size);

/* An answer's body, into buf: at most cap bytes, one more stops the transfer. */
struct curl_body {
	char *buf;
	size_t len, cap;
};

/*
 * h set for one small request of a credential source (STS, IMDS, a
 * container endpoint): url, no signals, no proxy, http and https only, no
 * redirect, both timeouts, libcurl's error in curl_err, the headers, and
 * the answer's body into body.
 */
void s3_curl_small_request(CURL *h, const char *url, long connect_ms, long total_ms, char *curl_err,
			   struct curl_slist *headers, struct curl_body *body);

#endif
