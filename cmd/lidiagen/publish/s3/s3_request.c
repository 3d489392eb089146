/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One S3 request through libcurl: signed by libcurl's own SigV4
 * (CURLOPT_AWS_SIGV4), which signs the headers we add. libcurl 7.88 does
 * not send x-amz-content-sha256 itself, and S3 wants it, so s3_object.c
 * sends it (and the security token) as headers of ours, and they are
 * signed with the rest. Failures worth another try (the server busy or
 * failing, the connection lost or stalled, a host name not resolved) are
 * retried with capped exponential backoff and full jitter, or after the
 * server's Retry-After, within the config's attempts and seconds; the
 * others end at once with S3's own code and message, or libcurl's words
 * (which name the host and port) and why one attempt was all: a TLS
 * handshake or certificate that failed fails the same way every time.
 *
 * Every attempt has deadlines: to connect, to see a byte (libcurl's low
 * speed limit), and for the whole of it, scaled by the body's size, so
 * that a server trickling a byte a second does not hold a request for
 * minutes. A server not reached is tried twice at most, and the breaker
 * (s3_breaker.c) hears of it: a dead endpoint ends the run in seconds.
 * A 2xx answer is believed only when its body is what S3 sends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "lidia.h"
#include "s3_request.h"

#define BACKOFF_BASE_MS 200
#define BACKOFF_CAP_MS 20000
/* A server not reached (refused, reset, timed out) is tried this often at most. */
#define UNREACHED_ATTEMPTS 2
/* The whole request's deadline allows for a body sent no faster than this. */
#define DEADLINE_MIN_RATE (32 * 1024)

int s3_client_new(struct s3_client **out, const struct s3_config *c)
{
	struct s3_client *cl;
	int e;

	/* libcurl is loaded with the first client (s3_config_load has said why it is missing). */
	if ((e = s3_curl_load(NULL, 0)))
		return e;
	cl = calloc(1, sizeof(*cl));
	if (!cl)
		return -ENOMEM;
	cl->c = c;
	cl->curl = s3_curl.easy_init();
	if (!cl->curl) {
		free(cl);
		return -ENOMEM;
	}
	cl->rand_state = (unsigned)time(NULL) ^ (unsigned)getpid() ^ (unsigned)(uintptr_t)cl;
	cl->ca_bundle = getenv("AWS_CA_BUNDLE");
	if (cl->ca_bundle && !*cl->ca_bundle)
		cl->ca_bundle = NULL;
	snprintf(cl->user_agent, sizeof(cl->user_agent), "lidiagen/%s", LIDIA_VERSION_STRING);
	*out = cl;
	return 0;
}

void s3_client_free(struct s3_client *cl)
{
	if (!cl)
		return;
	s3_curl.easy_cleanup(cl->curl);
	explicit_bzero(&cl->creds, sizeof(cl->creds));
	free(cl);
}

void s3_client_take_stats(struct s3_client *cl, struct s3_stats *st)
{
	st->requests += cl->stats.requests;
	st->heads += cl->stats.heads;
	st->puts += cl->stats.puts;
	st->gets += cl->stats.gets;
	st->retries += cl->stats.retries;
	st->bytes_sent += cl->stats.bytes_sent;
	st->bytes_received += cl->stats.bytes_received;
	memset(&cl->stats, 0, sizeof(cl->stats));
}

void s3_request_done(struct s3_request *r)
{
	free(r->resp);
	r->resp = NULL;
	r->resp_len = 0;
}

/*
 * The line is made to fit, whatever its length: a session token from web
 * identity or SSO runs past 2 KiB, and one cut short was refused by the
 * server with an unrelated reason. It may be a secret: wiped once copied.
 */
bool s3_add_header(struct curl_slist **list, const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 3;
	struct curl_slist *l;
	char *line = malloc(n);

	if (!line)
		return false;
	snprintf(line, n, "%s: %s", name, value);
	l = s3_curl.slist_append(*list, line);
	explicit_bzero(line, n);
	free(line);
	if (!l)
		return false;
	*list = l;
	return true;
}

