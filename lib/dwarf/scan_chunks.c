/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: DWARF, the first pass on every thread of the crew. The units are
 * cut into runs of about equal DIE bytes; each thread scans the runs it
 * takes (subprog_scan.c) into subprogram lists of the run's own, which are
 * then joined in unit order: the same list, in the same order, as one
 * thread scanning every unit makes.
 */
#include "dwarf_crew.h"
#include "internal.h"
#include "run_items.h"
#include "scan_chunks.h"

struct scan_chunk {
	uint32_t first, end;
	struct subprog *subs; /* its units' subs_first/end index these */
	size_t nsubs;
	int err;
};

struct scan_run {
	struct dw *w;
	struct scan_chunk *chunks;
	size_t nchunks;
	/* Each run_items() slot's: a crew thread's Dwarf, the last slot w->dw. */
	struct scanner scanners[RUN_ITEMS_MAX + 1];
};

/* Units' DIE bytes, about: where the next unit starts (the last one: as much as the mean). */
static uint64_t unit_bytes(const struct dw *w, uint32_t u)
{
	uint64_t here = w->units[u].unit_off;

	if (u + 1 < w->nunits && w->units[u + 1].unit_off > here)
		return w->units[u + 1].unit_off - here + 1;
	return here / w->nunits + 1;
}

static int plan_scan(struct scan_run *r, const struct dw *w, size_t chunks)
{
	uint64_t total = 0, target, bytes = 0;
	uint32_t first = 0;

	if (!(r->chunks = calloc(chunks + 1, sizeof(*r->chunks))))
		return -ENOMEM;
	for (uint32_t u = 0; u < w->nunits; u++)
		total += unit_bytes(w, u);
	target = total / chunks + 1;
	for (uint32_t u = 0; u < w->nunits; u++) {
		bytes += unit_bytes(w, u);
		if ((bytes >= target && r->nchunks + 1 < chunks) || u + 1 == w->nunits) {
			r->chunks[r->nchunks++] =
				(struct scan_chunk){ .first = first, .end = u + 1 };
			first = u + 1;
			bytes = 0;
		}
	}
	return 0;
}

/* Chunk k scanned by the slot's scanner; what it found becomes the chunk's. */
static void scan_chunk(void *ctx, unsigned slot, size_t k)
{
	struct scan_run *r = ctx;
	struct scanner *s = &r->scanners[slot];
	struct scan_chunk *c = &r->chunks[k];

	free(c->subs); /* what a scan cut short left */
	c->err = scan_units(s, c->first, c->end);
	c->subs = s->subs;
	c->nsubs = s->nsubs;
	s->subs = NULL;
	s->nsubs = s->cap_subs = 0;
}

/* The chunks joined in unit order into w->subs. */
static int join_scans(struct scan_run *r)
{
	struct dw *w = r->w;
	size_t total = 0, base = 0;
	int err = 0;

	for (size_t k = 0; k < r->nchunks && !err; k++) {
		err = r->chunks[k].err;
		total += r->chunks[k].nsubs;
	}
	if (!err && !(w->subs = malloc(total * sizeof(*w->subs) + 1)))
		err = -ENOMEM;
	for (size_t k = 0; k < r->nchunks && !err; k++) {
		struct scan_chunk *c = &r->chunks[k];

		if (c->nsubs) /* none: no array */
			memcpy(w->subs + base, c->subs, c->nsubs * sizeof(*c->subs));
		for (uint32_t u = c->first; u < c->end; u++) {
			w->units[u].subs_first += base;
			w->units[u].subs_end += base;
		}
		base += c->nsubs;
	}
	w->nsubs = w->cap_subs = err ? 0 : total;
	return err;
}

static int scan_threads(struct dw *w, const struct crew *crew)
{
	struct scan_run *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->w = w;
	for (size_t i = 0; i <= RUN_ITEMS_MAX; i++)
		r->scanners[i] =
			(struct scanner){ .w = w, .own_dw = i < crew->n ? crew->dw[i] : NULL };
	if (!(err = plan_scan(r, w, crew_chunks(crew, w->nunits))) &&
	    !(err = run_items(r->nchunks, (unsigned)crew->n, w->x->guard, scan_chunk, r)))
		err = join_scans(r);
	for (size_t i = 0; i <= RUN_ITEMS_MAX; i++)
		scanner_release(&r->scanners[i]);
	for (size_t k = 0; k < r->nchunks; k++)
		free(r->chunks[k].subs);
	free(r->chunks);
	free(r);
	return err;
}

int scan_all_units(struct dw *w, const struct crew *crew)
{
	struct scanner s = { .w = w };
	int err;

	if (crew->n > 1)
		return scan_threads(w, crew);
	err = scan_units(&s, 0, w->nunits);
	w->subs = s.subs;
	w->nsubs = s.nsubs;
	w->cap_subs = s.cap_subs;
	s.subs = NULL;
	scanner_release(&s);
	return err;
}
