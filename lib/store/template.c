/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Key templates (--layout-template): checked whole before any key is made,
 * so that a template fails once, up front, and never output by output. A
 * template is a relative path of elements made of [A-Za-z0-9_.-] and the
 * fields {build_id} and {tenant}; no element is empty, "." or "..", or
 * begins with '.': hidden names are the store's temporary and lock files
 * (".<name>.lidiagen.tmp.XXXXXX"), which its cleaner removes and every
 * reader of a tree passes over, and upload passes over every hidden name.
 */
#include "internal.h"

#define TEMPLATE_MAX 256

static bool key_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '_' || c == '-' || c == '.';
}

/* The field at p ("{build_id}" or "{tenant}"): its length, or 0 for none. */
static size_t field_len(const char *p)
{
	if (!strncmp(p, "{build_id}", 10))
		return 10;
	if (!strncmp(p, "{tenant}", 8))
		return 8;
	return 0;
}

/* What is wrong with a brace at p, not a field's: unknown field, or malformed. */
static const char *brace_problem(const char *p, size_t *len)
{
	size_t n = 1;

	if (*p == '}') {
		*len = 1;
		return "a '}' that closes no field";
	}
	while (p[n] && (key_char(p[n]) && p[n] != '.'))
		n++;
	if (p[n] == '}' && n > 1) {
		*len = n + 1;
		return "an unknown field (the fields are {build_id} and {tenant})";
	}
	*len = 1;
	return "a '{' that opens no field ({build_id} or {tenant})";
}

/* What is wrong with the element p[0..n) (fields included), or NULL. */
static const char *element_problem(const char *p, size_t n, size_t *at, size_t *len)
{
	*at = 0;
	*len = n;
	if (n == 0)
		return "an empty element ('//', or a '/' at the end)";
	if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
		return "an element '.' or '..'";
	if (p[0] == '.')
		return "an element beginning with '.' (hidden names are lidiagen's temporary "
		       "and lock files, and upload passes them over)";
	for (size_t i = 0; i < n;) {
		size_t f = field_len(p + i);

		if (f && i + f <= n) {
			i += f;
		} else if (p[i] == '{' || p[i] == '}') {
			*at = i;
			return brace_problem(p + i, len);
		} else if (!key_char(p[i])) {
			*at = i;
			*len = 1;
			return "a character other than letters, digits, '_', '-' and '.'";
		} else {
			i++;
		}
	}
	return NULL;
}

const char *lidia_store_template_problem(const char *t, size_t *at, size_t *len)
{
	size_t n = t ? strlen(t) : 0;

	*at = 0;
	*len = n;
	if (!n)
		return "empty";
	if (n > TEMPLATE_MAX)
		return "longer than 256 characters";
	if (t[0] == '/')
		return "an absolute path (keys are paths under the output directory)";
	for (const char *p = t;;) {
		size_t en = strcspn(p, "/"), eat;
		const char *why = element_problem(p, en, &eat, len);

		if (why) {
			*at = (size_t)(p - t) + eat;
			return why;
		}
		if (!p[en])
			break;
		p += en + 1;
	}
	*len = n;
	if (!strstr(t, "{build_id}"))
		return "no {build_id} (every build ID would go to one key)";
	return NULL;
}

bool lidia_store_template_valid(const char *t)
{
	size_t at, len;

	return !lidia_store_template_problem(t, &at, &len);
}
