/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Publishing to S3-compatible object storage: the store side of the
 * command, not part of liblidia, so that users who only read or write lidia
 * files never need libcurl (doc/publishing.md). Like the library, nothing
 * here prints or exits: errors come back as codes and messages.
 *
 *  - aws_config.c: settings the AWS way (options and YAML first, then the
 *    environment, then the profile files: aws_files.c, aws_ini.c), the
 *    bucket and prefix (aws_url.c), and credentials (aws_credentials.c)
 *    in the AWS CLI's order: the environment, roles through STS (sts.c),
 *    the profile, credential_process (process.c), a container's agent
 *    (container.c), the instance metadata service (imds.c), kept fresh
 *    while they last (aws_refresh.c);
 *  - s3_url.c: keys, and the URL of a key (virtual-hosted or path style),
 *    each character encoded as SigV4 wants;
 *  - s3_request.c: one signed request through libcurl (CURLOPT_AWS_SIGV4,
 *    with x-amz-content-sha256 sent and signed), within its deadlines,
 *    retried with backoff; s3_breaker.c: the run's circuit breaker, which
 *    stops every request once the endpoint is gone or answers nonsense;
 *  - s3_object.c: HEAD and PUT of one object and its lidia metadata, and
 *    the bucket check; s3_list.c: listings; s3_xml.c: S3's XML, read
 *    strictly by libexpat; md5.c;
 *  - curl_load.c, expat_load.c: libcurl and libexpat, loaded (dlopen) when
 *    a bucket is first opened, not linked, so that a run that never
 *    publishes does not carry them.
 */
#ifndef LIDIAGEN_S3_H
#define LIDIAGEN_S3_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* ---- aws_*.c: settings and credentials (aws_config.c has the order) ---- */

/* What the command line and the YAML config say; NULL or false: not given. */
struct s3_overrides {
	const char *region;
	const char *endpoint_url;
	const char *profile;
	bool path_style;
	/* --connect-timeout, --read-timeout: seconds; 0: not given */
	unsigned connect_timeout, read_timeout;
};

struct s3_credentials {
	char *access_key, *secret_key, *session_token; /* session_token may be NULL */
	time_t expires;	 /* temporary credentials: when they end; 0: they do not */
	char source[64]; /* "environment", "profile NAME", "instance metadata": never the secret */
	/* For -v, more of the source: "in PATH" (a profile's), "(role NAME at URL)" (IMDS's), "" */
	char where[PATH_MAX + 96];
};

struct s3_keeper; /* aws_refresh.c */

struct s3_config {
	char *bucket;	 /* from s3://BUCKET/PREFIX */
	char *prefix;	 /* "" or "a/b", without leading or trailing '/' */
	char *region;	 /* AWS_REGION, AWS_DEFAULT_REGION, profile, --region; else us-east-1 */
	char *endpoint;	 /* scheme://host[:port][/path] without trailing '/'; NULL: AWS's */
	bool path_style; /* https://ENDPOINT/BUCKET/KEY rather than https://BUCKET.ENDPOINT/KEY */
	char *sts_endpoint; /* for roles: AWS_ENDPOINT_URL_STS..., else AWS's regional one */
	struct s3_credentials creds; /* as first found: what -v tells */
	struct s3_keeper *keeper; /* temporary credentials kept fresh; NULL: they do not expire */
	/* retries: at most max_attempts tries per request, within max_retry_seconds in all */
	unsigned max_attempts;
	double max_retry_seconds;
	/*
	 * Deadlines: to connect; to see a byte (a transfer that moves nothing
	 * for low_speed_seconds is cut); and for the whole request, from
	 * these and the body's size (s3_request.c).
	 */
	long connect_timeout_ms, low_speed_seconds;
	struct s3_breaker *breaker; /* shared by every client of the config */
	/*
	 * For -v (s3_config_describe): where the region, the endpoint and the
	 * attempts came from ("from AWS_REGION", "the default"), and why this
	 * addressing style.
	 */
	char *region_from, *endpoint_from, *attempts_from;
	const char *addressing_why;
};

