/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ListObjectsV2, a page at a time: what a prefix holds, 1000 keys a
 * request, so that publishing asks one HEAD only of keys that are there
 * and differ, and none of keys that are not. Its XML is read whole
 * (s3_xml.c) and believed only when every field relied on is there and
 * agrees: <IsTruncated>, <NextContinuationToken> when truncated, <KeyCount>
 * when given, and each <Contents>'s <Key>, <ETag> and <Size>. A page that
 * is not one is no listing of nothing: the request fails, naming itself,
 * and the breaker opens (s3_request.h, s3_distrust).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_request.h"

/* A page of 1000 keys is some 300 KiB of XML. */
#define LIST_BODY_MAX (8u << 20)

/* One page read: checked whole first, then each object handed on. */
struct page {
	const struct s3_config *c;
	int (*fn)(void *ctx, const struct s3_listed *o);
	void *ctx;	/* NULL fn: the checking pass */
	size_t skip;	/* the config's prefix and its '/' */
	int truncated;	/* <IsTruncated>: -1 not seen */
	long key_count; /* <KeyCount>: -1 not seen */
	size_t objects, prefixes;
	char *token; /* <NextContinuationToken> */
	size_t token_size;
	bool have_token;
	/* the <Contents> at hand */
	char key[1100], etag[80];
	bool have_key, have_etag, have_size;
	uint64_t size;
	const char *why; /* what is wrong with the page */
};

static int wrong(struct page *pg, const char *why)
{
	pg->why = why;
	return -EPROTO;
}

/* A <Contents>'s child: Key (whole, under the prefix), ETag (quotes removed), Size. */
static int contents_field(struct page *pg, const char *name, const char *text, bool whole)
{
	const char *prefix = pg->c->prefix;
	size_t n = strlen(text);
	char *end;

	if (!strcmp(name, "Key")) {
		/* A key cut short would be another key. */
		if (!whole || n >= sizeof(pg->key) || n <= pg->skip)
			return wrong(pg, "a <Key> too long or empty");
		if (pg->skip && (strncmp(text, prefix, pg->skip - 1) || text[pg->skip - 1] != '/'))
			return wrong(pg, "a <Key> outside the prefix asked for");
		memcpy(pg->key, text, n + 1);
		pg->have_key = true;
	} else if (!strcmp(name, "ETag")) {
		if (n >= 2 && text[0] == '"' && text[n - 1] == '"')
			text++, n -= 2;
		if (!n || n >= sizeof(pg->etag))
			return wrong(pg, "an <ETag> empty or too long");
		memcpy(pg->etag, text, n);
		pg->etag[n] = 0;
		pg->have_etag = true;
	} else if (!strcmp(name, "Size")) {
		errno = 0;
		pg->size = strtoull(text, &end, 10);
		if (!*text || *end || text[0] == '-' || errno)
			return wrong(pg, "a <Size> that is not a number");
		pg->have_size = true;
	}
	return 0;
}

/* A <Contents> ended: whole, it goes to fn (in the second pass). */
static int contents_end(struct page *pg)
{
	struct s3_listed o = { .key = pg->key + pg->skip, .etag = pg->etag, .size = pg->size };
	int ret = 0;

	if (!pg->have_key || !pg->have_etag || !pg->have_size)
		return wrong(pg, "a <Contents> without its <Key>, <ETag> or <Size>");
	pg->objects++;
	if (pg->fn)
		ret = pg->fn(pg->ctx, &o);
	pg->have_key = pg->have_etag = pg->have_size = false;
	return ret;
}

/* A child of <ListBucketResult>: the fields the page is believed by. */
static int result_field(struct page *pg, const char *name, const char *text, bool whole)
{
	char *end;

	if (!strcmp(name, "Contents"))
		return contents_end(pg);
	if (!strcmp(name, "CommonPrefixes")) {
		pg->prefixes++;
	} else if (!strcmp(name, "IsTruncated")) {
		if (strcmp(text, "true") && strcmp(text, "false"))
			return wrong(pg, "an <IsTruncated> neither true nor false");
		pg->truncated = !strcmp(text, "true");
	} else if (!strcmp(name, "KeyCount")) {
		pg->key_count = strtol(text, &end, 10);
		if (!*text || *end || pg->key_count < 0)
			return wrong(pg, "a <KeyCount> that is not a number");
	} else if (!strcmp(name, "NextContinuationToken")) {
		if (!whole || !*text || strlen(text) >= pg->token_size)
			return wrong(pg, "a <NextContinuationToken> empty or too long");
		if (pg->fn)
			snprintf(pg->token, pg->token_size, "%s", text);
		pg->have_token = true;
	}
	return 0;
}

static int page_element(void *ctx, unsigned depth, const char *parent, const char *name,
			const char *text, bool whole)
{
	struct page *pg = ctx;

	if (depth == 1)
		return result_field(pg, name, text, whole);
	if (depth == 2 && !strcmp(parent, "Contents"))
		return contents_field(pg, name, text, whole);
	return 0;
}

/* The whole page's own account of itself: truncated or not, and how many keys. */
static int page_complete(struct page *pg)
{
	if (pg->truncated < 0)
		return wrong(pg, "a listing without <IsTruncated>");
	if (pg->truncated && !pg->have_token)
		return wrong(pg, "a truncated listing without <NextContinuationToken>");
	if (pg->key_count >= 0 && (size_t)pg->key_count != pg->objects + pg->prefixes)
		return wrong(pg, "a <KeyCount> that is not the number of keys in it");
	return 0;
}

/*
 * The page's objects to fn, keys made relative to the config's prefix,
 * once all of it has been read and found whole: nothing is decided from a
 * page with a flaw anywhere in it. *token: the next page's, "" after the last.
 */
static int read_page(struct s3_client *cl, const struct s3_request *r, char *token,
		     size_t token_size, int (*fn)(void *ctx, const struct s3_listed *o), void *ctx,
		     struct s3_error *err)
{
	const struct s3_config *c = cl->c;
	struct page pg = { .c = c, .skip = *c->prefix ? strlen(c->prefix) + 1 : 0 };
	struct s3_xml_sink sink = { page_element, &pg };
	char why[160];
	int ret;

	for (int pass = 0; pass < 2; pass++) {
		pg = (struct page){ .c = c,
				    .skip = pg.skip,
				    .truncated = -1,
				    .key_count = -1,
				    .token = token,
				    .token_size = token_size };
		if (pass) {
			pg.fn = fn;
			pg.ctx = ctx;
			token[0] = 0;
		}
		ret = s3_xml_parse(r->resp, r->resp_len, "ListBucketResult", &sink, why,
				   sizeof(why));
		if (!ret)
			ret = page_complete(&pg);
		if (ret == -EPROTO && !pass)
			return s3_distrust(cl, r, pg.why ? pg.why : why, err);
		if (ret)
			return ret;
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
	struct s3_request r = { .method = "GET",
				.query = query,
				.expect = "ListBucketResult",
				.resp_max = LIST_BODY_MAX };
	int e;

	memset(err, 0, sizeof(*err));
	if ((e = list_query(cl->c, under, token, query, sizeof(query))))
		return e;
	if (!s3_add_auth_headers(cl->c, &r.headers, S3_EMPTY_SHA256)) {
		s3_curl.slist_free_all(r.headers);
		return -ENOMEM;
	}
	if (!(e = s3_request_send(cl, &r, err)))
		e = read_page(cl, &r, token, token_size, fn, ctx, err);
	s3_request_done(&r);
	s3_curl.slist_free_all(r.headers);
	return e;
}
