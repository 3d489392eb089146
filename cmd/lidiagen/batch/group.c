/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pairing (batch_internal.h): the parts, sorted by key, become groups, one
 * per key. Each picks the image to read (the one with the most information)
 * and its binary, wherever each was found, and predicts what they give.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "batch_internal.h"

/* The rank of a part as the image to read: more information first. */
static int part_rank(const struct state_part *p)
{
	return (p->info.has_dwarf ? 8 : 0) + (p->info.has_go ? 4 : 0) +
	       (p->info.has_symtab ? 2 : 0) + (p->member ? 0 : 1);
}

static bool shard_of(const struct batch_opts *o, const char *key)
{
	char head[9] = { 0 };

	if (!o->shard_n || o->shard_by_input)
		return true; /* every shard, or assign_by_input decides */
	memcpy(head, key, strnlen(key, 8));
	return strtoul(head, NULL, 16) % o->shard_n == o->shard_k - 1;
}

static enum level predicted_level(const struct batch_opts *o, const struct state_part *p)
{
	bool rich = (p->info.has_dwarf && !o->extract.no_dwarf) ||
		    (p->info.has_go && !o->extract.no_go);

	if (!rich || o->extract.no_lines)
		return rich && !o->extract.no_inlines ? LEVEL_INLINES : LEVEL_SYMBOLS;
	return o->extract.no_inlines ? LEVEL_LINES : LEVEL_INLINES;
}

/* The group's images: the best part to read, and a binary beside it if there is one. */
static void pick_images(const struct state *s, struct group *g)
{
	g->main = g->bin = -1;
	/* Parts are sorted by key, then path: the first best one wins every run. */
	for (size_t k = g->first; k < g->first + g->n; k++) {
		const struct state_part *pt = &s->parts[k];

		if (g->main < 0 || part_rank(pt) > part_rank(&s->parts[g->main]))
			g->main = (ssize_t)k;
		if (!pt->info.debug_file &&
		    (g->bin < 0 || (!pt->member && s->parts[g->bin].member)))
			g->bin = (ssize_t)k;
	}
	if (g->bin == g->main)
		g->bin = -1;
}

/* Whether an image gives more than .dynsym's symbols for certain. */
static bool rich(const struct state_part *p)
{
	return p->info.has_symtab || p->info.has_dwarf || p->info.has_go;
}

/*
 * What the images will give, at most: the prediction keep.c weighs an
 * existing output by; and what they gave last time, if the state knows.
 */
static void predict(const struct batch *b, struct group *g)
{
	const struct state *s = &b->state;
	enum level l = predicted_level(b->o, &s->parts[g->main]);
	bool unchanged = true;
	int last = state_output_level(s->saved, g->key);

	if (g->bin >= 0 && predicted_level(b->o, &s->parts[g->bin]) > l)
		l = predicted_level(b->o, &s->parts[g->bin]);
	/* Unchanged parts give what they gave last time (-O0: no inlines). */
	for (size_t k = g->first; k < g->first + g->n; k++)
		unchanged &= s->inputs[s->parts[k].input].from_state;
	if (unchanged && last > 0 && last < (int)l)
		l = (enum level)last;
	g->predicted = l;
	g->poor = !rich(&s->parts[g->main]) && (g->bin < 0 || !rich(&s->parts[g->bin]));
	g->known_level = unchanged ? last : -1;
	g->known_dynsym = unchanged && state_output_dynsym_only(s->saved, g->key);
	g->ask_debuginfod = b->o->debuginfod && !b->o->extract.no_dwarf &&
			    !s->parts[g->main].info.has_dwarf &&
			    (g->bin < 0 || !s->parts[g->bin].info.has_dwarf);
	/* The servers may give DWARF: what the inputs gave last time bounds nothing. */
	if (g->ask_debuginfod) {
		g->predicted =
			predicted_level(b->o, &(struct state_part){ .info.has_dwarf = true });
		g->known_level = -1;
		g->known_dynsym = false;
	}
}

int make_groups(struct batch *b)
{
	struct state *s = &b->state;

	state_sort_parts(s);
	for (size_t i = 0; i < s->nparts;) {
		struct group *g;
		size_t j = i;
		void *p;

		while (j < s->nparts && !strcmp(s->parts[j].key, s->parts[i].key))
			j++;
		p = realloc(b->groups, (b->ngroups + 1) * sizeof(*b->groups));
		if (!p)
			return -ENOMEM;
		b->groups = p;
		g = &b->groups[b->ngroups++];
		memset(g, 0, sizeof(*g));
		g->key = s->parts[i].key;
		g->first = i;
		g->n = j - i;
		pick_images(s, g);
		predict(b, g);
		if (!shard_of(b->o, g->key)) {
			g->status = ST_OTHER_SHARD;
			g->done = true;
			b->skipped_shard++;
		}
		i = j;
	}
	return 0;
}
