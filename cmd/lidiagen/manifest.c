/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The manifest (batch_internal.h): one JSON line per build ID converted or
 * kept, in group order, written atomically (tempfile.h) once the run is done.
 */
#include <inttypes.h>
#include <string.h>

#include "batch_internal.h"
#include "json.h"
#include "tempfile.h"

static void json_str(FILE *f, const char *s)
{
	json_string(f, s, strlen(s));
}

static void print_group(FILE *f, const struct batch *b, const struct group *g)
{
	fputs("{\"build_id\":", f);
	json_str(f, g->key);
	fputs(",\"output\":", f);
	json_str(f, g->out_key);
	fprintf(f, ",\"status\":\"%s\",\"inputs\":[", g->status == ST_KEPT ? "kept" : "converted");
	for (size_t k = 0; k < g->n; k++) {
		if (k)
			fputc(',', f);
		json_str(f, b->state.parts[g->first + k].path);
	}
	fprintf(f,
		"],\"holds\":{\"symbols\":true,\"lines\":%s,\"inlines\":%s,\"go\":%s},"
		"\"counts\":{\"functions\":%zu,\"inline_ranges\":%zu,\"line_rows\":%zu},"
		"\"size\":%" PRIu64 ",\"sha256\":\"%s\"}\n",
		g->level >= LEVEL_LINES ? "true" : "false",
		g->level >= LEVEL_INLINES ? "true" : "false",
		b->state.parts[g->main].info.has_go ? "true" : "false", g->st.functions,
		g->st.inline_ranges, g->st.line_rows, g->out_size, g->sha);
}

static void print_manifest(FILE *f, void *ctx)
{
	const struct batch *b = ctx;

	for (size_t i = 0; i < b->ngroups; i++)
		if (b->groups[i].status == ST_CONVERTED || b->groups[i].status == ST_KEPT)
			print_group(f, b, &b->groups[i]);
}

int write_manifest(struct batch *b)
{
	return write_file(b->o->manifest, print_manifest, b);
}