bool s3_add_auth_headers(const struct s3_config *c, struct curl_slist **list,
			 const char *payload_sha)
{
	(void)c;
	return s3_add_header(list, "x-amz-content-sha256", payload_sha);
}

/*
 * The session token's header added to the request's for one attempt: the
 * node it follows (NULL: it is the first) into *before, for token_drop.
 */
static bool token_add(struct s3_client *cl, struct s3_request *r, struct curl_slist **before)
{
	struct curl_slist *tail = r->headers;

	while (tail && tail->next)
		tail = tail->next;
	*before = tail;
	return !cl->creds.session_token[0] ||
	       s3_add_header(&r->headers, "x-amz-security-token", cl->creds.session_token);
}

static void token_drop(struct s3_client *cl, struct s3_request *r, struct curl_slist *before)
{
	if (!cl->creds.session_token[0])
		return;
	if (before) {
		s3_curl.slist_free_all(before->next);
		before->next = NULL;
	} else {
		s3_curl.slist_free_all(r->headers);
		r->headers = NULL;
	}
}

/* ---- the transfer's callbacks ---- */

static size_t read_body(char *buf, size_t size, size_t nitems, void *arg)
{
	struct s3_request *r = arg;
	size_t n = r->len - r->sent;

	if (n > size * nitems)
		n = size * nitems;
	memcpy(buf, (const char *)r->body + r->sent, n);
	r->sent += n;
	return n;
}

/* libcurl rewinds the body when it must send it again on the same request. */
static int seek_body(void *arg, curl_off_t offset, int origin)
{
	struct s3_request *r = arg;

	if (origin != SEEK_SET || offset < 0 || (size_t)offset > r->len)
		return CURL_SEEKFUNC_FAIL;
	r->sent = (size_t)offset;
	return CURL_SEEKFUNC_OK;
}

/* The response body: kept up to S3_BODY_MAX (an error document), the rest counted away. */
static size_t write_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct s3_request *r = arg;
	size_t n = size * nmemb, keep = n, max = r->resp_max ? r->resp_max : S3_BODY_MAX;

	if (r->resp_len + keep > max)
		keep = max - r->resp_len;
	if (keep) {
		char *p = realloc(r->resp, r->resp_len + keep + 1);

		if (!p)
			return 0;
		memcpy(p + r->resp_len, data, keep);
		r->resp = p;
		r->resp_len += keep;
		r->resp[r->resp_len] = 0;
	}
	return n;
}

/* Copy a header's value (after "name:"), trimmed, into out. */
static void header_value(const char *line, size_t len, size_t name_len, char *out, size_t size)
{
	const char *v = line + name_len, *end = line + len;
	size_t n;

	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
		end--;
	n = (size_t)(end - v) < size - 1 ? (size_t)(end - v) : size - 1;
	memcpy(out, v, n);
	out[n] = 0;
}

static bool header_is(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);

	return len > n && !strncasecmp(line, name, n);
}

/* Our metadata, from a HEAD's x-amz-meta-lidia-* headers. */
static void meta_header(struct s3_head *h, const char *line, size_t len)
{
	char v[80];

	if (header_is(line, len, "x-amz-meta-lidia-holds:")) {
		header_value(line, len, 23, h->meta.holds, sizeof(h->meta.holds));
		h->ours = true;
	} else if (header_is(line, len, "x-amz-meta-lidia-sha256:")) {
		header_value(line, len, 24, h->meta.sha256, sizeof(h->meta.sha256));
	} else if (header_is(line, len, "x-amz-meta-lidia-version:")) {
		header_value(line, len, 25, h->meta.version, sizeof(h->meta.version));
	} else if (header_is(line, len, "x-amz-meta-lidia-functions:")) {
		header_value(line, len, 27, v, sizeof(v));
		h->meta.functions = strtoull(v, NULL, 10);
	} else if (header_is(line, len, "x-amz-meta-lidia-inline-ranges:")) {
		header_value(line, len, 31, v, sizeof(v));
		h->meta.inline_ranges = strtoull(v, NULL, 10);
	} else if (header_is(line, len, "x-amz-meta-lidia-line-rows:")) {
		header_value(line, len, 27, v, sizeof(v));
		h->meta.line_rows = strtoull(v, NULL, 10);
	} else if (header_is(line, len, "content-length:")) {
		header_value(line, len, 15, v, sizeof(v));
		h->size = strtoull(v, NULL, 10);
	} else if (header_is(line, len, "etag:")) {
		header_value(line, len, 5, h->etag, sizeof(h->etag));
	}
}

