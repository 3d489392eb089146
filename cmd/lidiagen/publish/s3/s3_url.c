/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Keys and URLs. A key goes into the URL percent-encoded as SigV4's
 * canonical URI for S3 has it (every byte but A-Za-z0-9-._~ and '/',
 * uppercase hex, and never twice), so that the path libcurl signs is the
 * one S3 computes. The bucket is either the first segment of the path
 * (path style) or the first label of the host (virtual-hosted).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "s3.h"

#define S3_KEY_MAX 1024 /* bytes: the longest key S3 takes */

/* A string appended to buf at *n; false when it does not fit (buf then unfinished). */
static bool put(char *buf, size_t size, size_t *n, const char *s, size_t len)
{
	if (len >= size - *n)
		return false;
	memcpy(buf + *n, s, len);
	*n += len;
	return true;
}

static bool put_str(char *buf, size_t size, size_t *n, const char *s)
{
	return put(buf, size, n, s, strlen(s));
}

/* RFC 3986's unreserved characters, and '/' in a path (a query value encodes it). */
static bool unreserved(unsigned char ch, bool in_path)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '.' || ch == '_' || ch == '~' || (ch == '/' && in_path);
}

/* s, percent-encoded, appended to buf at *n. */
static bool put_encoded(char *buf, size_t size, size_t *n, const char *s, bool in_path)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[3] = { '%', hex[*p >> 4], hex[*p & 15] };

		if (!(unreserved(*p, in_path) ? put(buf, size, n, (const char *)p, 1)
					      : put(buf, size, n, esc, sizeof(esc))))
			return false;
	}
	return true;
}

int s3_query_value(const char *value, char *buf, size_t size)
{
	size_t n = 0;

	if (!size)
		return -ENAMETOOLONG;
	if (!put_encoded(buf, size, &n, value, false)) {
		buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	buf[n] = '\0';
	return 0;
}

/*
 * The bucket's URL into buf at *n: ENDPOINT/BUCKET in path style, else
 * scheme://BUCKET.host[:port][/path].
 */
static int put_bucket(const struct s3_config *c, char *buf, size_t size, size_t *n)
{
	const char *host = c->endpoint ? strstr(c->endpoint, "://") : NULL;
	bool ok;

	/* s3_config_load always sets it: AWS's own endpoint when none is given. */
	if (!host || !c->bucket)
		return -EINVAL;
	host += 3;
	if (c->path_style)
		ok = put_str(buf, size, n, c->endpoint) && put_str(buf, size, n, "/") &&
		     put_str(buf, size, n, c->bucket);
	else
		ok = put(buf, size, n, c->endpoint, (size_t)(host - c->endpoint)) &&
		     put_str(buf, size, n, c->bucket) && put_str(buf, size, n, ".") &&
		     put_str(buf, size, n, host);
	return ok ? 0 : -ENAMETOOLONG;
}

int s3_bucket_url(const struct s3_config *c, char *buf, size_t size)
{
	size_t n = 0;
	int ret;

	if (!size)
		return -ENAMETOOLONG;
	ret = put_bucket(c, buf, size, &n);
	buf[ret ? 0 : n] = '\0';
	return ret;
}

int s3_full_key(const struct s3_config *c, const char *key, char *buf, size_t size)
{
	bool prefixed = c->prefix && *c->prefix;
	int n;

	if (!key || !*key)
		return -EINVAL;
	n = prefixed ? snprintf(buf, size, "%s/%s", c->prefix, key)
		     : snprintf(buf, size, "%s", key);
	if (n < 0)
		return -EINVAL;
	return (size_t)n >= size || n > S3_KEY_MAX ? -ENAMETOOLONG : 0;
}

int s3_object_url(const struct s3_config *c, const char *key, char *buf, size_t size)
{
	char full[S3_KEY_MAX + 1];
	size_t n = 0;
	int ret;

	if (!size)
		return -ENAMETOOLONG;
	if ((ret = s3_full_key(c, key, full, sizeof(full))) || (ret = put_bucket(c, buf, size, &n)))
		goto out;
	if (!put_str(buf, size, &n, "/") || !put_encoded(buf, size, &n, full, true))
		ret = -ENAMETOOLONG;
out:
	buf[ret ? 0 : n] = '\0';
	return ret;
}
