// SPDX-License-Identifier: Apache-2.0
/* JSON read whole into a tree (json_tree.h): recursive descent, depth bounded. */
#include <stdlib.h>
#include <string.h>

#include "json_tree.h"

#define JT_MAX_DEPTH 64 /* deeper is refused: the stack stays small */

struct jp {
	const char *s;
	int depth;
};

static void skip_ws(struct jp *p)
{
	while (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')
		p->s++;
}

static int hex4(const char *s)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v |= (c | 0x20) - 'a' + 10;
		else
			return -1;
	}
	return v;
}

/* One code point of \uXXXX as UTF-8 (surrogates, unpaired or not, as '?': names only). */
static char *put_utf8(char *o, int c)
{
	if (c >= 0xd800 && c <= 0xdfff)
		c = '?';
	if (c < 0x80) {
		*o++ = (char)c;
	} else if (c < 0x800) {
		*o++ = (char)(0xc0 | c >> 6);
		*o++ = (char)(0x80 | (c & 0x3f));
	} else {
		*o++ = (char)(0xe0 | c >> 12);
		*o++ = (char)(0x80 | (c >> 6 & 0x3f));
		*o++ = (char)(0x80 | (c & 0x3f));
	}
	return o;
}

/* One escape after its backslash, written at o; NULL when invalid. */
static char *unescape(struct jp *p, char *o)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e = strchr(from, *p->s);
	int c;

	if (*p->s && e) {
		p->s++;
		*o++ = to[e - from];
		return o;
	}
	if (*p->s != 'u' || (c = hex4(p->s + 1)) < 0)
		return NULL;
	p->s += 5;
	return put_utf8(o, c);
}

/* The string at p->s (its opening quote), unescaped, malloc'd; NULL when invalid. */
static char *parse_string(struct jp *p)
{
	const char *end = p->s + 1;
	char *out, *o;

	while (*end && *end != '"')
		end += *end == '\\' && end[1] ? 2 : 1;
	if (*end != '"' || !(out = o = malloc((size_t)(end - p->s) + 1)))
		return NULL;
	for (p->s++; *p->s != '"';) {
		if ((unsigned char)*p->s < 0x20)
			o = NULL;
		else if (*p->s != '\\')
			*o++ = *p->s++;
		else if (p->s++, !(o = unescape(p, o)))
			break;
		if (!o)
			break;
	}
	if (!o) {
		free(out);
		return NULL;
	}
	*o = '\0';
	p->s++;
	return out;
}

static bool parse_value(struct jp *p, struct jt *t);

/* A new last kid of t, zeroed; NULL when out of memory. */
static struct jt *add_kid(struct jt *t)
{
	struct jt *k = realloc(t->kids, (t->n + 1) * sizeof(*k));

	if (!k)
		return NULL;
	t->kids = k;
	k += t->n++;
	*k = (struct jt){ 0 };
	return k;
}

/* An array or object's items, p->s after its opening bracket. */
static bool parse_items(struct jp *p, struct jt *t, char close)
{
	skip_ws(p);
	if (*p->s == close) {
		p->s++;
		return true;
	}
	for (;;) {
		struct jt *k = add_kid(t);

		if (!k)
			return false;
		skip_ws(p);
		if (close == '}') {
			if (*p->s != '"' || !(k->key = parse_string(p)))
				return false;
			skip_ws(p);
			if (*p->s++ != ':')
				return false;
		}
		if (!parse_value(p, k))
			return false;
		skip_ws(p);
		if (*p->s == close) {
			p->s++;
			return true;
		}
		if (*p->s++ != ',')
			return false;
	}
}

/* A number, true, false or null: its text kept (a number's), checked loosely. */
static bool parse_scalar(struct jp *p, struct jt *t)
{
	static const char *const words[] = { "true", "false", "null" };
	size_t n;

	for (int i = 0; i < 3; i++) {
		n = strlen(words[i]);
		if (!strncmp(p->s, words[i], n)) {
			t->type = i < 2 ? JT_BOOL : JT_NULL;
			t->str = strdup(words[i]);
			p->s += n;
			return t->str != NULL;
		}
	}
	n = strspn(p->s, "-+.0123456789eE");
	if (!n)
		return false;
	t->type = JT_NUMBER;
	t->str = strndup(p->s, n);
	p->s += n;
	return t->str != NULL;
}

static bool parse_value(struct jp *p, struct jt *t)
{
	bool ok;

	skip_ws(p);
	if (*p->s == '"') {
		t->type = JT_STRING;
		return (t->str = parse_string(p)) != NULL;
	}
	if (*p->s != '[' && *p->s != '{')
		return parse_scalar(p, t);
	if (++p->depth > JT_MAX_DEPTH)
		return false;
	t->type = *p->s == '[' ? JT_ARRAY : JT_OBJECT;
	p->s++;
	ok = parse_items(p, t, t->type == JT_ARRAY ? ']' : '}');
	p->depth--;
	return ok;
}

static void jt_clear(struct jt *t)
{
	for (size_t i = 0; i < t->n; i++)
		jt_clear(&t->kids[i]);
	free(t->kids);
	free(t->key);
	free(t->str);
}

void jt_free(struct jt *t)
{
	if (t) {
		jt_clear(t);
		free(t);
	}
}

struct jt *jt_parse(const char *text)
{
	struct jp p = { text, 0 };
	struct jt *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (!parse_value(&p, t) || (skip_ws(&p), *p.s)) {
		jt_free(t);
		return NULL;
	}
	return t;
}

const struct jt *jt_get(const struct jt *t, const char *key)
{
	if (!t || t->type != JT_OBJECT)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->kids[i].key, key))
			return &t->kids[i];
	return NULL;
}

const char *jt_str(const struct jt *t, const char *key)
{
	const struct jt *v = jt_get(t, key);

	return v && v->type == JT_STRING ? v->str : NULL;
}