static size_t read_header(char *line, size_t size, size_t nitems, void *arg)
{
	struct s3_request *r = arg;
	size_t len = size * nitems;

	/* A new response (after a 100 Continue, say): forget the last one's headers. */
	if (header_is(line, len, "HTTP/")) {
		r->retry_after[0] = 0;
		if (r->head)
			memset(r->head, 0, sizeof(*r->head));
	} else if (header_is(line, len, "retry-after:")) {
		header_value(line, len, 12, r->retry_after, sizeof(r->retry_after));
	} else if (header_is(line, len, "x-amz-bucket-region:")) {
		header_value(line, len, 20, r->bucket_region, sizeof(r->bucket_region));
	} else if (r->head) {
		meta_header(r->head, line, len);
	}
	return len;
}

/* ---- one attempt ---- */

static void set_common(struct s3_client *cl, struct s3_request *r, const char *url, char *sigv4)
{
	const struct s3_config *c = cl->c;
	CURL *h = cl->curl;

	s3_curl.easy_reset(h);
	cl->curl_err[0] = '\0';
	s3_curl.easy_setopt(h, CURLOPT_ERRORBUFFER, cl->curl_err);
	s3_curl.easy_setopt(h, CURLOPT_URL, url);
	/* The path is signed as written: libcurl must not tidy "/./" away after signing. */
	s3_curl.easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
	s3_curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	s3_curl.easy_setopt(h, CURLOPT_USERAGENT, cl->user_agent);
	/* AWS_CA_BUNDLE: the CAs to trust, as the AWS CLI reads it (a private MinIO, say). */
	if (cl->ca_bundle)
		s3_curl.easy_setopt(h, CURLOPT_CAINFO, cl->ca_bundle);
	s3_curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	s3_curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
	/* A transfer that moves under 1 byte/s for this long has stalled: cut it, and retry. */
	s3_curl.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	s3_curl.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, c->low_speed_seconds);
	/*
	 * And one that trickles (a byte a second passes the low speed limit)
	 * is cut when the whole takes longer than connecting, a first byte
	 * and its body at DEADLINE_MIN_RATE could.
	 */
	s3_curl.easy_setopt(h, CURLOPT_TIMEOUT_MS,
			    c->connect_timeout_ms + 2000 * c->low_speed_seconds +
				    (long)(r->len / DEADLINE_MIN_RATE * 1000));
	s3_curl.easy_setopt(h, CURLOPT_USERNAME, cl->creds.access_key);
	s3_curl.easy_setopt(h, CURLOPT_PASSWORD, cl->creds.secret_key);
	snprintf(sigv4, 128, "aws:amz:%s:s3", c->region);
	s3_curl.easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4);
	s3_curl.easy_setopt(h, CURLOPT_HTTPHEADER, r->headers);
	s3_curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, read_header);
	s3_curl.easy_setopt(h, CURLOPT_HEADERDATA, r);
	s3_curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, write_body);
	s3_curl.easy_setopt(h, CURLOPT_WRITEDATA, r);
	if (!strcmp(r->method, "HEAD")) {
		s3_curl.easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(r->method, "PUT")) {
		s3_curl.easy_setopt(h, CURLOPT_UPLOAD, 1L);
		s3_curl.easy_setopt(h, CURLOPT_READFUNCTION, read_body);
		s3_curl.easy_setopt(h, CURLOPT_READDATA, r);
		s3_curl.easy_setopt(h, CURLOPT_SEEKFUNCTION, seek_body);
		s3_curl.easy_setopt(h, CURLOPT_SEEKDATA, r);
		s3_curl.easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->len);
	} else if (!strcmp(r->method, "DELETE")) {
		s3_curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
	}
}

