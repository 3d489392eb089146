/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The string members of a JSON object, as the credentials services send
 * them (the instance metadata service, a container's agent, a
 * credential_process): a small scanner that keeps within its buffer
 * whatever it is given, and skips members it is not asked for.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aws_json.h"

#define JSON_DEPTH_MAX 16

struct scan {
	const char *p, *end;
};

static void skip_space(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* The next byte if it is ch (consumed), else false. */
static bool take(struct scan *s, char ch)
{
	skip_space(s);
	if (s->p >= s->end || *s->p != ch)
		return false;
	s->p++;
	return true;
}

static int hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * The escape after a '\': its byte; 0 for a \u beyond ASCII (or \u0000),
 * which credentials never hold; -EBADMSG for a malformed one.
 */
static int scan_escape(struct scan *s)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e;
	int v = 0;

	if (s->p >= s->end)
		return -EBADMSG;
	if (*s->p != 'u') {
		e = memchr(from, *s->p, sizeof(from) - 1);
		s->p++;
		return e ? to[e - from] : -EBADMSG;
	}
	if (s->end - s->p < 5)
		return -EBADMSG;
	for (int i = 1; i <= 4; i++) {
		int d = hex_digit(s->p[i]);

		if (d < 0)
			return -EBADMSG;
		v = v * 16 + d;
	}
	s->p += 5;
	return v < 0x80 ? v : 0;
}

/*
 * The string at s->p, decoded into out when out is not NULL (decoding
 * never lengthens it: the bytes left in the input are room enough).
 * Decoded, it must be ASCII; skipped, anything valid goes.
 */
static int scan_string(struct scan *s, char *out)
{
	size_t n = 0;

	if (!take(s, '"'))
		return -EBADMSG;
	while (s->p < s->end) {
		int ch = (unsigned char)*s->p++;

		if (ch == '"') {
			if (out)
				out[n] = '\0';
			return 0;
		}
		if (ch < 0x20)
			return -EBADMSG;
		if (ch == '\\' && (ch = scan_escape(s)) < 0)
			return ch;
		if (!ch && out)
			return -EBADMSG;
		if (out)
			out[n++] = (char)ch;
	}
	return -EBADMSG;
}

static int scan_value(struct scan *s, int depth);

/* An object or array at s->p, skipped; members up to JSON_DEPTH_MAX deep. */
static int scan_container(struct scan *s, int depth)
{
	char close = *s->p++ == '{' ? '}' : ']';
	int ret;

	if (depth > JSON_DEPTH_MAX)
		return -EBADMSG;
	if (take(s, close))
		return 0;
	do {
		if (close == '}' && ((ret = scan_string(s, NULL)) || !take(s, ':')))
			return ret ? ret : -EBADMSG;
		if ((ret = scan_value(s, depth)))
			return ret;
	} while (take(s, ','));
	return take(s, close) ? 0 : -EBADMSG;
}

/* One value, skipped: a string, an object, an array, or a number or literal. */
static int scan_value(struct scan *s, int depth)
{
	const char *start;

	skip_space(s);
	if (s->p >= s->end)
		return -EBADMSG;
	if (*s->p == '"')
		return scan_string(s, NULL);
	if (*s->p == '{' || *s->p == '[')
		return scan_container(s, depth + 1);
	for (start = s->p; s->p < s->end; s->p++)
		if (!((*s->p >= '0' && *s->p <= '9') || (*s->p >= 'a' && *s->p <= 'z') ||
		      *s->p == '-' || *s->p == '+' || *s->p == '.' || *s->p == 'E'))
			break;
	return s->p > start ? 0 : -EBADMSG;
}

/* Whether the member name at s->p (consumed) is name. */
static int scan_name(struct scan *s, const char *name, bool *match)
{
	char buf[64];
	struct scan copy;
	int ret;

	skip_space(s);
	copy = *s;
	if ((ret = scan_string(s, NULL)))
		return ret;
	*match = (size_t)(s->p - copy.p) <= sizeof(buf) && !scan_string(&copy, buf) &&
		 !strcmp(buf, name);
	return 0;
}

/* s at the value of the top-level object's member name: 0; else -ENOENT or -EBADMSG. */
static int find_member(struct scan *s, const char *name)
{
	bool match;
	int ret;

	if (!take(s, '{'))
		return -EBADMSG;
	if (take(s, '}'))
		return -ENOENT;
	do {
		if ((ret = scan_name(s, name, &match)) || !take(s, ':'))
			return ret ? ret : -EBADMSG;
		if (match) {
			skip_space(s);
			return 0;
		}
		if ((ret = scan_value(s, 1)))
			return ret;
	} while (take(s, ','));
	return take(s, '}') ? -ENOENT : -EBADMSG;
}

int aws_json_string(const char *text, size_t len, const char *name, char **out)
{
	struct scan s = { text, text + len };
	int ret = find_member(&s, name);

	if (ret)
		return ret;
	if (s.p >= s.end || *s.p != '"')
		return -EBADMSG;
	/* Room for all that is left: the string, decoded, is shorter. */
	if (!(*out = malloc((size_t)(s.end - s.p))))
		return -ENOMEM;
	if ((ret = scan_string(&s, *out))) {
		free(*out);
		*out = NULL;
	}
	return ret;
}

int aws_json_integer(const char *text, size_t len, const char *name, long *out)
{
	struct scan s = { text, text + len };
	int ret = find_member(&s, name);
	long v = 0;

	if (ret)
		return ret;
	if (s.p >= s.end || *s.p < '0' || *s.p > '9')
		return -EBADMSG;
	/* Small numbers only: a version, not a quantity. */
	for (; s.p < s.end && *s.p >= '0' && *s.p <= '9' && v < 1000000; s.p++)
		v = v * 10 + (*s.p - '0');
	*out = v;
	return 0;
}

int aws_parse_time(const char *s, time_t *out)
{
	struct tm tm = { 0 };
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);

	if (!end)
		return -1;
	if (*end == '.')
		for (end++; *end >= '0' && *end <= '9'; end++)
			;
	if (strcmp(end, "Z") && strcmp(end, "+00:00") && *end)
		return -1;
	*out = timegm(&tm);
	return 0;
}
