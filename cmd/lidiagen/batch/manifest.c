/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The manifest (batch_internal.h), written atomically (tempfile.h) once the
 * run is done: every input accounted for. First a JSON line per build ID,
 * in key order: written ("converted", "replaced"), "kept", "skipped" (why)
 * or "failed" (the message), in a bucket "uploaded", "replaced", "exists"
 * or "failed", and with --dry-run "would-write" (a bucket: "would-upload")
 * or "would-replace"; an output another run put there while this one was
 * writing, and kept, has a "reason" saying so (the words of every decision
 * are decision.c's); then a line per ELF image passed over and per input
 * that failed, by path. The counts are the file's, as `lidiagen info`
 * counts them. doc/lidiagen.1 (MANIFEST) documents every field.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "batch_internal.h"
#include "oci_dir.h"
#include "json.h"
#include "names.h"
#include "tempfile.h"

/* A group no verdict was given: failed, never converted, or another shard's. */
static const char *undecided_status(const struct group *g)
{
	return g->status == ST_OTHER_SHARD ? "skipped" : "failed";
}

static void print_group(FILE *f, const struct batch *b, const struct group *g)
{
	bool output = g->status == ST_CONVERTED || g->status == ST_REPLACED || g->status == ST_KEPT;
	bool decided = g->verdict && g->status != ST_FAILED && g->status != ST_PENDING;

	fputs("{\"build_id\":", f);
	json_str(f, g->key);
	if (output || g->status == ST_PLANNED)
		manifest_object(f, b->o->out_dir, g->out_key);
	json_field(f, "status", decided ? verdict_status(b, g) : undecided_status(g));
	if (g->status == ST_OTHER_SHARD)
		json_field(f, "reason", "other shard");
	else if (decided && verdict_reason(g))
		json_field(f, "reason", verdict_reason(g));
	fputs(",\"inputs\":[", f);
	for (size_t k = 0; k < g->n; k++) {
		if (k)
			fputc(',', f);
		json_str(f, b->state.parts[g->first + k].path);
	}
	if (g->fetched_from) {
		fputc(',', f);
		json_str(f, g->fetched_from);
	}
	if (g->fetched_alt) {
		fputc(',', f);
		json_str(f, g->fetched_alt);
	}
	fputc(']', f);
	if (g->main >= 0)
		fprintf(f, ",\"go\":%s", b->state.parts[g->main].info.has_go ? "true" : "false");
	if (output)
		manifest_holds(f, g->level, &g->counts, g->out_size, g->sha);
	if (g->warning)
		json_field(f, "warning", g->warning);
	if (g->status == ST_FAILED || g->status == ST_PENDING)
		json_field(f, "error",
			   g->message && g->message_is_error ? g->message : "not converted");
	fputs("}\n", f);
}

static void print_skip(FILE *f, const struct state_skip *k)
{
	fputs("{\"input\":", f);
	json_str(f, k->path);
	json_field(f, "status", "skipped");
	json_field(f, "reason", skip_reason_name(k->reason));
	if (k->reason == SKIP_SHORT_KEY || k->reason == SKIP_DEGENERATE_KEY)
		json_field(f, "build_id", k->key);
	if (k->reason == SKIP_NO_KEY && k->go)
		fputs(",\"go\":true", f);
	fputs("}\n", f);
}

static int cmp_input(const void *pa, const void *pb)
{
	return strcmp((*(const struct state_input *const *)pa)->path,
		      (*(const struct state_input *const *)pb)->path);
}

/* A line per input the run opened: how often, and bytes read (mapped: its size), by path. */
static void print_reads(FILE *f, const struct batch *b)
{
	const struct state *s = &b->state;
	const struct state_input **in = malloc((s->ninputs + 1) * sizeof(*in));
	size_t n = 0;

	if (!in)
		return;
	for (size_t i = 0; i < s->ninputs; i++)
		if (s->inputs[i].opened)
			in[n++] = &s->inputs[i];
	if (n > 1)
		qsort(in, n, sizeof(*in), cmp_input);
	for (size_t i = 0; i < n; i++) {
		fputs("{\"read\":", f);
		json_str(f, oci_dir_name(in[i]->path)); /* an OCI layout directory, not its tar */
		fprintf(f, ",\"opened\":%u,\"bytes\":%" PRIu64 "}\n", in[i]->opened,
			in[i]->bytes_read);
	}
	free(in);
}

static void print_manifest(FILE *f, void *ctx)
{
	struct batch *b = ctx;

	for (size_t i = 0; i < b->ngroups; i++)
		print_group(f, b, &b->groups[i]);
	/* Sorted by make_groups (state_sort_parts): the same order every run. */
	for (size_t i = 0; i < b->state.nskips; i++)
		print_skip(f, &b->state.skips[i]);
	problems_sort(&b->failures);
	for (size_t i = 0; i < b->failures.n; i++) {
		fputs("{\"input\":", f);
		json_str(f, b->failures.v[i].path);
		json_field(f, "status", "failed");
		json_field(f, "error", b->failures.v[i].msg);
		fputs("}\n", f);
	}
	print_reads(f, b);
}

int write_manifest(struct batch *b)
{
	return write_file(b->o->manifest, print_manifest, b);
}
