/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: DWARF, where each line program's orphan rows hold (orphan_spans.h). */
#include "internal.h"
#include "orphan_spans.h"

/*
 * The unit's own ranges (its DIE's), unless .debug_aranges lists it; none
 * when libdw cannot read them all, as LLVM then takes none. A dwz partial
 * unit our scan found without addresses is not asked: libdw would read its
 * whole abbreviation table to find that (its DIE's entry comes last), a
 * fiftieth of ld.gold's time.
 */
static int add_unit_ranges(struct code_owners *o, struct unit *un)
{
	size_t mark = o->n;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int err;

	if (un->no_ranges || code_owners_listed(o, un->unit_off))
		return 0;
	while ((off = dwarf_ranges(&un->die, off, &base, &lo, &hi)) > 0)
		if ((err = code_owners_add(o, un->unit_off, lo, hi)))
			return err;
	if (off < 0)
		o->n = mark;
	return 0;
}

/* The group of the unit at unit_off, or NO_GROUP (no such unit read, or no program). */
static uint32_t group_at(const struct dw *w, uint64_t unit_off)
{
	size_t lo = 0, hi = w->nunits;

	while (lo < hi) { /* the units are in .debug_info's order */
		size_t mid = lo + (hi - lo) / 2;

		if (w->units[mid].unit_off == unit_off)
			return w->units[mid].group;
		if (w->units[mid].unit_off < unit_off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NO_GROUP;
}

/* o's spans, each group's together in address order, into w->orphan_spans. */
static int by_group(struct dw *w, const struct code_owners *o)
{
	struct owned_span *v = malloc(o->n * sizeof(*v) + 1);
	uint32_t *group = malloc(o->n * sizeof(*group) + 1); /* each span's, looked up once */

	if (!v || !group) {
		free(v);
		free(group);
		return -ENOMEM;
	}
	for (size_t g = 0; g < w->ngroups; g++)
		w->groups[g].spans_first = w->groups[g].spans_end = 0;
	for (size_t i = 0; i < o->n; i++)
		if ((group[i] = group_at(w, o->v[i].unit_off)) != NO_GROUP)
			w->groups[group[i]].spans_end++; /* a count, for now */
	for (size_t g = 0, at = 0; g < w->ngroups; g++) {
		w->groups[g].spans_first = at;
		at += w->groups[g].spans_end;
		w->groups[g].spans_end = w->groups[g].spans_first;
	}
	for (size_t i = 0; i < o->n; i++)
		if (group[i] != NO_GROUP)
			v[w->groups[group[i]].spans_end++] = o->v[i];
	free(group);
	w->orphan_spans = v;
	return 0;
}

int plan_orphan_spans(struct dw *w)
{
	struct code_owners o = { 0 };
	int err;

	if (!w->x->lines)
		return 0; /* no orphan rows are kept */
	err = code_owners_read_aranges(&o, w->secs.aranges, w->secs.aranges_size);

	for (size_t u = 0; u < w->nunits && !err; u++)
		err = add_unit_ranges(&o, &w->units[u]);
	if (!err && !(err = code_owners_resolve(&o)))
		err = by_group(w, &o);
	code_owners_release(&o);
	return err;
}

/* ---- Cutting a group's rows to its spans ------------------------------------------- */

void span_clip_begin(struct span_clip *c, struct dw *w, const struct line_group *g)
{
	*c = (struct span_clip){ .v = w->orphan_spans + g->spans_first,
				 .n = g->spans_end - g->spans_first,
				 .out = &w->x->orphans,
				 .bias = w->x->bias };
}

static int put(struct span_clip *c, uint64_t addr, const char *file, int line)
{
	int err = LIDIA_GROW(c->out->v, c->out->n + 1, c->out->cap);

	if (!err)
		c->out->v[c->out->n++] = (struct line_row){ addr + c->bias, file, line };
	return err;
}

/* The spans' edges up to addr (starts before it, ends at it too): the row in effect there. */
static int clip_to(struct span_clip *c, uint64_t addr)
{
	int err = 0;

	while (c->k < c->n && !err) {
		const struct owned_span *s = &c->v[c->k];

		if (!c->inside) {
			if (s->lo > addr)
				break;
			c->inside = true;
			if (s->lo < addr && c->file)
				err = put(c, s->lo, c->file, c->line);
		} else {
			if (s->hi > addr)
				break;
			c->inside = false;
			c->k++;
			if (c->file)
				err = put(c, s->hi, NULL, LINE_ROW_SPAN_END);
		}
	}
	return err;
}

int span_clip_row(struct span_clip *c, uint64_t addr, const char *file, int line)
{
	int err = clip_to(c, addr);

	if (!err && c->inside)
		err = put(c, addr, file, line);
	c->file = file;
	c->line = line;
	return err;
}

int span_clip_end(struct span_clip *c)
{
	if (c->inside && c->file)
		return put(c, c->v[c->k].hi, NULL, LINE_ROW_SPAN_END);
	return 0;
}
