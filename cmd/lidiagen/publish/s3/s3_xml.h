/* SPDX-License-Identifier: Apache-2.0 */
/* S3's XML (s3_xml.c): error documents and listings, parsed whole by libexpat. */
#ifndef LIDIAGEN_S3_XML_H
#define LIDIAGEN_S3_XML_H

#include <stdbool.h>
#include <stddef.h>

/* Where s3_xml_parse hands each element, as it ends. */
struct s3_xml_sink {
	/*
	 * depth 1: a child of the root; parent: its parent's name; text: its
	 * text, entities decoded (whole false: cut at 8 KiB). Non-zero stops
	 * the parse, and s3_xml_parse returns it.
	 */
	int (*element)(void *ctx, unsigned depth, const char *parent, const char *name,
		       const char *text, bool whole);
	void *ctx;
};

/*
 * doc[0, len) read as one whole, well-formed XML document, without a DTD,
 * whose root element is root: each element to sink (NULL: only checked).
 * 0; or -EPROTO and in why what the body is instead ("an <html> page",
 * "an <Error> document", "XML cut short or ill-formed: ..."), or the
 * sink's code (why then left to it); -ELIBACC without libexpat.
 */
int s3_xml_parse(const char *doc, size_t len, const char *root, const struct s3_xml_sink *sink,
		 char *why, size_t why_size);

/* Control characters (a CR in a key, a newline in a message) as spaces: one line to print. */
void s3_xml_one_line(char *s);

#endif