/*
 * Fill c for url ("s3://BUCKET[/PREFIX]") from the overrides, the
 * environment and the AWS files, load libcurl (-ELIBACC when it is
 * missing), and find credentials. On failure, a negative errno and a
 * one-line reason in err (never a secret), which names what it is about:
 * the URL itself ("'s3://...': ..."), the bucket's settings
 * ("s3://BUCKET/PREFIX: region ..."), or "credentials: ...".
 */
int s3_config_load(struct s3_config *c, const char *url, const struct s3_overrides *ov, char *err,
		   size_t err_size);
void s3_config_free(struct s3_config *c);

/*
 * For -v: the settings in use, a line each (endpoint and addressing,
 * region, retries and deadlines, credentials), '\n' between them, into
 * buf. Never a secret: of the access key id, its last 4 characters at
 * most, as `aws configure list` shows it.
 */
void s3_config_describe(const struct s3_config *c, char *buf, size_t size);

/* Whether arg names a bucket (starts with "s3://"). */
bool s3_is_url(const char *arg);

/*
 * Why arg, given where a directory or s3://BUCKET[/PREFIX] goes, is
 * neither: it looks like a URL ("s3:/b", "S3://b", "s3:b", "gs://b") but
 * is not s3:// exactly. NULL when it is a bucket, or a plain path. The
 * message, in buf, ends with what was meant when that can be told.
 */
const char *s3_url_typo(const char *arg, char *buf, size_t size);

/* ---- s3_url.c ---- */

/*
 * The URL of key (already laid out, "symbolizer/anonymous/<id>") under the
 * config's prefix, every byte outside A-Za-z0-9-._~/ percent-encoded, into
 * buf; -ENAMETOOLONG when it does not fit.
 */
int s3_object_url(const struct s3_config *c, const char *key, char *buf, size_t size);

/* The bucket's own URL (for HeadBucket): ENDPOINT/BUCKET or scheme://BUCKET.host. */
int s3_bucket_url(const struct s3_config *c, char *buf, size_t size);

/* A query parameter's value as SigV4 wants it: all but A-Za-z0-9-._~ encoded. */
int s3_query_value(const char *value, char *buf, size_t size);

/* PREFIX/key or key: the object's full key, into buf. */
int s3_full_key(const struct s3_config *c, const char *key, char *buf, size_t size);

/* ---- s3_request.c and s3_object.c: one client per thread ---- */

/* Why a request failed: enough for one line naming the key and the endpoint. */
struct s3_error {
	char request[320]; /* "PUT http://HOST:PORT", "GET http://HOST:PORT/b?list-type=2..." */
	long http_status;  /* 0: no response (connection, timeout) */
	char code[64];	   /* S3's <Code>, or what failed: Timeout, TLSError, DNSError... */
	char message[256];
	unsigned attempts;
	const char *not_retried; /* a network failure tried once only: why (it cannot succeed) */
};

/*
 * What was sent, for the summary, --dry-run's report and the benchmark.
 * bytes_sent: the bodies of the PUTs the server accepted (2xx), each
 * once: not those refused, nor the attempts that failed before one that
 * was accepted.
 */
struct s3_stats {
	uint64_t requests, heads, puts, gets, retries;
	uint64_t bytes_sent, bytes_received;
};

/* The lidia metadata of an object (x-amz-meta-lidia-*). */
struct s3_meta {
	char holds[32];	  /* "symbols", "symbols+lines", "symbols+lines+inlines" */
	char sha256[65];  /* of the object's bytes */
	char version[64]; /* the producer: "lidiagen 0.9.0" */
	uint64_t functions, inline_ranges, line_rows;
};

