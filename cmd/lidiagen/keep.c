/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Keep or replace (batch_internal.h): an output already in the tree that
 * holds at least what the inputs give (symbols < lines < inline frames) is
 * kept, untouched; --force rewrites. Decided here only, for convert.c
 * (before reading the images, by their prediction, and after, by what they
 * gave) and for schedule.c (whether an archive must be streamed at all).
 */
#include <pthread.h>
#include <string.h>

#include "batch_internal.h"
#include "sha256.h"

static const char *const level_names[] = { "nothing", "symbols", "symbols+lines",
					   "symbols+lines+inlines" };

void existing_read(const char *path, bool want_sha, struct existing *ex)
{
	struct lidia_reader *r;
	struct lidia_file_info fi;

	memset(ex, 0, sizeof(*ex));
	ex->level = LEVEL_NONE;
	if (lidia_reader_open(&r, path, &LIDIA_READER_OPTS(.check_crc = true)))
		return;
	lidia_reader_info(r, &fi);
	ex->st.line_rows = fi.lines.count;
	for (size_t i = 0; i < lidia_reader_count(r); i++) {
		struct lidia_range_info ri;

		if (lidia_reader_range(r, i, &ri))
			continue;
		if (ri.depth)
			ex->st.inline_ranges++;
		else
			ex->st.functions++;
	}
	ex->level = stats_level(&ex->st);
	ex->size = fi.file_size;
	lidia_reader_close(r);
	if (want_sha)
		sha256_file(path, ex->sha);
}

enum level stats_level(const struct lidia_extract_stats *st)
{
	return st->inline_ranges ? LEVEL_INLINES : st->line_rows ? LEVEL_LINES : LEVEL_SYMBOLS;
}

bool keep_enough(enum level existing, enum level inputs)
{
	return existing != LEVEL_NONE && existing >= inputs;
}

bool keep_if_enough(struct batch *b, struct group *g, const struct existing *ex, bool extracted)
{
	enum level inputs = extracted ? g->level : g->predicted;
	int remember = (int)inputs;

	if (!keep_enough(ex->level, inputs))
		return false;
	/* Remember what the inputs give: known once read, else what they gave last time. */
	pthread_mutex_lock(&b->lock);
	if (!extracted) {
		remember = state_output_level(b->state.saved, g->key);
		if (remember <= 0)
			remember = (int)ex->level;
	}
	state_set_output(&b->state, g->key, remember);
	pthread_mutex_unlock(&b->lock);
	if (inputs < ex->level && extracted)
		group_message(g, false, "kept %s/%s: it has %s, the inputs only %s", b->o->out_dir,
			      g->out_key, level_names[ex->level], level_names[inputs]);
	else
		group_message(g, false, "kept %s/%s: it has %s already", b->o->out_dir, g->out_key,
			      level_names[ex->level]);
	/* The manifest describes the file in the tree: the old one's counts. */
	g->status = ST_KEPT;
	g->st = ex->st;
	g->level = ex->level;
	g->out_size = ex->size;
	memcpy(g->sha, ex->sha, sizeof(g->sha));
	return true;
}
