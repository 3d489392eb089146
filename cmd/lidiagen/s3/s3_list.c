/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ListObjectsV2, a page at a time: what a prefix holds, 1000 keys a
 * request, so that publishing asks one HEAD only of keys that are there
 * and differ, and none of keys that are not. Of its XML, s3_xml.c reads
 * <Contents> with <Key>, <ETag> and <Size>, and <NextContinuationToken>.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_request.h"

/* A page of 1000 keys is some 300 KiB of XML. */
#define LIST_BODY_MAX (8u << 20)

/* Each <Contents> of the page to fn, keys made relative to the config's prefix. */
static int each_object(const struct s3_config *c, const char *doc,
		       int (*fn)(void *ctx, const struct s3_listed *o), void *ctx)
{
	size_t skip = *c->prefix ? strlen(c->prefix) + 1 : 0;
	char key[1100], etag[80], size[32];
	const char *p = doc, *end;
	int ret;

	while ((p = strstr(p, "<Contents>")) && (end = strstr(p, "</Contents>"))) {
		struct s3_listed o = { .key = key + skip, .etag = etag };

		if (!s3_xml_element(p, end, "Key", key, sizeof(key), true) || strlen(key) < skip ||
		    strncmp(key, c->prefix, skip ? skip - 1 : 0) || (skip && key[skip - 1] != '/'))
			return -EPROTO;
		if (!s3_xml_element(p, end, "ETag", etag, sizeof(etag), false))
			etag[0] = 0;
		if (etag[0] == '"' && strlen(etag) >= 2) {
			memmove(etag, etag + 1, strlen(etag));
			etag[strlen(etag) - 1] = 0;
		}
		if (s3_xml_element(p, end, "Size", size, sizeof(size), false))
			o.size = strtoull(size, NULL, 10);
		if ((ret = fn(ctx, &o)))
			return ret;
		p = end;
	}
	return 0;
}

/* "continuation-token=T&list-type=2&prefix=P": sorted, as libcurl signs it as written. */
static int list_query(const struct s3_config *c, const char *under, const char *token, char *q,
		      size_t size)
{
	char prefix[1100], enc_prefix[3300], enc_token[3 * 1024 + 1];
	int n;

	/* PREFIX/, never PREFIX alone: "rel/v1" would list "rel/v10/..." too. */
	n = snprintf(prefix, sizeof(prefix), "%s%s%s", c->prefix, *c->prefix ? "/" : "", under);
	if (n < 0 || (size_t)n >= sizeof(prefix) ||
	    s3_query_value(prefix, enc_prefix, sizeof(enc_prefix)) ||
	    s3_query_value(token, enc_token, sizeof(enc_token)))
		return -ENAMETOOLONG;
	n = snprintf(q, size, "%s%s%slist-type=2%s%s", *token ? "continuation-token=" : "",
		     enc_token, *token ? "&" : "", *prefix ? "&prefix=" : "", enc_prefix);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int s3_list_page(struct s3_client *cl, const char *under, char *token, size_t token_size,
		 int (*fn)(void *ctx, const struct s3_listed *o), void *ctx, struct s3_error *err)
{
	char query[8192];
	struct s3_request r = { .method = "GET", .query = query, .resp_max = LIST_BODY_MAX };
	int e;

	memset(err, 0, sizeof(*err));
	if ((e = list_query(cl->c, under, token, query, sizeof(query))))
		return e;
	if (!s3_add_auth_headers(cl->c, &r.headers, S3_EMPTY_SHA256)) {
		s3_curl.slist_free_all(r.headers);
		return -ENOMEM;
	}
	if (!(e = s3_request_send(cl, &r, err))) {
		e = r.resp ? each_object(cl->c, r.resp, fn, ctx) : -EPROTO;
		if (!e &&
		    !(r.resp && s3_xml_element(r.resp, r.resp + r.resp_len, "NextContinuationToken",
					       token, token_size, true)))
			token[0] = 0;
	}
	if (e == -EPROTO)
		snprintf(err->message, sizeof(err->message), "a listing that is not S3's");
	s3_request_done(&r);
	s3_curl.slist_free_all(r.headers);
	return e;
}
