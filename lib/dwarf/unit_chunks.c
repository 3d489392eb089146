/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: DWARF, the second pass on every thread an extraction may use, so
 * that one big debug file is not one core's work.
 *
 * The units are cut into chunks of about equal work, never between
 * two units that read one line program's rows (line_groups.c decodes it once
 * for them). Threads take the chunks in unit order, and each walks its chunk
 * (unit_walk.c) through a Dwarf of its own (libdw keeps its caches in the
 * Dwarf that reads, unlocked), into a builder, orphan rows and covered
 * intervals of the chunk's own. The calling thread walks chunks too, and
 * joins the walked ones to the extraction in unit order (builder_append):
 * the builder gets the same ranges, and the same strings in the same order,
 * as one thread walking every unit gives it, so the output has the same
 * bytes for any number of threads.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "builder.h"
#include "dwarf_crew.h"
#include "internal.h"
#include "line_groups.h"
#include "name_blocks.h"
#include "unit_chunks.h"

#define NOT_WALKING SIZE_MAX

/* Chunks a Dwarf of a run reads, in the second pass: see walk_run(). */
#define RUN_CHUNKS 2

enum chunk_state { CHUNK_TODO, CHUNK_DONE, CHUNK_CUT };

struct chunk {
	uint32_t first, end; /* its units */
	int state;	     /* enum chunk_state, under the run's lock */
	int err;
	struct extract_ctx out; /* what it added: b, covered, orphans, st (its own dm too) */
	size_t bad_file_index;
};

struct run;

/* A thread's walker. */
struct worker {
	struct run *run;
	unsigned slot; /* its thread's, as crew_run_begin() takes it */
	size_t in_run; /* chunks walked through its Dwarf of the run (w.own_dw) */
	struct dw w;
	pthread_t tid;
	size_t current; /* the chunk being walked, or NOT_WALKING */
	bool took;	/* the calling thread's last try took a chunk */
};

struct run {
	struct dw *main;
	struct crew *crew;
	struct chunk *chunks;
	size_t nchunks;
	atomic_size_t next; /* the next chunk to take */
	atomic_bool stop;   /* an error or a cut: no chunk is taken any more */
	pthread_mutex_t lock;
	pthread_cond_t changed; /* a chunk was walked or cut short */
	struct worker *workers; /* [0] is the calling thread's */
	size_t nworkers;
};

/* ---- Chunks ---------------------------------------------------------------------- */

/* What walking unit u costs, roughly: its subprogram ranges. */
static uint64_t unit_work(const struct dw *w, uint32_t u)
{
	return walks_unit(w, u) ? w->units[u].subs_end - w->units[u].subs_first + 1 : 0;
}

/*
 * open[u]: how many groups have units the second pass reads on both sides of
 * the gap after unit u, counted as a difference array (+1 at a group's first
 * such unit, -1 at its last).
 */
static int32_t *group_gaps(const struct dw *w)
{
	int32_t *open = calloc(w->nunits + 1, sizeof(*open));

	for (size_t g = 0; open && g < w->ngroups; g++) {
		uint32_t lo = UINT32_MAX, hi = 0;

		for (size_t k = w->groups[g].first; k < w->groups[g].end; k++) {
			uint32_t u = w->members[k].unit;

			if (walks_unit(w, u)) {
				lo = u < lo ? u : lo;
				hi = u > hi ? u : hi;
			}
		}
		if (lo < hi) {
			open[lo]++;
			open[hi]--;
		}
	}
	return open;
}

