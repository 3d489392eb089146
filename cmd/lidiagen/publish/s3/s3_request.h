/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One signed S3 request, retried (s3_request.c), for s3_object.c and
 * s3_list.c: the client's internals. S3's XML is s3_xml.h's, the breaker's
 * side the requests see s3_breaker.h's.
 */
#ifndef LIDIAGEN_S3_REQUEST_H
#define LIDIAGEN_S3_REQUEST_H

#include "aws_refresh.h"
#include "curl_load.h"
#include "s3.h"
#include "s3_breaker.h"
#include "s3_xml.h"

/* The response bodies kept: S3's error documents are small. */
#define S3_BODY_MAX 65536

/* sha256 of nothing: the payload hash of a request without a body. */
#define S3_EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

struct s3_client {
	const struct s3_config *c;
	CURL *curl;
	struct s3_stats stats;
	unsigned rand_state;   /* the jitter's generator */
	const char *ca_bundle; /* AWS_CA_BUNDLE, or NULL */
	char user_agent[48];
	char curl_err[CURL_ERROR_SIZE]; /* libcurl's own words on a failure: host, port, TLS */
	struct s3_creds_copy creds;	/* what the attempt under way signs with */
};

/* A request and what came back of it. */
struct s3_request {
	const char *method; /* "HEAD", "PUT", "GET" or "DELETE" */
	const char *key;    /* laid out, without the prefix; NULL: the bucket itself */
	const char *query;  /* of a request to the bucket: its parameters, in sorted order */
	const char *expect; /* the root element a 2xx answer's body must have, or NULL */
	const void *body;   /* PUT's */
	size_t len;
	struct curl_slist *headers; /* extra headers, signed with the rest */
	/* the response */
	long status;
	char *resp;
	size_t resp_len;
	size_t resp_max; /* the most kept (0: S3_BODY_MAX) */
	char retry_after[16];
	char bucket_region[64]; /* x-amz-bucket-region, for a wrong region's message */
	struct s3_head *head;	/* headers to read into (HEAD), or NULL */
	size_t sent;		/* of body, by the read callback */
	/* for messages (s3_request_send): "GET http://HOST:PORT/BUCKET?QUERY", and "http://HOST:PORT" */
	char request[320];
	char endpoint[256];
};

/*
 * Send r (again on failures worth retrying: 5xx, 429, timeouts, resets,
 * a host name not resolved, with exponential backoff and jitter,
 * honouring Retry-After, within the config's attempts and seconds; a
 * server not reached is tried twice at most; a TLS failure, a URL that
 * cannot work and the like, once, err->not_retried saying why). 0 when the server answered with a status below 300 (and with
 * r->expect, a whole document of that root; a PUT's, no body at all), or
 * 404 for a HEAD; otherwise a negative errno and err: -ECANCELED when the
 * breaker is open and nothing was sent, -EPROTO for a 2xx answer that is
 * not S3's (and the breaker opened by it).
 */
int s3_request_send(struct s3_client *cl, struct s3_request *r, struct s3_error *err);

/* Append "name: value" to the list; false when out of memory. */
bool s3_add_header(struct curl_slist **list, const char *name, const char *value);

/*
 * The header every request has: the payload's hash, which libcurl 7.88
 * neither computes nor sends (S3 wants it). The session token is added by
 * s3_request_send, attempt by attempt: it may be refreshed between them.
 */
bool s3_add_auth_headers(const struct s3_config *c, struct curl_slist **list,
			 const char *payload_sha);

/*
 * A 2xx answer to r that is not S3's (why: what it is instead): err says
 * so, naming the request, and the breaker opens, for nothing more is to
 * be believed of that endpoint. Returns -EPROTO.
 */
int s3_distrust(struct s3_client *cl, const struct s3_request *r, const char *why,
		struct s3_error *err);

/* Release what the response holds. */
void s3_request_done(struct s3_request *r);

#endif