/* A name for a status that came without S3's error document. */
static const char *status_name(long status)
{
	switch (status) {
	case 301:
		return "PermanentRedirect";
	case 400:
		return "BadRequest";
	case 403:
		return "Forbidden";
	case 404:
		return "NotFound";
	case 405:
		return "MethodNotAllowed";
	case 429:
		return "TooManyRequests";
	case 500:
		return "InternalError";
	case 501:
		return "NotImplemented";
	case 503:
		return "ServiceUnavailable";
	default:
		return "Error";
	}
}

/* <Code> and <Message>, children of <Error>, into the error. */
static int error_element(void *ctx, unsigned depth, const char *parent, const char *name,
			 const char *text, bool whole)
{
	struct s3_error *err = ctx;

	if (depth == 1 && !strcmp(name, "Code"))
		snprintf(err->code, sizeof(err->code), "%s", text);
	else if (depth == 1 && !strcmp(name, "Message"))
		snprintf(err->message, sizeof(err->message), "%s", text);
	return 0;
}

/* S3's code and message from an error's body, read whole; else what the body is. */
static void error_body(const struct s3_request *r, struct s3_error *err)
{
	struct s3_xml_sink sink = { error_element, err };
	char why[160];

	if (!r->resp_len || r->resp_len >= S3_BODY_MAX)
		return; /* a HEAD's has none; a long one is no error document of S3's */
	if (s3_xml_parse(r->resp, r->resp_len, "Error", &sink, why, sizeof(why))) {
		/* A proxy's page, say: nothing of it is S3's code or message. */
		err->code[0] = 0;
		snprintf(err->message, sizeof(err->message), "a body that is not S3's <Error> (%s)",
			 why);
	}
	s3_xml_one_line(err->code);
	s3_xml_one_line(err->message);
}

/* A TLS handshake or certificate that failed: nothing about it changes between attempts. */
static bool tls_failure(CURLcode cc)
{
	switch (cc) {
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION: /* and CURLE_SSL_CACERT, its old name */
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_CLIENTCERT:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_SSL_ENGINE_SETFAILED:
	case CURLE_SSL_ENGINE_INITFAILED:
	case CURLE_USE_SSL_FAILED:
		return true;
	default:
		return false;
	}
}

/*
 * Network failures that may pass: the connection refused, lost or
 * stalled, and a host name not resolved, which is tried again as the AWS
 * SDKs do (a resolver's passing failure looks the same as a name that
 * does not exist; a request that reaches no server has two attempts at
 * most, so a wrong name costs one more lookup).
 */
static bool passing(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SEND_FAIL_REWIND:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return true;
	default:
		return false;
	}
}

/* Why a network failure is not tried again, for its message; NULL when it is. */
static const char *not_retried(CURLcode cc)
{
	if (cc == CURLE_OK || passing(cc))
		return NULL;
	if (tls_failure(cc))
		return "a TLS failure recurs";
	if (cc == CURLE_UNSUPPORTED_PROTOCOL || cc == CURLE_URL_MALFORMAT)
		return "the endpoint's URL cannot work";
	return "it would fail the same way again";
}