/* r's chunks: runs of about equal work, cut only where no group spans the gap. */
static int plan_chunks(struct run *r, const struct dw *w, size_t chunks)
{
	int32_t *open = group_gaps(w);
	uint64_t total = 0, target, work = 0;
	int64_t depth = 0;
	uint32_t first = 0;

	r->chunks = calloc(chunks + 1, sizeof(*r->chunks));
	if (!open || !r->chunks) {
		free(open);
		return -ENOMEM;
	}
	for (uint32_t u = 0; u < w->nunits; u++)
		total += unit_work(w, u);
	target = total / chunks + 1;
	for (uint32_t u = 0; u < w->nunits; u++) {
		depth += open[u];
		work += unit_work(w, u);
		if ((work >= target && !depth && r->nchunks + 1 < chunks) || u + 1 == w->nunits) {
			r->chunks[r->nchunks++] = (struct chunk){ .first = first, .end = u + 1 };
			first = u + 1;
			work = 0;
		}
	}
	free(open);
	return 0;
}

static void chunk_release(struct chunk *c)
{
	lidia_builder_free(c->out.b);
	free(c->out.covered.v);
	free(c->out.orphans.v);
	name_blocks_reset(&c->out.orphans.names, true);
	demangler_release(&c->out.dm);
	memset(&c->out, 0, sizeof(c->out));
}

/*
 * Units [first, end) walked by w; in runs, through a Dwarf of w's own, begun
 * again every RUN_CHUNKS chunks (*in_run counts them). A new Dwarf reads
 * every unit's header before its first again, and its units' abbreviations
 * afresh: on libc's 2,063 units, a Dwarf per chunk was 16% more work than
 * one for the whole pass, one per two chunks 12%, and either kept the peak
 * at 18.5 MiB against 20.5 (one per four: 19 MiB, 10%).
 */
static int walk_run(struct dw *w, struct crew *crew, unsigned slot, size_t *in_run, uint32_t first,
		    uint32_t end)
{
	if (crew->runs && (!w->own_dw || *in_run >= RUN_CHUNKS)) {
		if (w->own_dw)
			crew_run_end(crew, w->own_dw);
		*in_run = 0;
		if (!(w->own_dw = crew_run_begin(crew, slot)))
			return -ENOMEM;
	}
	++*in_run;
	return walk_units(w, first, end);
}

/* The end of w's run, if it is in one. */
static void end_run(struct dw *w, struct crew *crew)
{
	if (!crew->runs || !w->own_dw)
		return;
	crew_run_end(crew, w->own_dw);
	w->own_dw = NULL;
}

/* Chunk c walked by wk, into c's own builder and lists. */
static int walk_chunk(struct worker *wk, struct chunk *c)
{
	const struct extract_ctx *x = wk->run->main->x;
	struct dw *w = &wk->w;
	int err;

	c->out = (struct extract_ctx){
		.inlines = x->inlines,
		.lines = x->lines,
		.files = x->files,
		.syms = x->syms, /* read only */
		.bias = x->bias,
		.dm = { .enabled = x->dm.enabled },
	};
	if ((err = lidia_builder_new(&c->out.b)))
		return err;
	w->x = &c->out;
	w->fr.b = c->out.b;
	w->fr.inline_ranges = w->fr.line_rows = 0;
	w->bad_file_index = 0;
	err = walk_run(w, wk->run->crew, wk->slot, &wk->in_run, c->first, c->end);
	c->out.st.inline_ranges = w->fr.inline_ranges;
	c->out.st.line_rows = w->fr.line_rows;
	c->bad_file_index = w->bad_file_index;
	return err;
}

/* What chunk c added, after what the chunks before it added, to the extraction. */
static int join_chunk(struct dw *w, struct chunk *c)
{
	struct extract_ctx *x = w->x, *o = &c->out;
	int err = c->err;

	if (!err)
		err = builder_append(x->b, o->b);
	/* Empty lists have no arrays: nothing to copy from NULL. */
	if (!err && o->orphans.n &&
	    !(err = LIDIA_GROW(x->orphans.v, x->orphans.n + o->orphans.n, x->orphans.cap))) {
		memcpy(x->orphans.v + x->orphans.n, o->orphans.v,
		       o->orphans.n * sizeof(*o->orphans.v));
		x->orphans.n += o->orphans.n;
		name_blocks_move(&x->orphans.names, &o->orphans.names);
	}
	if (!err && o->covered.n &&
	    !(err = LIDIA_GROW(x->covered.v, x->covered.n + o->covered.n, x->covered.cap))) {
		memcpy(x->covered.v + x->covered.n, o->covered.v,
		       o->covered.n * sizeof(*o->covered.v));
		x->covered.n += o->covered.n;
	}
	x->st.functions += o->st.functions;
	x->st.dwarf_functions += o->st.dwarf_functions;
	x->st.inline_ranges += o->st.inline_ranges;
	x->st.line_rows += o->st.line_rows;
	w->bad_file_index += c->bad_file_index;
	chunk_release(c);
	return err;
}

