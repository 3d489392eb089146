/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What identifies the run that made an index (doc/index.md, "Header"):
 * the paths given and the options that change what is found. Slices merge
 * only when theirs agree, so that a merge of slices of two trees, or of
 * one tree seen through other globs or limits, is refused, not an index
 * that silently misses half of each.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index.h"
#include "names.h"
#include "index_id.h"
#include "sha256.h"
#include "walk.h"

/* The paths sorted, each ended by a NUL, hashed: the order given changes nothing in the index. */
static int hash_paths(char **paths, size_t n, char out[65])
{
	char **sorted = malloc((n + 1) * sizeof(*sorted)), *buf = NULL;
	size_t len = 0, at = 0;

	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, paths, n * sizeof(*sorted));
	if (n > 1)
		qsort(sorted, n, sizeof(*sorted), cmp_str_ptrs);
	for (size_t i = 0; i < n; i++)
		len += strlen(sorted[i]) + 1;
	if (!(buf = malloc(len + 1))) {
		free(sorted);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(sorted[i]) + 1;

		memcpy(buf + at, sorted[i], k);
		at += k;
	}
	sha256_hex(buf, len, out);
	free(buf);
	free(sorted);
	return 0;
}

/* " --NAME='GLOB'", quoted as a shell reads it back: no two lists of globs print alike. */
static void glob_opt(FILE *f, const char *name, const char *glob)
{
	fprintf(f, " --%s='", name);
	for (const char *s = glob; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

/* The options, canonical: each in one place, the limits as they apply (defaults made plain). */
static char *canonical_options(const struct batch_opts *o)
{
	const struct lidia_archive_opts *a = &o->archive;
	char *s = NULL;
	size_t len;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return NULL;
	if (o->recursive)
		fputs(" -r", f);
	if (o->follow_symlinks)
		fputs(" --follow-symlinks", f);
	for (size_t i = 0; i < o->ninclude; i++)
		glob_opt(f, "include", o->include[i]);
	for (size_t i = 0; i < o->nexclude; i++)
		glob_opt(f, "exclude", o->exclude[i]);
	fprintf(f, " --max-member-size=%llu --max-expansion=%llu --max-depth=%d",
		(unsigned long long)(a->max_member ? a->max_member : LIDIA_ARCHIVE_MAX_MEMBER),
		(unsigned long long)(a->max_total ? a->max_total : LIDIA_ARCHIVE_MAX_TOTAL),
		a->max_depth < 0 ? 0
		: a->max_depth	 ? a->max_depth
				 : LIDIA_ARCHIVE_MAX_DEPTH);
	if (o->platform)
		glob_opt(f, "platform", o->platform);
	if (fclose(f)) {
		free(s);
		return NULL;
	}
	memmove(s, s + 1, len); /* the first space */
	return s;
}

int index_run_header(struct index_header *h, const struct batch_opts *o, char **paths, size_t n)
{
	memset(h, 0, sizeof(*h));
	h->fallback = o->fallback;
	h->slice_k = o->shard_k;
	h->slice_n = o->shard_n;
	h->ninputs = n;
	if (hash_paths(paths, n, h->inputs_sha256) || !(h->options = canonical_options(o)))
		return -ENOMEM;
	return 0;
}

const char *index_run_differs(const struct index_header *a, const struct index_header *b, char *buf,
			      size_t size)
{
	if (a->fallback != b->fallback)
		snprintf(buf, size, "--fallback-key %s, not %s", fallback_name(a->fallback),
			 fallback_name(b->fallback));
	else if (a->ninputs != b->ninputs || strcmp(a->inputs_sha256, b->inputs_sha256))
		snprintf(buf, size, "other paths given (%zu, SHA-256 %.12s, not %zu, %.12s)",
			 a->ninputs, a->inputs_sha256, b->ninputs, b->inputs_sha256);
	else if (strcmp(a->options, b->options))
		snprintf(buf, size, "options '%s', not '%s'", a->options, b->options);
	else
		return NULL;
	return buf;
}