/* The code of a failure without an answer. */
static const char *network_code(CURLcode cc)
{
	if (cc == CURLE_OPERATION_TIMEDOUT)
		return "Timeout";
	if (cc == CURLE_COULDNT_RESOLVE_HOST || cc == CURLE_COULDNT_RESOLVE_PROXY)
		return "DNSError";
	return tls_failure(cc) ? "TLSError" : "ConnectionError";
}

/* What failed, from the response, or from libcurl when none came (its words name the host). */
static void describe(struct s3_client *cl, struct s3_request *r, CURLcode cc, struct s3_error *err)
{
	memset(err, 0, sizeof(*err));
	err->http_status = cc == CURLE_OK ? r->status : 0;
	if (cc != CURLE_OK) {
		snprintf(err->code, sizeof(err->code), "%s", network_code(cc));
		snprintf(err->message, sizeof(err->message), "%s",
			 cl->curl_err[0] ? cl->curl_err : s3_curl.easy_strerror(cc));
		s3_xml_one_line(err->message);
		err->not_retried = not_retried(cc);
		return;
	}
	error_body(r, err);
	/* A HEAD's answer has no body: the status is all there is. */
	if (!err->code[0])
		snprintf(err->code, sizeof(err->code), "%s", status_name(r->status));
	if (r->status == 301 && r->bucket_region[0])
		snprintf(err->message, sizeof(err->message),
			 "the bucket is in region %s: set --region %s", r->bucket_region,
			 r->bucket_region);
}

/* Whether a failed attempt is worth another. */
static bool retryable(CURLcode cc, long status)
{
	if (cc == CURLE_OK)
		return (status >= 500 && status != 501) || status == 429 || status == 408;
	return passing(cc);
}

