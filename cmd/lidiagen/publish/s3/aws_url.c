/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bucket and prefix a run publishes to, from s3://BUCKET[/PREFIX]:
 * the bucket checked by S3's rules for names; the prefix without its outer
 * slashes, refused with a control character, an empty, '.' or '..'
 * segment, or over 512 bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_url.h"
#include "aws_util.h"

#define PREFIX_MAX 512

static bool is_lower_or_digit(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

bool s3_is_url(const char *arg)
{
	return arg && !strncmp(arg, "s3://", 5);
}

/* The length of arg's URL scheme ("gs" of "gs://b"), 0 when it has none. */
static size_t scheme_len(const char *arg)
{
	size_t n = 0;

	if (!((arg[0] >= 'a' && arg[0] <= 'z') || (arg[0] >= 'A' && arg[0] <= 'Z')))
		return 0;
	while (arg[n] && (is_lower_or_digit(arg[n]) || (arg[n] >= 'A' && arg[n] <= 'Z') ||
			  arg[n] == '+' || arg[n] == '.' || arg[n] == '-'))
		n++;
	return arg[n] == ':' ? n : 0;
}

const char *s3_url_typo(const char *arg, char *buf, size_t size)
{
	size_t n = scheme_len(arg);
	const char *rest = arg + n + 1;

	if (!n || s3_is_url(arg))
		return NULL;
	if (n == 2 && (arg[0] == 's' || arg[0] == 'S') && arg[1] == '3') {
		while (*rest == '/')
			rest++;
		snprintf(buf, size,
			 "'%.200s' is no s3://BUCKET[/PREFIX]: did you mean 's3://%.200s'?", arg,
			 rest);
		return buf;
	}
	if (rest[0] != '/')
		return NULL; /* "name:x", a file name with a colon, not a URL */
	snprintf(buf, size,
		 "'%.200s' looks like a URL (%.*s:), and lidiagen publishes to "
		 "s3://BUCKET[/PREFIX] only (a directory so named: ./%.200s)",
		 arg, (int)(n < 20 ? n : 20), arg, arg);
	return buf;
}

/* Why b (n bytes) is not a bucket name by S3's rules, or NULL. */
static const char *bucket_problem(const char *b, size_t n)
{
	size_t dots = 0, digits = 0;

	if (n < 3 || n > 63)
		return "a bucket name has 3 to 63 characters";
	for (size_t i = 0; i < n; i++) {
		if (!is_lower_or_digit(b[i]) && b[i] != '.' && b[i] != '-')
			return "a bucket name has only a-z, 0-9, '.' and '-'";
		if (i && b[i] == '.' && b[i - 1] == '.')
			return "a bucket name has no '..'";
		dots += b[i] == '.';
		digits += b[i] >= '0' && b[i] <= '9';
	}
	if (!is_lower_or_digit(b[0]) || !is_lower_or_digit(b[n - 1]))
		return "a bucket name starts and ends with a letter or a digit";
	if (dots == 3 && dots + digits == n)
		return "a bucket name is not an IP address";
	return NULL;
}

/* Why PREFIX (n bytes, without leading or trailing '/') is refused, or NULL. */
static const char *prefix_problem(const char *p, size_t n)
{
	size_t seg = 0; /* where the segment at hand starts */

	if (n > PREFIX_MAX)
		return "the prefix is longer than 512 bytes";
	for (size_t i = 0; n && i <= n; i++) {
		if (i < n && ((unsigned char)p[i] < 0x20 || p[i] == 0x7f))
			return "the prefix has a control character";
		if (i < n && p[i] != '/')
			continue;
		if (i == seg)
			return "the prefix has an empty segment ('//')";
		if ((i - seg == 1 && p[seg] == '.') || (i - seg == 2 && !strncmp(p + seg, "..", 2)))
			return "the prefix has a '.' or '..' segment";
		seg = i + 1;
	}
	return NULL;
}

/* ld->c->bucket and prefix from url, checked; 0 or aws_fail's code. */
int aws_parse_url(struct load *ld, const char *url)
{
	const char *b, *p, *why;
	size_t bn, pn;
	char q[128];

	if (!s3_is_url(url))
		return aws_fail(ld, -EINVAL, "'%s': not an s3://BUCKET[/PREFIX] URL",
				aws_shown(url ? url : "", q, sizeof(q)));
	b = url + 5;
	bn = strcspn(b, "/");
	if ((why = bucket_problem(b, bn)))
		return aws_fail(ld, -EINVAL, "'%s': %s", aws_shown(url, q, sizeof(q)), why);
	/*
	 * One slash parts bucket and prefix (s3://b//x has an empty segment, as
	 * a//b has); trailing ones are only separators: s3://b/x/ is s3://b/x.
	 */
	p = b + bn + (b[bn] == '/');
	for (pn = strlen(p); pn && p[pn - 1] == '/'; pn--)
		;
	if ((why = prefix_problem(p, pn)))
		return aws_fail(ld, -EINVAL, "'%s': %s", aws_shown(url, q, sizeof(q)), why);
	ld->c->bucket = strndup(b, bn);
	ld->c->prefix = strndup(p, pn);
	if (!ld->c->bucket || !ld->c->prefix)
		return aws_fail(ld, -ENOMEM, "out of memory");
	return 0;
}
