/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HEAD and PUT of one object. Every request carries x-amz-content-sha256
 * (S3 refuses a signed request without it, and checks the body against
 * it) and, with temporary credentials, x-amz-security-token; a PUT also
 * carries Content-MD5, the checksum every S3-compatible server checks,
 * and our metadata: what the object holds, its sha256, its counts and the
 * producing version, so that a later run decides from a HEAD alone. A
 * PUT may be conditional (S3's If-None-Match and If-Match), so that of two
 * publishers of one key neither overwrites what it has not seen.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "md5.h"
#include "s3_request.h"
#include "sha256.h"

static bool add_meta_headers(struct curl_slist **list, const struct s3_meta *m)
{
	char n[3][24];

	if (!m)
		return true; /* the probe's empty object (publish.c) */
	snprintf(n[0], sizeof(n[0]), "%" PRIu64, m->functions);
	snprintf(n[1], sizeof(n[1]), "%" PRIu64, m->inline_ranges);
	snprintf(n[2], sizeof(n[2]), "%" PRIu64, m->line_rows);
	return s3_add_header(list, "x-amz-meta-lidia-holds", m->holds) &&
	       s3_add_header(list, "x-amz-meta-lidia-sha256", m->sha256) &&
	       s3_add_header(list, "x-amz-meta-lidia-version", m->version) &&
	       s3_add_header(list, "x-amz-meta-lidia-functions", n[0]) &&
	       s3_add_header(list, "x-amz-meta-lidia-inline-ranges", n[1]) &&
	       s3_add_header(list, "x-amz-meta-lidia-line-rows", n[2]);
}

int s3_head(struct s3_client *cl, const char *key, struct s3_head *h, struct s3_error *err)
{
	struct s3_request r = { .method = "HEAD", .key = key, .head = h };
	int e = -ENOMEM;

	memset(h, 0, sizeof(*h));
	memset(err, 0, sizeof(*err));
	if (s3_add_auth_headers(cl->c, &r.headers, S3_EMPTY_SHA256))
		e = s3_request_send(cl, &r, err);
	if (!e) {
		h->exists = r.status != 404;
		/* Our metadata, whole and well formed, or the object is not ours. */
		h->ours = h->exists && h->ours && strlen(h->meta.sha256) == 64;
	}
	s3_request_done(&r);
	s3_curl.slist_free_all(r.headers);
	return e;
}

/*
 * A listing of no key rather than HeadBucket: it needs the same permission
 * (s3:ListBucket), and unlike a HEAD its answer to a refusal has a body
 * with S3's reason (SignatureDoesNotMatch, RequestTimeTooSkewed...).
 */
int s3_check_bucket(struct s3_client *cl, struct s3_error *err)
{
	struct s3_request r = { .method = "GET",
				.query = "list-type=2&max-keys=0",
				.expect = "ListBucketResult" };
	int e = -ENOMEM;

	memset(err, 0, sizeof(*err));
	if (s3_add_auth_headers(cl->c, &r.headers, S3_EMPTY_SHA256))
		e = s3_request_send(cl, &r, err);
	s3_request_done(&r);
	s3_curl.slist_free_all(r.headers);
	return e;
}

static bool add_cond_header(struct curl_slist **list, const struct s3_cond *cond)
{
	if (!cond || cond->kind == S3_COND_NONE)
		return true;
	if (cond->kind == S3_COND_CREATE)
		return s3_add_header(list, "If-None-Match", "*");
	return s3_add_header(list, "If-Match", cond->etag);
}

int s3_put(struct s3_client *cl, const char *key, const void *data, size_t len,
	   const struct s3_meta *meta, const struct s3_cond *cond, struct s3_error *err)
{
	struct s3_request r = { .method = "PUT", .key = key, .body = data, .len = len };
	char sha[65], md5[25];
	int e = -ENOMEM;

	memset(err, 0, sizeof(*err));
	sha256_hex(data, len, sha);
	md5_base64(data, len, md5);
	/*
	 * libcurl sends "Expect: 100-continue" before a body over 1 KiB, and a
	 * refusal then costs no body. It cannot be turned off with "Expect:":
	 * libcurl 7.88 signs that empty header, which is then not sent.
	 */
	if (s3_add_auth_headers(cl->c, &r.headers, sha) &&
	    s3_add_header(&r.headers, "Content-Type", "application/octet-stream") &&
	    s3_add_header(&r.headers, "Content-MD5", md5) && add_meta_headers(&r.headers, meta) &&
	    add_cond_header(&r.headers, cond))
		e = s3_request_send(cl, &r, err);
	s3_request_done(&r);
	s3_curl.slist_free_all(r.headers);
	return e;
}

int s3_delete(struct s3_client *cl, const char *key, struct s3_error *err)
{
	struct s3_request r = { .method = "DELETE", .key = key };
	int e = -ENOMEM;

	memset(err, 0, sizeof(*err));
	if (s3_add_auth_headers(cl->c, &r.headers, S3_EMPTY_SHA256))
		e = s3_request_send(cl, &r, err);
	if (e && err->http_status == 404)
		e = 0;
	s3_request_done(&r);
	s3_curl.slist_free_all(r.headers);
	return e;
}
