/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON strings out (json.h), and the one shape read back: a flat object on
 * one line (the index's records). The reader trusts nothing: every string
 * ends inside the line, every number fits, every escape is whole.
 */
#include <string.h>

#include "json.h"

/*
 * The length of the well-formed UTF-8 sequence at s (n bytes left), or 0:
 * RFC 3629's table, so no overlong form, surrogate or code point past
 * U+10FFFF passes.
 */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/*
 * A path is bytes, and JSON text is Unicode: well-formed UTF-8 is written
 * as it is, and each byte that is not part of it as the lone surrogate
 * \udcXX (Python's surrogateescape, os.fsdecode), which no UTF-8 text can
 * hold. The file stays valid JSON for any name (json.loads, jq), Python
 * gets the bytes back with os.fsencode, and json_parse_flat() reads the
 * very bytes back.
 */
void json_string(FILE *f, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;

	fputc('"', f);
	for (size_t i = 0; i < len;) {
		unsigned char c = u[i];
		size_t n;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else if (c < 0x80)
			fputc(c, f);
		else if ((n = utf8_len(u + i, len - i))) {
			fwrite(u + i, 1, n, f);
			i += n;
			continue;
		} else
			fprintf(f, "\\udc%02x", c);
		i++;
	}
	fputc('"', f);
}

void json_str(FILE *f, const char *s)
{
	json_string(f, s, strlen(s));
}

void json_field(FILE *f, const char *name, const char *value)
{
	fprintf(f, ",\"%s\":", name);
	json_str(f, value);
}

/* The parser's cursor over the line. */
struct cur {
	char *p;
	const char *err;
};

static void skip_ws(struct cur *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n')
		c->p++;
}

static int hex4(const char *s, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char h = s[i];

		v <<= 4;
		if (h >= '0' && h <= '9')
			v |= (unsigned)(h - '0');
		else if (h >= 'a' && h <= 'f')
			v |= (unsigned)(h - 'a' + 10);
		else if (h >= 'A' && h <= 'F')
			v |= (unsigned)(h - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* A code point as UTF-8 at *o (at most 4 bytes: never more than its \u escape took). */
static void put_utf8(char **o, unsigned cp)
{
	unsigned char *u = (unsigned char *)*o;

	if (cp < 0x80) {
		*u++ = (unsigned char)cp;
	} else if (cp < 0x800) {
		*u++ = (unsigned char)(0xc0 | cp >> 6);
		*u++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*u++ = (unsigned char)(0xe0 | cp >> 12);
		*u++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		*u++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else {
		*u++ = (unsigned char)(0xf0 | cp >> 18);
		*u++ = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		*u++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		*u++ = (unsigned char)(0x80 | (cp & 0x3f));
	}
	*o = (char *)u;
}

/*
 * \uXXXX (and its low surrogate) at c->p, past the backslash and 'u': 0 and
 * the code point, 1 and a raw byte (\udc80 to \udcff), or -1.
 */
static int unicode_escape(struct cur *c, unsigned *cp)
{
	unsigned lo;

	if (hex4(c->p, cp))
		return -1;
	c->p += 4;
	/* \udc80 to \udcff: a byte that was no UTF-8 (json_string), handed back as it was. */
	if (*cp >= 0xdc80 && *cp <= 0xdcff)
		return 1;
	if (*cp >= 0xdc00 && *cp < 0xe000)
		return -1;
	if (*cp >= 0xd800 && *cp < 0xdc00) {
		if (c->p[0] != '\\' || c->p[1] != 'u' || hex4(c->p + 2, &lo) || lo < 0xdc00 ||
		    lo >= 0xe000)
			return -1;
		c->p += 6;
		*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	return *cp ? 0 : -1; /* a NUL would cut the string short */
}

/* A string at c->p (at its opening quote), unescaped in place; NULL on error. */
static const char *string(struct cur *c)
{
	static const char simple[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
	char *start, *o;

	if (*c->p != '"') {
		c->err = "a string expected";
		return NULL;
	}
	start = o = ++c->p;
	for (;;) {
		unsigned char ch = (unsigned char)*c->p;
		const char *e;
		unsigned cp;

		if (ch == '"')
			break;
		if (ch == '\0' || ch < 0x20) {
			c->err = ch ? "a control character in a string" : "a string not closed";
			return NULL;
		}
		c->p++;
		if (ch != '\\') {
			*o++ = (char)ch;
			continue;
		}
		ch = (unsigned char)*c->p++;
		if (ch == 'u') {
			int r = unicode_escape(c, &cp);

			if (r < 0) {
				c->err = "a bad \\u escape";
				return NULL;
			}
			if (r)
				*o++ = (char)(cp & 0xff);
			else
				put_utf8(&o, cp);
		} else if (ch && (e = strchr(simple, ch)) && (e - simple) % 2 == 0) {
			*o++ = e[1];
		} else {
			c->err = "a bad escape";
			return NULL;
		}
	}
	c->p++;
	*o = '\0'; /* at or before the closing quote, already read */
	return start;
}

/* An integer (an optional '-', then digits without a leading zero) that fits int64_t. */
static int number(struct cur *c, int64_t *out)
{
	bool neg = *c->p == '-';
	uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;

	c->p += neg;
	if (*c->p < '0' || *c->p > '9' || (c->p[0] == '0' && c->p[1] >= '0' && c->p[1] <= '9')) {
		c->err = "a bad number";
		return -1;
	}
	for (; *c->p >= '0' && *c->p <= '9'; c->p++) {
		unsigned d = (unsigned)(*c->p - '0');

		if (v > (limit - d) / 10) {
			c->err = "a number out of range";
			return -1;
		}
		v = v * 10 + d;
	}
	if (*c->p == '.' || *c->p == 'e' || *c->p == 'E') {
		c->err = "a number that is not an integer";
		return -1;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/* An array of strings, its items appended to items[*used..max). */
static int array(struct cur *c, struct json_field *f, const char **items, size_t *used, size_t max)
{
	f->items = items + *used;
	f->nitems = 0;
	c->p++;
	skip_ws(c);
	if (*c->p == ']') {
		c->p++;
		return 0;
	}
	for (;;) {
		const char *s;

		skip_ws(c);
		if (!(s = string(c)))
			return -1;
		if (*used >= max || f->nitems >= JSON_MAX_ITEMS) {
			c->err = "an array too long";
			return -1;
		}
		items[(*used)++] = s;
		f->nitems++;
		skip_ws(c);
		if (*c->p == ']') {
			c->p++;
			return 0;
		}
		if (*c->p++ != ',') {
			c->err = "',' or ']' expected in an array";
			return -1;
		}
	}
}

static int value(struct cur *c, struct json_field *f, const char **items, size_t *used, size_t max)
{
	if (*c->p == '"') {
		f->type = JSON_STRING;
		return (f->str = string(c)) ? 0 : -1;
	}
	if (*c->p == '[') {
		f->type = JSON_ARRAY;
		return array(c, f, items, used, max);
	}
	if (!strncmp(c->p, "true", 4) || !strncmp(c->p, "false", 5)) {
		f->type = JSON_BOOL;
		f->on = *c->p == 't';
		c->p += f->on ? 4 : 5;
		return 0;
	}
	f->type = JSON_NUMBER;
	return number(c, &f->num);
}

const char *json_parse_flat(char *line, struct json_field *fields, size_t max, size_t *n,
			    const char **items, size_t max_items)
{
	struct cur c = { line, NULL };
	size_t used = 0;

	*n = 0;
	skip_ws(&c);
	if (*c.p++ != '{')
		return "not a JSON object";
	skip_ws(&c);
	if (*c.p == '}')
		c.p++;
	else
		for (;;) {
			struct json_field *f = &fields[*n];

			if (*n >= max)
				return "too many fields";
			skip_ws(&c);
			if (!(f->key = string(&c)))
				return c.err;
			skip_ws(&c);
			if (*c.p++ != ':')
				return "':' expected";
			skip_ws(&c);
			if (value(&c, f, items, &used, max_items))
				return c.err;
			for (size_t i = 0; i < *n; i++)
				if (!strcmp(fields[i].key, f->key))
					return "a field given twice";
			(*n)++;
			skip_ws(&c);
			if (*c.p == '}') {
				c.p++;
				break;
			}
			if (*c.p++ != ',')
				return "',' or '}' expected (truncated?)";
		}
	skip_ws(&c);
	return *c.p ? "more after the object" : NULL;
}

const struct json_field *json_get(const struct json_field *fields, size_t n, const char *key,
				  enum json_type type)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(fields[i].key, key))
			return fields[i].type == type ? &fields[i] : NULL;
	return NULL;
}