/* ---- Threads --------------------------------------------------------------------- */

static void set_state(struct run *r, struct chunk *c, int state)
{
	pthread_mutex_lock(&r->lock);
	c->state = state;
	pthread_cond_broadcast(&r->changed);
	pthread_mutex_unlock(&r->lock);
}

/* Take the next chunk and walk it; false when none is left or the run stopped. */
static bool walk_next(struct worker *wk)
{
	struct run *r = wk->run;
	size_t k;

	if (atomic_load(&r->stop) || (k = atomic_fetch_add(&r->next, 1)) >= r->nchunks)
		return false;
	wk->current = k;
	r->chunks[k].err = walk_chunk(wk, &r->chunks[k]);
	if (r->chunks[k].err)
		atomic_store(&r->stop, true);
	wk->current = NOT_WALKING;
	set_state(r, &r->chunks[k], CHUNK_DONE);
	return true;
}

static void walk_all(void *arg)
{
	while (walk_next(arg))
		;
}

static void walk_one(void *arg)
{
	struct worker *wk = arg;

	wk->took = walk_next(wk);
}

/*
 * fn(wk) through the caller's guard, when it has one. Cut short (a fault in
 * a mapped input): the chunk wk was walking is marked so, to be walked
 * again once the threads are done, and nothing more is taken.
 */
static bool guarded(struct worker *wk, void (*fn)(void *))
{
	struct run *r = wk->run;
	int (*guard)(void (*)(void *), void *) = r->main->x->guard;

	if (!guard) {
		fn(wk);
		return true;
	}
	if (!guard(fn, wk))
		return true;
	atomic_store(&r->stop, true);
	if (wk->current != NOT_WALKING)
		set_state(r, &r->chunks[wk->current], CHUNK_CUT);
	return false;
}

static void *worker_main(void *arg)
{
	guarded(arg, walk_all);
	return NULL;
}

/*
 * A walker whose own fields start empty, on the thread of slot, reading
 * through dw (NULL: the first pass's Dwarf, or with runs each run's).
 */
static void worker_init(struct worker *wk, struct run *r, unsigned slot, Dwarf *dw)
{
	const struct extract_ctx *x = r->main->x;

	memset(wk, 0, sizeof(*wk));
	memcpy(&wk->w, r->main, sizeof(wk->w));
	memset(walker_fields(&wk->w), 0, walker_fields_size);
	wk->slot = slot;
	wk->w.own_dw = dw;
	frames_init(&wk->w.fr, NULL, x->lines, x->files);
	wk->w.fr.bias = x->bias;
	wk->run = r;
	wk->current = NOT_WALKING;
}

static void worker_release(struct worker *wk)
{
	end_run(&wk->w, wk->run->crew);
	walk_release(&wk->w);
	lines_release_spares(&wk->w);
}

static void start_workers(struct run *r, const struct crew *crew)
{
	worker_init(&r->workers[0], r, 0, NULL);
	r->nworkers = 1;
	while (r->nworkers < crew->n && r->nworkers < r->nchunks) {
		struct worker *wk = &r->workers[r->nworkers];

		worker_init(wk, r, (unsigned)r->nworkers, crew->dw[r->nworkers]);
		if (pthread_create(&wk->tid, NULL, worker_main, wk)) {
			worker_release(wk);
			break;
		}
		r->nworkers++;
	}
}

