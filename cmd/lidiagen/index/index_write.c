/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writing the index (index.h, doc/index.md). Every record of an input
 * follows its input's record, inputs sorted by path, so that slices merged
 * in any order and one run over everything give the same bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "index.h"
#include "json.h"
#include "names.h"
#include "tempfile.h"

static void flag(FILE *f, const char *name, bool on)
{
	fprintf(f, ",\"%s\":%s", name, on ? "true" : "false");
}

/*
 * "input": and "members": the chain of member names inside the input, as
 * lidiagen joins them with '!' in the image's path (path is the input's, or
 * "INPUT!M1!M2"; a name holding '!' is split, and joins back the same).
 */
static void input_and_members(FILE *f, const char *input, const char *path)
{
	size_t n = strlen(input);
	const char *m = path + n;

	fputs("{\"input\":", f);
	json_string(f, input, n);
	fputs(",\"members\":[", f);
	for (bool first = true; *m == '!'; first = false) {
		const char *end = strchr(m + 1, '!');
		size_t len = end ? (size_t)(end - m - 1) : strlen(m + 1);

		if (!first)
			fputc(',', f);
		json_string(f, m + 1, len);
		m += 1 + len;
	}
	fputc(']', f);
}

static void write_part(FILE *f, const char *input, const struct state_part *p)
{
	bool rich = p->info.has_dwarf || p->info.has_go;

	input_and_members(f, input, p->path);
	if (p->member)
		json_field(f, "name", p->member);
	if (p->at)
		json_field(f, "position", p->at);
	fprintf(f, ",\"size\":%llu", (unsigned long long)p->size);
	json_field(f, "build_id", p->key);
	json_field(f, "kind", part_kind_name(part_kind_of(p)));
	flag(f, "symtab", p->info.has_symtab);
	flag(f, "dwarf", p->info.has_dwarf);
	flag(f, "go", p->info.has_go);
	/* What it can give at most: DWARF and Go give lines and inlines; else symbols. */
	fprintf(f, ",\"gives\":[%s]",
		rich		     ? "\"symbols\",\"lines\",\"inlines\""
		: p->info.has_symtab ? "\"symbols\""
				     : "\"dynsym\"");
	if (p->info.go_build_id[0])
		json_field(f, "go_build_id", p->info.go_build_id);
	fputs("}\n", f);
}

static void write_skip(FILE *f, const char *input, const struct state_skip *k)
{
	input_and_members(f, input, k->path);
	json_field(f, "skipped", skip_reason_name(k->reason));
	if (k->reason == SKIP_SHORT_KEY || k->reason == SKIP_DEGENERATE_KEY)
		json_field(f, "build_id", k->key);
	if (k->go)
		flag(f, "go", true);
	if (k->dwz)
		json_field(f, "kind", part_kind_name(PART_DWZ));
	fputs("}\n", f);
}

static void write_input(FILE *f, const struct state_input *in)
{
	fputs("{\"input\":", f);
	json_str(f, in->path);
	fprintf(f, ",\"size\":%llu,\"mtime_ns\":%lld", (unsigned long long)in->size,
		(long long)in->mtime);
	json_field(f, "type", input_kind_name(in->kind));
	if (in->sha256[0])
		json_field(f, "sha256", in->sha256);
	fputs("}\n", f);
}

static void write_error(FILE *f, const char *input, const struct problem *e)
{
	fputs("{\"input\":", f);
	json_str(f, input);
	json_field(f, "error", e->msg);
	if (strcmp(input, e->path))
		json_field(f, "at", e->path);
	fputs("}\n", f);
}

/* A run of the file: an input and its records, or a problem that names no input (a missing path). */
struct block {
	const char *path;
	ssize_t input; /* -1: the problem errs[err] */
	size_t err;
};

/* What write_all prints, ordered. */
struct writing {
	const struct index_header *h;
	const struct state *s;
	const struct problem **errs; /* sorted by path and message, each once */
	size_t nerrs;
	ssize_t *err_input;		 /* the input each names, or -1 */
	size_t *err_order, *err_start;	 /* those of inputs, by input (in sorted order) */
	size_t *part_order, *skip_order; /* by input (state_order_by_input) */
	size_t *part_start, *skip_start; /* where each input's begin in them */
	struct block *blocks;
	size_t nblocks;
};

static int cmp_err(const void *pa, const void *pb)
{
	const struct problem *a = *(const struct problem *const *)pa;
	const struct problem *b = *(const struct problem *const *)pb;
	int c = strcmp(a->path, b->path);

	return c ? c : strcmp(a->msg, b->msg);
}

static int cmp_block(const void *pa, const void *pb)
{
	const struct block *a = pa, *b = pb;
	int c = strcmp(a->path, b->path);

	if (c)
		return c;
	if ((a->input < 0) != (b->input < 0))
		return a->input < 0 ? 1 : -1;
	return a->err < b->err ? -1 : a->err > b->err;
}

ssize_t index_error_input(const struct state *s, const char *path)
{
	char buf[4096], *bang;
	ssize_t i;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -1;
	while ((i = state_find_input(s, buf)) < 0 && (bang = strrchr(buf, '!')))
		*bang = '\0';
	return i;
}

/* Where each input's elements begin in order (counts of the inputs before it). */
static size_t *starts(const struct state *s, const size_t *order, size_t n, bool skips)
{
	size_t *start = calloc(s->ninputs + 2, sizeof(*start));

	if (!start)
		return NULL;
	for (size_t k = 0; k < n; k++)
		start[(skips ? s->skips[order[k]].input : s->parts[order[k]].input) + 1]++;
	for (size_t i = 0; i < s->ninputs; i++)
		start[i + 1] += start[i];
	return start;
}

