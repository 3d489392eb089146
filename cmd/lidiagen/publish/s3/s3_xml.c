/* SPDX-License-Identifier: Apache-2.0 */
/*
 * S3's XML (error documents, listings), read by libexpat (expat_load.h)
 * and believed only whole: one complete, well-formed document, no DTD,
 * with the root element the request calls for. A 200 whose body is an
 * <Error>, a proxy's HTML page or a listing cut short was once read as a
 * listing of nothing, and a run replaced stronger objects on that belief;
 * a parser of our own over "the few shapes S3 sends" was how that came
 * about, so a well-kept one does the reading, and we only walk its events.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expat_load.h"
#include "s3_xml.h"

/* S3 nests 3 deep (ListBucketResult/Contents/Owner/ID); room to spare. */
#define DEPTH_MAX 8
#define NAME_MAX_LEN 64
/* The most text kept of one element: a key is at most 1024 bytes. */
#define TEXT_MAX 8192

struct walk {
	XML_Parser xp;
	const char *root;
	const struct s3_xml_sink *sink;
	unsigned depth;
	char names[DEPTH_MAX][NAME_MAX_LEN];
	char text[TEXT_MAX + 1];
	size_t text_len;
	bool text_whole;
	char first[NAME_MAX_LEN]; /* the first element or DTD met: what the body is */
	int ret;
	const char *why; /* our own reason to stop, when we stopped the parser */
	bool by_sink;	 /* the sink stopped it: the sink says why */
};

static void stop(struct walk *w, int ret, const char *why)
{
	if (!w->ret) {
		w->ret = ret;
		w->why = why;
	}
	s3_expat.StopParser(w->xp, XML_FALSE);
}

static void on_doctype(void *arg, const XML_Char *name, const XML_Char *sysid,
		       const XML_Char *pubid, int has_internal_subset)
{
	struct walk *w = arg;

	snprintf(w->first, sizeof(w->first), "%s", name);
	/* Entities declared in a DTD are a way to blow up memory, and S3 sends none. */
	stop(w, -EPROTO, "a document with a DTD");
}

static void on_start(void *arg, const XML_Char *name, const XML_Char **attrs)
{
	struct walk *w = arg;

	if (!w->first[0])
		snprintf(w->first, sizeof(w->first), "%s", name);
	if (!w->depth && strcmp(name, w->root)) {
		stop(w, -EPROTO, NULL);
		return;
	}
	if (w->depth == DEPTH_MAX || strlen(name) >= NAME_MAX_LEN) {
		stop(w, -EPROTO, "elements nested deeper or named longer than S3's");
		return;
	}
	snprintf(w->names[w->depth++], NAME_MAX_LEN, "%s", name);
	w->text_len = 0;
	w->text_whole = true;
}

static void on_end(void *arg, const XML_Char *name)
{
	struct walk *w = arg;
	unsigned d = --w->depth;
	int ret;

	w->text[w->text_len] = 0;
	if (d && w->sink && w->sink->element) {
		ret = w->sink->element(w->sink->ctx, d, w->names[d - 1], name, w->text,
				       w->text_whole);
		if (ret) {
			w->by_sink = !w->ret;
			stop(w, ret, NULL);
		}
	}
	w->text_len = 0;
	w->text_whole = true;
}

static void on_text(void *arg, const XML_Char *s, int len)
{
	struct walk *w = arg;
	size_t n = (size_t)len;

	if (n > TEXT_MAX - w->text_len) {
		n = TEXT_MAX - w->text_len;
		w->text_whole = false;
	}
	memcpy(w->text + w->text_len, s, n);
	w->text_len += n;
}

/* What the body is, when not the document asked for: "an <html> page", "a <Error> document". */
static void describe_body(const struct walk *w, enum XML_Error xe, unsigned long line, char *why,
			  size_t size)
{
	if (w->first[0] && !strcasecmp(w->first, "html"))
		snprintf(why, size, "an <html> page");
	else if (w->why)
		snprintf(why, size, "%s", w->why);
	else if (w->first[0] && strcmp(w->first, w->root))
		snprintf(why, size, "an <%s> document", w->first);
	else if (w->first[0])
		snprintf(why, size, "XML cut short or ill-formed: %s at line %lu",
			 s3_expat.ErrorString(xe), line);
	else
		snprintf(why, size, "not XML: %s at line %lu", s3_expat.ErrorString(xe), line);
}

int s3_xml_parse(const char *doc, size_t len, const char *root, const struct s3_xml_sink *sink,
		 char *why, size_t why_size)
{
	struct walk *w;
	enum XML_Status st;
	int ret, e;

	if (why_size)
		why[0] = 0;
	if (!len) {
		snprintf(why, why_size, "an empty body");
		return -EPROTO;
	}
	if (len > INT_MAX)
		return -EFBIG;
	if ((e = s3_expat_load(why, why_size)))
		return e;
	if (!(w = calloc(1, sizeof(*w))))
		return -ENOMEM;
	/* UTF-8 whatever the document claims: S3 writes nothing else. */
	if (!(w->xp = s3_expat.ParserCreate("UTF-8"))) {
		free(w);
		return -ENOMEM;
	}
	w->root = root;
	w->sink = sink;
	s3_expat.SetUserData(w->xp, w);
	s3_expat.SetElementHandler(w->xp, on_start, on_end);
	s3_expat.SetCharacterDataHandler(w->xp, on_text);
	s3_expat.SetStartDoctypeDeclHandler(w->xp, on_doctype);
	/* Final: a document that ends before its root closes is an error, not a short listing. */
	st = s3_expat.Parse(w->xp, doc, (int)len, XML_TRUE);
	ret = w->ret;
	if (st != XML_STATUS_OK && !ret)
		ret = -EPROTO;
	if (ret == -EPROTO && !w->by_sink)
		describe_body(w, s3_expat.GetErrorCode(w->xp),
			      (unsigned long)s3_expat.GetCurrentLineNumber(w->xp), why, why_size);
	s3_expat.ParserFree(w->xp);
	free(w);
	return ret;
}

void s3_xml_one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}