/*
 * The calling thread's part while the others run: join the walked chunks in
 * order, walk one when the next to join is still being walked. Returns the
 * number of chunks joined; stops at an error (in *err), or when the run
 * stopped and the next chunk was not walked.
 */
static size_t join_in_order(struct run *r, int *err)
{
	struct worker *me = &r->workers[0];
	size_t joined = 0;

	while (joined < r->nchunks && !*err) {
		struct chunk *c = &r->chunks[joined];
		int state;

		pthread_mutex_lock(&r->lock);
		state = c->state;
		pthread_mutex_unlock(&r->lock);
		if (state == CHUNK_DONE) {
			*err = join_chunk(r->main, c);
			joined++;
			continue;
		}
		if (state == CHUNK_CUT || !guarded(me, walk_one))
			break;
		if (me->took)
			continue;
		if (atomic_load(&r->stop) && joined >= atomic_load(&r->next))
			break; /* not taken, and never will be */
		/* Every chunk is taken: the one to join next is being walked. */
		pthread_mutex_lock(&r->lock);
		while (c->state == CHUNK_TODO && !(atomic_load(&r->stop) && joined >= r->next))
			pthread_cond_wait(&r->changed, &r->lock);
		pthread_mutex_unlock(&r->lock);
	}
	return joined;
}

/*
 * The threads done: the chunks from joined on, in order, walked again where
 * a fault cut them short or none took them, on this thread alone, by a
 * walker of its own (the one cut short may be half way through anything).
 */
static int finish_alone(struct run *r, size_t joined, int err)
{
	struct worker redo;

	worker_init(&redo, r, 0, NULL);
	for (; joined < r->nchunks && !err; joined++) {
		struct chunk *c = &r->chunks[joined];

		if (c->state != CHUNK_DONE) {
			chunk_release(c);
			groups_rewind(r->main, c->first, c->end);
			c->err = walk_chunk(&redo, c);
		}
		err = join_chunk(r->main, c);
	}
	worker_release(&redo);
	return err;
}

static int walk_threads(struct dw *w, struct crew *crew)
{
	struct worker workers[CREW_MAX];
	struct run r = { .main = w, .crew = crew, .workers = workers };
	size_t joined;
	int err = plan_chunks(&r, w, crew_chunks(crew, w->nunits));

	if (err)
		return err;
	atomic_init(&r.next, 0);
	atomic_init(&r.stop, false);
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.changed, NULL);
	start_workers(&r, crew);
	w->threads_used = r.nworkers;
	w->chunks = r.nchunks;
	joined = join_in_order(&r, &err);
	atomic_store(&r.stop, true);
	for (size_t i = 1; i < r.nworkers; i++)
		pthread_join(workers[i].tid, NULL);
	err = finish_alone(&r, joined, err);
	for (size_t i = 0; i < r.nworkers; i++)
		worker_release(&workers[i]);
	for (size_t i = 0; i < r.nchunks; i++)
		chunk_release(&r.chunks[i]);
	free(r.chunks);
	pthread_cond_destroy(&r.changed);
	pthread_mutex_destroy(&r.lock);
	return err;
}

/* One thread, in runs: each chunk straight into w's builder. */
static int walk_runs_alone(struct dw *w, struct crew *crew)
{
	struct run r = { .main = w, .crew = crew };
	size_t in_run = 0;
	int err = plan_chunks(&r, w, crew_chunks(crew, w->nunits));

	for (size_t k = 0; k < r.nchunks && !err; k++)
		err = walk_run(w, crew, 0, &in_run, r.chunks[k].first, r.chunks[k].end);
	end_run(w, crew);
	free(r.chunks);
	return err;
}

int walk_all_units(struct dw *w, struct crew *crew)
{
	if (crew->n > 1)
		return walk_threads(w, crew);
	return crew->runs ? walk_runs_alone(w, crew) : walk_units(w, 0, w->nunits);
}