static void write_block(FILE *f, const struct writing *w, const struct block *bl)
{
	const struct state *s = w->s;
	const char *input = bl->path;

	if (bl->input < 0) {
		write_error(f, input, w->errs[bl->err]);
		return;
	}
	write_input(f, &s->inputs[bl->input]);
	for (size_t k = w->part_start[bl->input]; k < w->part_start[bl->input + 1]; k++)
		write_part(f, input, &s->parts[w->part_order[k]]);
	for (size_t k = w->skip_start[bl->input]; k < w->skip_start[bl->input + 1]; k++)
		write_skip(f, input, &s->skips[w->skip_order[k]]);
	for (size_t k = w->err_start[bl->input]; k < w->err_start[bl->input + 1]; k++)
		write_error(f, input, w->errs[w->err_order[k]]);
}

static void write_all(FILE *f, void *ctx)
{
	const struct writing *w = ctx;

	fprintf(f, "{\"lidia_index\":%d", INDEX_VERSION);
	json_field(f, "fallback_key", fallback_name(w->h->fallback));
	fprintf(f, ",\"inputs\":%zu", w->h->ninputs);
	json_field(f, "inputs_sha256", w->h->inputs_sha256);
	json_field(f, "options", w->h->options ? w->h->options : "");
	if (w->h->slice_n)
		fprintf(f, ",\"slice\":\"%u/%u\"", w->h->slice_k, w->h->slice_n);
	fputs("}\n", f);
	for (size_t i = 0; i < w->nblocks; i++)
		write_block(f, w, &w->blocks[i]);
}

/* The problems of each input, in their sorted order (a counting sort by input). */
static int order_errors(struct writing *w)
{
	size_t n = w->s->ninputs, *next;

	w->err_start = calloc(n + 2, sizeof(*w->err_start));
	w->err_order = malloc((w->nerrs + 1) * sizeof(*w->err_order));
	next = malloc((n + 1) * sizeof(*next));
	if (!w->err_start || !w->err_order || !next) {
		free(next);
		return -ENOMEM;
	}
	for (size_t e = 0; e < w->nerrs; e++)
		if (w->err_input[e] >= 0)
			w->err_start[w->err_input[e] + 1]++;
	for (size_t i = 0; i < n; i++)
		w->err_start[i + 1] += w->err_start[i];
	memcpy(next, w->err_start, (n + 1) * sizeof(*next));
	for (size_t e = 0; e < w->nerrs; e++)
		if (w->err_input[e] >= 0)
			w->err_order[next[w->err_input[e]]++] = e;
	free(next);
	return 0;
}

/* The problems sorted, each once, with their inputs; the blocks sorted by path. */
static int order_all(struct writing *w, const struct problems *errors)
{
	const struct state *s = w->s;
	size_t nerrors = errors->n;

	for (size_t e = 0; e < nerrors; e++)
		w->errs[e] = &errors->v[e];
	if (nerrors > 1)
		qsort(w->errs, nerrors, sizeof(*w->errs), cmp_err);
	for (size_t e = 0; e < nerrors; e++)
		if (!w->nerrs || cmp_err(&w->errs[w->nerrs - 1], &w->errs[e]))
			w->errs[w->nerrs++] = w->errs[e];
	for (size_t i = 0; i < s->ninputs; i++)
		w->blocks[w->nblocks++] = (struct block){ s->inputs[i].path, (ssize_t)i, 0 };
	for (size_t e = 0; e < w->nerrs; e++)
		if ((w->err_input[e] = index_error_input(s, w->errs[e]->path)) < 0)
			w->blocks[w->nblocks++] = (struct block){ w->errs[e]->path, -1, e };
	if (w->nblocks > 1)
		qsort(w->blocks, w->nblocks, sizeof(*w->blocks), cmp_block);
	w->part_order = state_order_by_input(s, false);
	w->skip_order = state_order_by_input(s, true);
	if (!w->part_order || !w->skip_order)
		return -ENOMEM;
	w->part_start = starts(s, w->part_order, s->nparts, false);
	w->skip_start = starts(s, w->skip_order, s->nskips, true);
	return w->part_start && w->skip_start ? order_errors(w) : -ENOMEM;
}

/* To standard output: as a file would hold it, a write error failing. */
static int write_stdout(void (*print)(FILE *f, void *ctx), void *ctx)
{
	print(stdout, ctx);
	return fflush(stdout) || ferror(stdout) ? -EIO : 0;
}

int index_write(const char *path, const struct index_header *h, const struct state *s,
		const struct problems *errors)
{
	struct writing w = { .h = h, .s = s };
	size_t nerrors = errors->n;
	int err = -ENOMEM;

	w.errs = malloc((nerrors + 1) * sizeof(*w.errs));
	w.err_input = malloc((nerrors + 1) * sizeof(*w.err_input));
	w.blocks = malloc((s->ninputs + nerrors + 1) * sizeof(*w.blocks));
	if (w.errs && w.err_input && w.blocks && !(err = order_all(&w, errors)))
		err = strcmp(path, "-") ? write_file(path, write_all, &w)
					: write_stdout(write_all, &w);
	free(w.errs);
	free(w.err_input);
	free(w.blocks);
	free(w.part_order);
	free(w.skip_order);
	free(w.part_start);
	free(w.skip_start);
	free(w.err_order);
	free(w.err_start);
	return err;
}
