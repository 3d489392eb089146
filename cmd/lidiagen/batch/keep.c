/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Keep or replace (batch_internal.h): an output already in the tree that
 * holds at least what the inputs give (symbols < lines < inline frames;
 * equal is enough) is kept, untouched; --force reconverts. Decided here
 * only, for convert.c (before reading the images, by their prediction and
 * the state, and after, by what they gave) and for schedule.c (whether an
 * archive must be streamed at all). convert.c also keeps an output whose
 * bytes are those it would write. The warnings about what inputs give
 * (.dynsym only, nothing) are decided here too, for kept outputs as for
 * written ones, so that every run over the same inputs says the same.
 */
#include <pthread.h>
#include <string.h>

#include "batch_internal.h"

void warn_dynsym_only(struct batch *b, struct group *g, bool dynsym_only)
{
	/* An output with more than symbols came from better inputs: nothing to fix. */
	if (dynsym_only && g->level <= LEVEL_SYMBOLS)
		group_warning(
			g, "%s: only exported symbols (.dynsym) to symbolize with: " FIX_NO_SYMBOLS,
			b->state.parts[g->main].path);
}

void settle_nothing(struct batch *b, struct group *g)
{
	decide(b, g, V_NOTHING, LEVEL_NONE);
	pthread_mutex_lock(&b->lock);
	state_set_output(&b->state, g->key, LEVEL_NONE, false);
	pthread_mutex_unlock(&b->lock);
	group_warning(g, "%s: nothing to symbolize (no function), not written: " FIX_NO_SYMBOLS,
		      b->state.parts[g->main].path);
}

void settle_mixed(struct batch *b, struct group *g)
{
	const char *main = b->state.parts[g->main].path;

	decide(b, g, V_MIXED, LEVEL_NONE);
	if (g->bin >= 0)
		group_warning(g,
			      "%s and %s: %s, not written: give the debug file split off the "
			      "binary as it is",
			      b->state.parts[g->bin].path, main,
			      lidia_strerror(LIDIA_E_ELF_ADDRESSES));
	else
		group_warning(g,
			      "%s and the debug file found for it: %s, not written: give the "
			      "debug file split off the binary as it is",
			      main, lidia_strerror(LIDIA_E_ELF_ADDRESSES));
}

void settle_dynsym_only(struct batch *b, struct group *g)
{
	decide(b, g, V_DYNSYM_ONLY, LEVEL_SYMBOLS);
	pthread_mutex_lock(&b->lock);
	state_set_output(&b->state, g->key, LEVEL_SYMBOLS, true);
	pthread_mutex_unlock(&b->lock);
	group_warning(g,
		      "%s: only exported symbols (.dynsym), not written (the profiler would "
		      "look no further): " FIX_NO_SYMBOLS ", or --allow-dynsym-only",
		      b->state.parts[g->main].path);
}

/* The state says the unchanged inputs give .dynsym alone, and nothing is there to keep. */
static bool skips_dynsym_only(const struct batch *b, const struct group *g,
			      const struct existing *ex)
{
	return !b->o->allow_dynsym_only && g->known_level > 0 && g->known_dynsym &&
	       ex->level == LEVEL_NONE;
}

bool settles_unread(const struct batch *b, const struct group *g, const struct existing *ex)
{
	if (b->o->force || (g->poor && g->known_level < 0))
		return false;
	return (g->known_level == LEVEL_NONE && ex->level == LEVEL_NONE) ||
	       skips_dynsym_only(b, g, ex) || keep_enough(ex->level, g->predicted);
}

bool settle_unread(struct batch *b, struct group *g, const struct existing *ex)
{
	if (!settles_unread(b, g, ex))
		return false;
	if (g->known_level == LEVEL_NONE && ex->level == LEVEL_NONE) {
		settle_nothing(b, g);
		return true;
	}
	if (skips_dynsym_only(b, g, ex)) {
		settle_dynsym_only(b, g);
		return true;
	}
	return keep_if_enough(b, g, ex, false);
}

bool keep_if_enough(struct batch *b, struct group *g, const struct existing *ex, bool extracted)
{
	enum level inputs = extracted ? g->level : g->predicted;
	int remember = (int)inputs;

	if (!keep_enough(ex->level, inputs))
		return false;
	/* Remember what the inputs give: known once read, else what they gave last time. */
	if (!extracted) {
		remember = state_output_level(b->state.saved, g->key);
		if (remember <= 0)
			remember = (int)ex->level;
	}
	pthread_mutex_lock(&b->lock);
	state_set_output(&b->state, g->key, remember, g->known_dynsym);
	pthread_mutex_unlock(&b->lock);
	decide(b, g, inputs < ex->level && extracted ? V_KEPT_MORE : V_KEPT, inputs);
	/* The manifest describes the file in the tree: the old one's counts. */
	g->counts = ex->counts;
	g->level = ex->level;
	g->out_size = ex->size;
	memcpy(g->sha, ex->sha, sizeof(g->sha));
	warn_dynsym_only(b, g, g->known_dynsym);
	return true;
}
