/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: DWARF, the line programs units share. dwz's partial units
 * (thousands in a large C library) name their compile unit's program, and
 * own no code: decoding it per unit would cost its rows as many times.
 *
 * The units are grouped by the program they name (its offset in .debug_line,
 * read with the same address size). Each program is decoded once (by
 * dwarf.c), by its owner, the first unit of the group with code, else the
 * first; it is kept, and reused through a pool of spare buffers, until the
 * last unit with code reading it is done. A unit whose comp_dir differs from
 * the owner's joins the files otherwise, and decodes its own. The rows that
 * no kept subprogram of any unit of the group covers are the orphans, taken
 * once, by the owner. Sorting the units costs O(units log units), whatever
 * they share.
 *
 * Apart from dwarf.c, whose passes need only ask for a unit's lines and give
 * them back: the groups' bookkeeping is one job. The decoding stays there,
 * next to the paths it joins, so that calls go one way (dwarf.c to here).
 */
#include "internal.h"
#include "line_groups.h"
#include "name_blocks.h"
#include "orphan_spans.h"

/* Buffers for a line program: a spare one (its arrays kept), or new; NULL: no memory. */
static struct lines *lines_get(struct dw *w)
{
	return w->nspare ? w->spare[--w->nspare] : calloc(1, sizeof(struct lines));
}

static void lines_free(struct lines *l)
{
	if (l)
		line_table_release(&l->lt);
	free(l);
}

/* Done with l (may be NULL): a spare for the next program. */
void lines_put(struct dw *w, struct lines *l)
{
	if (!l)
		return;
	if (LIDIA_GROW(w->spare, w->nspare + 1, w->cap_spare))
		lines_free(l);
	else
		w->spare[w->nspare++] = l;
}

static int cmp_member(const void *pa, const void *pb)
{
	const struct member *a = pa, *b = pb;

	if (a->line_offset != b->line_offset)
		return a->line_offset < b->line_offset ? -1 : 1;
	if (a->address_size != b->address_size)
		return a->address_size < b->address_size ? -1 : 1;
	return a->unit < b->unit ? -1 : a->unit > b->unit; /* unit order within a group */
}

static bool same_dir(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* g's owner, and the units with code that read its rows as the owner decoded them. */
static void group_roles(struct dw *w, struct line_group *g)
{
	const char *dir;

	g->owner = w->members[g->first].unit;
	for (size_t k = g->first; k < g->end; k++) {
		if (w->units[w->members[k].unit].has_code) {
			g->owner = w->members[k].unit;
			break;
		}
	}
	dir = w->units[g->owner].comp_dir;
	g->users = 0;
	for (size_t k = g->first; k < g->end; k++) {
		const struct unit *un = &w->units[w->members[k].unit];

		g->users += un->has_code && same_dir(un->comp_dir, dir);
	}
}

/*
 * After the overlaps are resolved: which units have code, and the units of
 * each line program (the same offset, read with the same address size).
 * Sorting costs O(units log units), whatever they share.
 */
int plan_groups(struct dw *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->nsubs; i++)
		if (w->subs[i].kept)
			w->units[w->subs[i].unit].has_code = true;
	w->members = malloc(w->nunits * sizeof(*w->members) + 1);
	w->groups = malloc(w->nunits * sizeof(*w->groups) + 1);
	if (!w->members || !w->groups)
		return -ENOMEM;
	for (uint32_t u = 0; u < w->nunits; u++)
		if (w->units[u].has_lines)
			w->members[n++] = (struct member){ w->units[u].line_offset, u,
							   w->units[u].address_size };
	sort_array(w->members, n, sizeof(*w->members), cmp_member);
	for (size_t i = 0, j; i < n; i = j) {
		struct line_group *g = &w->groups[w->ngroups];

		for (j = i + 1; j < n && w->members[j].line_offset == w->members[i].line_offset &&
				w->members[j].address_size == w->members[i].address_size;
		     j++)
			;
		*g = (struct line_group){ .first = i, .end = j };
		for (size_t k = i; k < j; k++)
			w->units[w->members[k].unit].group = (uint32_t)w->ngroups;
		group_roles(w, g);
		w->ngroups++;
	}
	return 0;
}

