/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: DWARF, the first pass on every thread of the crew. The units are
 * cut into runs of about equal DIE bytes; each thread scans the runs it
 * takes (subprog_scan.c) into subprogram lists of the run's own, which are
 * then joined in unit order: the same list, in the same order, as one
 * thread scanning every unit makes.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "dwarf_crew.h"
#include "internal.h"
#include "scan_chunks.h"

#define NOT_SCANNING SIZE_MAX

struct scan_chunk {
	uint32_t first, end;
	struct subprog *subs; /* its units' subs_first/end index these */
	size_t nsubs;
	int err;
	bool done; /* set by the thread that scanned it; read after the threads are joined */
};

struct scan_run {
	struct dw *w;
	struct scan_chunk *chunks;
	size_t nchunks;
	atomic_size_t next;
	atomic_bool stop;
};

struct scan_thread {
	struct scan_run *run;
	struct scanner s;
	size_t current; /* the chunk being scanned, or NOT_SCANNING */
	pthread_t tid;
};

/* Units' DIE bytes, about: where the next unit starts (the last one: as much as the mean). */
static uint64_t unit_bytes(const struct dw *w, uint32_t u)
{
	uint64_t here = dwarf_cuoffset(&w->units[u].die);

	if (u + 1 < w->nunits)
		return dwarf_cuoffset(&w->units[u + 1].die) - here + 1;
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

/* Chunk c scanned by s; what s found becomes c's. */
static void scan_chunk(struct scanner *s, struct scan_chunk *c)
{
	c->err = scan_units(s, c->first, c->end);
	c->subs = s->subs;
	c->nsubs = s->nsubs;
	s->subs = NULL;
	s->nsubs = s->cap_subs = 0;
	c->done = true;
}

static void scan_take(void *arg)
{
	struct scan_thread *t = arg;
	struct scan_run *r = t->run;
	size_t k;

	while (!atomic_load(&r->stop) && (k = atomic_fetch_add(&r->next, 1)) < r->nchunks) {
		t->current = k;
		scan_chunk(&t->s, &r->chunks[k]);
		if (r->chunks[k].err)
			atomic_store(&r->stop, true);
		t->current = NOT_SCANNING;
	}
}

/* A thread's part through the caller's guard; cut short, nothing more is taken. */
static void *scan_thread_main(void *arg)
{
	struct scan_thread *t = arg;
	int (*guard)(void (*)(void *), void *) = t->run->w->x->guard;

	if (!guard)
		scan_take(t);
	else if (guard(scan_take, t))
		atomic_store(&t->run->stop, true);
	return NULL;
}

/*
 * The chunks joined in unit order into w->subs; a chunk no thread finished
 * (cut short, or not taken after an error) is scanned here first.
 */
static int join_scans(struct scan_run *r)
{
	struct dw *w = r->w;
	struct scanner redo = { .w = w };
	size_t total = 0, base = 0;
	int err = 0;

	for (size_t k = 0; k < r->nchunks && !err; k++) {
		struct scan_chunk *c = &r->chunks[k];

		if (!c->done) {
			free(c->subs);
			scan_chunk(&redo, c);
		}
		err = c->err;
		total += c->nsubs;
	}
	scanner_release(&redo);
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
	struct scan_thread threads[CREW_MAX];
	struct scan_run r = { .w = w };
	size_t n = 1;
	int err = plan_scan(&r, w, crew_chunks(crew, w->nunits));

	if (err)
		return err;
	atomic_init(&r.next, 0);
	atomic_init(&r.stop, false);
	for (size_t i = 0; i < crew->n; i++)
		threads[i] = (struct scan_thread){ .run = &r,
						   .s = { .w = w, .own_dw = crew->dw[i] },
						   .current = NOT_SCANNING };
	while (n < crew->n && !pthread_create(&threads[n].tid, NULL, scan_thread_main, &threads[n]))
		n++;
	/* This thread's part guarded too while the others run. */
	if (n > 1)
		scan_thread_main(&threads[0]);
	else
		scan_take(&threads[0]);
	for (size_t i = 1; i < n; i++)
		pthread_join(threads[i].tid, NULL);
	err = join_scans(&r);
	for (size_t i = 0; i < crew->n; i++)
		scanner_release(&threads[i].s);
	for (size_t k = 0; k < r.nchunks; k++)
		free(r.chunks[k].subs);
	free(r.chunks);
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