/* Whether an attempt found no server: nothing came back, for a reason of the network's. */
static bool unreached(CURLcode cc)
{
	switch (cc) {
	case CURLE_OK:
	case CURLE_OUT_OF_MEMORY:
	case CURLE_WRITE_ERROR:
	case CURLE_READ_ERROR:
	case CURLE_ABORTED_BY_CALLBACK:
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
		return false;
	default:
		return true;
	}
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* How long to wait before attempt n + 1 (n >= 1): Retry-After, else full jitter. */
static double backoff_seconds(struct s3_client *cl, const struct s3_request *r, unsigned n)
{
	unsigned long cap = BACKOFF_BASE_MS << (n < 8 ? n : 8);

	if (r->retry_after[0]) {
		char *end;
		double s = strtod(r->retry_after, &end);

		if (end != r->retry_after && s >= 0 && s <= 3600)
			return s;
	}
	if (cap > BACKOFF_CAP_MS)
		cap = BACKOFF_CAP_MS;
	return (double)(rand_r(&cl->rand_state) % (cap + 1)) / 1000.0;
}

static void count(struct s3_client *cl, const struct s3_request *r, unsigned attempt)
{
	curl_off_t down = 0;

	/* What is sent is counted once accepted (s3_request_send): not a body refused. */
	s3_curl.easy_getinfo(cl->curl, CURLINFO_SIZE_DOWNLOAD_T, &down);
	cl->stats.requests++;
	cl->stats.bytes_received += (uint64_t)down;
	if (attempt > 1)
		cl->stats.retries++;
	if (!strcmp(r->method, "HEAD"))
		cl->stats.heads++;
	else if (!strcmp(r->method, "PUT"))
		cl->stats.puts++;
	else
		cl->stats.gets++;
}

static bool succeeded(const struct s3_request *r)
{
	return r->status < 300 || (r->status == 404 && !strcmp(r->method, "HEAD"));
}

/*
 * The object's URL, or the bucket's with its query. libcurl 7.88 signs the
 * query as written, unsorted: callers write its parameters in order.
 */
static int request_url(const struct s3_config *c, const struct s3_request *r, char *url,
		       size_t size)
{
	size_t n;
	int e;

	if (r->key)
		return s3_object_url(c, r->key, url, size);
	if ((e = s3_bucket_url(c, url, size)))
		return e;
	n = strlen(url);
	if (snprintf(url + n, size - n, "/%s%s", r->query ? "?" : "", r->query ? r->query : "") >=
	    (int)(size - n))
		return -ENAMETOOLONG;
	return 0;
}

/* "GET URL" (a key's: "PUT http://HOST:PORT"; the key is named already) for messages. */
static void name_request(struct s3_request *r, const char *url)
{
	const char *host = strstr(url, "://");
	size_t n = host ? strcspn(host + 3, "/") + (size_t)(host + 3 - url) : strlen(url);

	snprintf(r->endpoint, sizeof(r->endpoint), "%.*s", (int)n, url);
	snprintf(r->request, sizeof(r->request), "%s %s", r->method, r->key ? r->endpoint : url);
}

int s3_distrust(struct s3_client *cl, const struct s3_request *r, const char *why,
		struct s3_error *err)
{
	char line[640];

	memset(err, 0, sizeof(*err));
	snprintf(err->request, sizeof(err->request), "%s", r->request);
	err->http_status = r->status;
	snprintf(err->code, sizeof(err->code), "NotS3");
	snprintf(err->message, sizeof(err->message),
		 "a body that is not %s%s (%s), nothing decided from it",
		 r->expect ? "a " : "the empty one of a ", r->expect ? r->expect : r->method, why);
	s3_xml_one_line(err->message);
	snprintf(line, sizeof(line), "%s: %ld with %s", r->request, r->status, err->message);
	s3_breaker_open(cl->c->breaker, line);
	return -EPROTO;
}

/* A 2xx answer is S3's: the document asked for, whole; a PUT's, no body at all. */
static int check_answer(struct s3_client *cl, struct s3_request *r, struct s3_error *err)
{
	char why[160];

	if (r->status == 404 || !strcmp(r->method, "HEAD"))
		return 0;
	if (r->expect && s3_xml_parse(r->resp, r->resp_len, r->expect, NULL, why, sizeof(why)))
		return s3_distrust(cl, r, why, err);
	if (!strcmp(r->method, "PUT") && r->resp_len && r->resp_len != strspn(r->resp, " \t\r\n")) {
		/* S3 answers a PUT it took with no body; an <Error> in a 200 took nothing. */
		if (s3_xml_parse(r->resp, r->resp_len, "Error", NULL, why, sizeof(why)))
			snprintf(why, sizeof(why), "%.*s", 40, r->resp);
		else
			snprintf(why, sizeof(why), "an <Error> document");
		s3_xml_one_line(why);
		return s3_distrust(cl, r, why, err);
	}
	return 0;
}

/* A 2xx answer, checked; a PUT's body counts as sent once the server took it. */
static int accepted(struct s3_client *cl, struct s3_request *r, struct s3_error *err)
{
	int e = check_answer(cl, r, err);

	if (!e && r->status < 300 && !strcmp(r->method, "PUT"))
		cl->stats.bytes_sent += r->len;
	return e;
}

/* The breaker is open: nothing is sent. */
static int not_sent(const struct s3_request *r, struct s3_error *err, unsigned attempts)
{
	memset(err, 0, sizeof(*err));
	snprintf(err->request, sizeof(err->request), "%s", r->request);
	snprintf(err->code, sizeof(err->code), "NotSent");
	snprintf(err->message, sizeof(err->message),
		 "not sent: %.180s failed before (said once, with the reason)", r->endpoint);
	err->attempts = attempts;
	return -ECANCELED;
}

/* The credentials of this attempt, refreshed when due; err says why when none can be had. */
static int attempt_creds(struct s3_client *cl, struct s3_request *r, unsigned stale,
			 struct s3_error *err)
{
	int e = aws_creds_now(cl->c, stale, &cl->creds, err->message, sizeof(err->message));

	if (e) {
		snprintf(err->request, sizeof(err->request), "%s", r->request);
		snprintf(err->code, sizeof(err->code), "ExpiredToken");
	}
	return e;
}

/* One attempt, signed with the credentials of the moment. */
static CURLcode attempt_once(struct s3_client *cl, struct s3_request *r, const char *url,
			     char *sigv4)
{
	struct curl_slist *before;
	CURLcode cc;

	s3_request_done(r);
	r->status = 0;
	r->sent = 0;
	if (!token_add(cl, r, &before))
		return CURLE_OUT_OF_MEMORY;
	set_common(cl, r, url, sigv4);
	cc = s3_curl.easy_perform(cl->curl);
	token_drop(cl, r, before);
	s3_curl.easy_getinfo(cl->curl, CURLINFO_RESPONSE_CODE, &r->status);
	return cc;
}

/*
 * S3 says the token has expired: worth one more attempt with credentials
 * found again. A HEAD's answer has no body to say so: its bare 400 is
 * taken for it (a HEAD has nothing else to be malformed about).
 */
static bool expired(const struct s3_client *cl, const struct s3_request *r, CURLcode cc,
		    const struct s3_error *err)
{
	if (!cl->c->keeper || cc != CURLE_OK)
		return false;
	return !strcmp(err->code, "ExpiredToken") || (r->head && r->status == 400);
}

int s3_request_send(struct s3_client *cl, struct s3_request *r, struct s3_error *err)
{
	const struct s3_config *c = cl->c;
	char url[4096], sigv4[128];
	double start = now_seconds();
	unsigned attempt = 0, stale = 0;
	bool renewed = false;
	CURLcode cc = CURLE_OK;
	int e;

	if ((e = request_url(c, r, url, sizeof(url))))
		return e;
	name_request(r, url);
	for (;;) {
		double wait;

		if (!s3_breaker_admit(c->breaker, attempt == 0 && r->key)) {
			if (!attempt)
				return not_sent(r, err, attempt);
			break;
		}
		if ((e = attempt_creds(cl, r, stale, err)))
			return e;
		attempt++;
		cc = attempt_once(cl, r, url, sigv4);
		count(cl, r, attempt);
		s3_breaker_note(c->breaker, !unreached(cc), r->endpoint, s3_curl.easy_strerror(cc));
		if (cc == CURLE_OK && succeeded(r))
			return accepted(cl, r, err);
		describe(cl, r, cc, err);
		snprintf(err->request, sizeof(err->request), "%s", r->request);
		err->attempts = attempt;
		e = cc == CURLE_OK ? (r->status == 403 ? -EACCES : -EIO) : -ECOMM;
		if (!renewed && expired(cl, r, cc, err)) {
			renewed = true;
			stale = cl->creds.generation;
			continue;
		}
		if (!retryable(cc, r->status) || attempt >= c->max_attempts ||
		    (unreached(cc) && attempt >= UNREACHED_ATTEMPTS))
			break;
		wait = backoff_seconds(cl, r, attempt);
		if (now_seconds() - start + wait > c->max_retry_seconds)
			break;
		usleep((useconds_t)(wait * 1e6));
	}
	/* A key lost with the endpoint: the breaker's one line says it (err keeps the reason). */
	if (r->key && unreached(cc) && s3_breaker_fold(c->breaker))
		return -ECANCELED;
	return e;
}

void s3_error_format(const struct s3_error *err, char *buf, size_t size)
{
	char tries[96] = "";

	if (err->attempts > 1)
		snprintf(tries, sizeof(tries), " (after %u attempts)", err->attempts);
	else if (err->not_retried)
		snprintf(tries, sizeof(tries), " (1 attempt, not retried: %s)", err->not_retried);
	const char *sep = err->request[0] ? ": " : "";

	if (err->http_status)
		snprintf(buf, size, "%s%s%ld %s%s%s%s", err->request, sep, err->http_status,
			 err->code, err->message[0] ? ": " : "", err->message, tries);
	else
		snprintf(buf, size, "%s%s%s: %s%s", err->request, sep, err->code, err->message,
			 tries);
}