static int cmp_lo(const void *pa, const void *pb)
{
	const struct interval *a = pa, *b = pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* The kept subprogram ranges of g's units, sorted; they never overlap (resolve_overlaps). */
static int group_code(struct dw *w, const struct line_group *g, struct interval **out, size_t *n)
{
	struct interval *iv;
	size_t max = 0;

	for (size_t k = g->first; k < g->end; k++) {
		const struct unit *un = &w->units[w->members[k].unit];

		max += un->subs_end - un->subs_first;
	}
	if (!(*out = iv = malloc((max + 1) * sizeof(*iv))))
		return -ENOMEM;
	*n = 0;
	for (size_t k = g->first; k < g->end; k++) {
		const struct unit *un = &w->units[w->members[k].unit];

		for (size_t i = un->subs_first; i < un->subs_end; i++)
			if (w->subs[i].kept)
				iv[(*n)++] = (struct interval){ w->subs[i].lo, w->subs[i].hi };
	}
	sort_array(iv, *n, sizeof(*iv), cmp_lo);
	return 0;
}

/*
 * Keep the rows of g's program (w->rows) that no kept subprogram range of
 * its units covers, where the program describes the code (orphan_spans.h):
 * once per program, however many units name it.
 */
int keep_orphans(struct dw *w, const struct line_group *g)
{
	const char *last_in = NULL, *last_out = NULL;
	bool open = false; /* the last row kept is in effect still */
	struct span_clip clip;
	struct interval *iv;
	size_t niv, k = 0;
	int err = group_code(w, g, &iv, &niv);

	if (err)
		return err;
	span_clip_begin(&clip, w, g);
	for (size_t i = 0; i < w->nrows && !err; i++) {
		const struct line_row *r = &w->rows[i];
		bool inside;

		while (k < niv && iv[k].hi <= r->addr)
			k++;
		inside = k < niv && iv[k].lo <= r->addr;
		if (inside && open) /* a row left out ends the one kept before it */
			err = span_clip_row(&clip, r->addr, NULL, 0);
		if (inside) {
			open = false;
			continue;
		}
		open = r->file != NULL;
		if (r->file && r->file != last_in) { /* a copy that outlives the program */
			last_in = r->file;
			last_out = name_blocks_str(&w->x->orphans.names, r->file, NULL);
			if (!last_out) {
				err = -ENOMEM;
				break;
			}
		}
		err = span_clip_row(&clip, r->addr, r->file ? last_out : NULL, r->line);
	}
	if (!err)
		err = span_clip_end(&clip);
	free(iv);
	return err;
}

void groups_rewind(struct dw *w, uint32_t first, uint32_t end)
{
	for (uint32_t u = first; u < end; u++) {
		struct line_group *g;

		if (w->units[u].group == NO_GROUP)
			continue;
		g = &w->groups[w->units[u].group];
		lines_free(g->lines);
		g->lines = NULL;
		group_roles(w, g);
	}
}

/* u reads its group's rows: it has code, and its comp_dir joins the files as the owner's did. */
static bool reads_group(const struct dw *w, const struct unit *un, const struct line_group *g)
{
	return un->has_code && same_dir(un->comp_dir, w->units[g->owner].comp_dir);
}

int take_lines(struct dw *w, uint32_t u, struct lines **own, struct lines **decode)
{
	static const struct lines none;
	struct unit *un = &w->units[u];
	struct line_group *g = un->group == NO_GROUP ? NULL : &w->groups[un->group];
	const struct extract_ctx *x = w->x;

	w->cur = &none;
	*own = *decode = NULL;
	if (!x->lines && !x->files && !x->inlines)
		return 0; /* nothing reads lines */
	if (g && g->owner == u) {
		if (!(g->lines = lines_get(w)))
			return -ENOMEM;
		w->cur = *decode = g->lines;
	} else if (g && reads_group(w, un, g)) {
		/* The owner came first (the first unit with code), and kept them for u. */
		w->cur = g->lines ? g->lines : &none;
	} else if (un->has_code) {
		if (!(*own = lines_get(w)))
			return -ENOMEM;
		w->cur = *decode = *own;
	}
	return 0;
}
/* Done with unit u's lines: its group's go with their last user. */
void close_lines(struct dw *w, uint32_t u, struct lines *own)
{
	const struct unit *un = &w->units[u];
	struct line_group *g = un->group == NO_GROUP ? NULL : &w->groups[un->group];

	lines_put(w, own);
	w->cur = NULL;
	if (!g || !g->lines)
		return;
	if (reads_group(w, un, g))
		g->users--;
	if (!g->users) {
		lines_put(w, g->lines);
		g->lines = NULL;
	}
}

void lines_release_spares(struct dw *w)
{
	for (size_t i = 0; i < w->nspare; i++)
		lines_free(w->spare[i]);
	free(w->spare);
	w->spare = NULL;
	w->nspare = w->cap_spare = 0;
}

void line_groups_release(struct dw *w)
{
	for (size_t g = 0; g < w->ngroups; g++)
		lines_free(w->groups[g].lines);
	free(w->groups);
	free(w->members);
	free(w->orphan_spans);
	lines_release_spares(w);
}