/* What HEAD told of an object. */
struct s3_head {
	bool exists;
	bool ours; /* it carries our metadata (lidiagen wrote it) */
	uint64_t size;
	char etag[80];	     /* as sent, quotes and all: what an If-Match names */
	struct s3_meta meta; /* when ours */
};

struct s3_client;

/*
 * A client: one connection kept open between its requests; used by one
 * thread at a time. -ELIBACC without libcurl (s3_config_load says why).
 */
int s3_client_new(struct s3_client **out, const struct s3_config *c);
void s3_client_free(struct s3_client *cl);

/* Add this client's counts to *st and zero them. */
void s3_client_take_stats(struct s3_client *cl, struct s3_stats *st);

/* HEAD of key: 0 with h->exists false for 404; negative errno and err otherwise. */
int s3_head(struct s3_client *cl, const char *key, struct s3_head *h, struct s3_error *err);

/*
 * A PUT's condition (S3's conditional writes): none, create only
 * (If-None-Match: *, 412 when the key exists), or replace only the object
 * with this ETag (If-Match, 412 when it differs, 404 when there is none).
 * A conditional PUT may also meet 409 ConditionalRequestConflict.
 */
struct s3_cond {
	enum { S3_COND_NONE, S3_COND_CREATE, S3_COND_MATCH } kind;
	const char *etag; /* S3_COND_MATCH's, quotes and all */
};

/*
 * PUT of one object, whole in one request (no reader ever sees half of
 * it), with its metadata, Content-MD5 and x-amz-content-sha256, which the
 * server checks (meta NULL: none), and the condition cond (NULL: none). Negative errno and
 * err on failure (err->http_status 412, 409 or 404: the condition's).
 */
int s3_put(struct s3_client *cl, const char *key, const void *data, size_t len,
	   const struct s3_meta *meta, const struct s3_cond *cond, struct s3_error *err);

/* DELETE of key (404 is no error: it is gone). Negative errno and err on failure. */
int s3_delete(struct s3_client *cl, const char *key, struct s3_error *err);

/* One object of a listing: its key (under the config's prefix, without it), ETag, size. */
struct s3_listed {
	const char *key;
	const char *etag; /* as S3 gives it, quotes removed: the MD5 of a single PUT's body */
	uint64_t size;
};

/*
 * One page (up to 1000 keys, in key order) of ListObjectsV2 under the
 * config's prefix joined with under ("" for all), after *token ("" for
 * the first page): each object to fn (which returns 0 to go on). *token
 * then holds the next page's token, "" after the last page.
 */
int s3_list_page(struct s3_client *cl, const char *under, char *token, size_t token_size,
		 int (*fn)(void *ctx, const struct s3_listed *o), void *ctx, struct s3_error *err);

/*
 * Before any work: 0 when the bucket is there and ours to list (and so
 * our credentials, clock and region are right); else S3's reason:
 * NoSuchBucket, a wrong region (301), AccessDenied, SignatureDoesNotMatch...
 */
int s3_check_bucket(struct s3_client *cl, struct s3_error *err);

/* "PUT http://HOST: 403 AccessDenied: Access Denied" and the like, for messages. */
void s3_error_format(const struct s3_error *err, char *buf, size_t size);

/*
 * s3_breaker.c. The run's circuit breaker, one per config, shared by its
 * clients: it opens after S3_BREAKER_FAILS requests in a row found no
 * server (connection refused or reset, TLS failed, a deadline passed), or
 * at once when a 2xx answer is not what S3 sends (a listing that is not a
 * ListBucketResult). Open, every request fails at once with -ECANCELED,
 * sending nothing: a dead endpoint costs seconds, not a timeout per key.
 */
#define S3_BREAKER_FAILS 3

/*
 * Whether the breaker is open: then one line into buf, naming the endpoint
 * and why, and how many keys were not sent.
 */
bool s3_stopped(const struct s3_config *c, char *buf, size_t size);

#endif
