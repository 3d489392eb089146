/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The little XML S3 answers with (error documents, listings): an element's
 * text found by its name, with XML's entities and character references
 * decoded, and control characters made spaces, so that a message printed
 * from it stays one line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_request.h"

/* A code point as UTF-8 at out; '?' for one that is not a character. */
static char *put_utf8(char *out, unsigned long cp)
{
	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
		*out++ = '?';
	} else if (cp < 0x80) {
		*out++ = (char)cp;
	} else if (cp < 0x800) {
		*out++ = (char)(0xc0 | cp >> 6);
		*out++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*out++ = (char)(0xe0 | cp >> 12);
		*out++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*out++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*out++ = (char)(0xf0 | cp >> 18);
		*out++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*out++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*out++ = (char)(0x80 | (cp & 0x3f));
	}
	return out;
}

/*
 * XML's five entities and its character references, decimal and hex (S3
 * writes a key's CR as &#x0D;), in place: no reference is longer than the
 * UTF-8 it stands for.
 */
static void xml_unescape(char *s)
{
	static const struct {
		const char *name;
		char ch;
	} ents[] = { { "&amp;", '&' },
		     { "&lt;", '<' },
		     { "&gt;", '>' },
		     { "&quot;", '"' },
		     { "&apos;", '\'' } };
	size_t nents = sizeof(ents) / sizeof(ents[0]);
	char *out = s;

	while (*s) {
		size_t i = 0;

		while (*s == '&' && i < nents && strncmp(s, ents[i].name, strlen(ents[i].name)))
			i++;
		if (*s == '&' && i < nents) {
			*out++ = ents[i].ch;
			s += strlen(ents[i].name);
		} else if (s[0] == '&' && s[1] == '#') {
			bool hex = s[2] == 'x' || s[2] == 'X';
			char *end;
			unsigned long cp = strtoul(s + (hex ? 3 : 2), &end, hex ? 16 : 10);

			if (*end != ';' || end == s + (hex ? 3 : 2)) {
				*out++ = *s++; /* not a reference: kept as it is */
				continue;
			}
			out = put_utf8(out, cp);
			s = end + 1;
		} else {
			*out++ = *s++;
		}
	}
	*out = 0;
}

/* Control characters (a CR in a key, a newline in a message) as spaces. */
static void no_controls(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

bool s3_xml_element(const char *doc, const char *end, const char *tag, char *out, size_t size,
		    bool is_key)
{
	char open[40], close[40];
	const char *s, *e;
	size_t n;

	if (!end)
		end = doc + strlen(doc);
	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	if (!size || !(s = strstr(doc, open)) || s >= end)
		return false;
	s += strlen(open);
	if (!(e = strstr(s, close)) || e > end)
		return false;
	n = (size_t)(e - s);
	if (n >= size) {
		if (is_key)
			return false; /* a key cut short would be another key */
		n = size - 1;
	}
	memcpy(out, s, n);
	out[n] = 0;
	xml_unescape(out);
	if (!is_key)
		no_controls(out);
	return true;
}
