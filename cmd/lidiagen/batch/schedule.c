/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Phase 2's order (batch_internal.h): which group is converted when. Groups
 * read from plain files (or already settled) go to the pool first; then each
 * archive one of the others reads is streamed once more, its members handed
 * to the groups that read them, and each group whose every part is then
 * loaded goes to the pool. convert.c does the converting.
 *
 * Both wait for the run's memory budget (budget.h): an archive streamed
 * reserves the heap its members will take (those past the spill threshold
 * go to the page cache, mapped: none), and those loaded stay reserved
 * until their group frees them; a conversion reserves what its images
 * hold, for the pages it reads and the tables it makes of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch_internal.h"
#include "dwz_file.h"
#include "open_regular.h"

struct convert_task {
	struct batch *b;
	struct group *g;
};

/*
 * What converting a group takes besides its members loaded: about the
 * bytes its images hold, for their pages read and what is made of them. A
 * spilled member's pages of zeros are holes, never read: they cost nothing.
 */
static uint64_t convert_estimate(const struct batch *b, const struct group *g)
{
	ssize_t idx[2] = { g->main, g->bin };
	uint64_t bytes = 0;

	for (int s = 0; s < 2; s++)
		if (idx[s] >= 0)
			bytes += g->data[s] ? g->holds[s] : b->state.parts[idx[s]].size;
	return bytes;
}

static void run_convert(void *arg)
{
	struct convert_task t = *(struct convert_task *)arg;
	uint64_t bytes = convert_estimate(t.b, t.g);

	free(arg);
	budget_start(&t.b->budget, bytes);
	convert_group(t.b, t.g);
	release_members(t.b, t.g); /* whichever way it ended */
	budget_end(&t.b->budget, bytes);
}

static void dispatch(struct batch *b, struct group *g)
{
	struct convert_task *t = malloc(sizeof(*t));

	/* Under the lock: archive streams read these flags of every group (capture_member). */
	pthread_mutex_lock(&b->lock);
	g->status = t ? ST_PENDING : ST_FAILED;
	g->dispatched = true;
	g->done = !t;
	pthread_mutex_unlock(&b->lock);
	if (!t)
		return;
	*t = (struct convert_task){ b, g };
	pool_add(&b->pool, run_convert, t);
}

/* Which archive member slot of which group a loaded member fills. */
struct capture_ctx {
	struct batch *b;
	size_t input;
	const struct position_set *wanted; /* --index: the only members to look at; NULL: all */
	size_t remaining;		   /* --index: members still wanted; at 0 the walk stops */
	bool stopped;			   /* it stopped there, before the archive's end */
	uint64_t reserved;		   /* of the budget for members, not yet given to groups */
	bool gather;	  /* its dwz files are gathered now: phase 1 did not read it */
	const char **dwz; /* --index: the paths of its dwz files, wanted too */
	size_t ndwz;
};

/* --index: whether the member at path is one of the archive's dwz files. */
static bool dwz_wanted(const struct capture_ctx *c, const char *path)
{
	for (size_t i = 0; i < c->ndwz; i++)
		if (!strcmp(c->dwz[i], path))
			return true;
	return false;
}

/*
 * A member loaded on the heap (bytes; a mapped one: 0) is the group's to
 * free now: as much of the stream's reservation goes with it, more reserved
 * when the stream had not reserved enough (the archive changed since).
 */
static void hand_reservation(struct capture_ctx *c, struct group *g, uint64_t bytes)
{
	if (bytes > c->reserved) {
		budget_add(&c->b->budget, bytes - c->reserved);
		c->reserved = bytes;
	}
	c->reserved -= bytes;
	g->reserved += bytes;
}

/*
 * A member goes to the part at its position in this input: never by its
 * name, which another member may share (a tar appended to, names cut or
 * cleaned). Two members of one name are two parts, each with its key.
 */
static int capture_member(void *ctx, const struct lidia_archive_member *m, unsigned char *data,
			  size_t size)
{
	struct capture_ctx *c = ctx;
	struct batch *b = c->b;
	char at[STATE_POSITION_MAX], id[LIDIA_KEY_MAX];

	if (state_position(at, sizeof(at), m->at, m->depth)) {
		lidia_archive_data_free(data, size, m->mapped);
		return 0;
	}
	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->ngroups; i++) {
		struct group *g = &b->groups[i];
		ssize_t idx[2] = { g->main, g->bin };

		if (g->dispatched || g->done)
			continue;
		for (int s = 0; s < 2; s++) {
			const struct state_part *p = idx[s] >= 0 ? &b->state.parts[idx[s]] : NULL;

			if (p && p->at && p->input == c->input && !g->data[s] &&
			    !strcmp(p->at, at)) {
				g->data[s] = data;
				g->size[s] = size;
				g->mapped[s] = m->mapped;
				g->holds[s] = m->holds;
				/* Under the lock: another stream may dispatch g once it is here. */
				hand_reservation(c, g, m->mapped ? 0 : size);
				pthread_mutex_unlock(&b->lock);
				/* Every member wanted is here: the rest need not be inflated. */
				c->stopped = c->wanted && --c->remaining == 0;
				return c->stopped;
			}
		}
	}
	pthread_mutex_unlock(&b->lock);
	/* Not read in phase 1: its dwz files are gathered now, before its groups run. */
	if (c->gather && dwz_file_id(m->path, data, size, id, sizeof(id))) {
		dwz_pool_add(b, m->path, data, size, id);
		c->stopped = c->wanted && dwz_wanted(c, m->path) && --c->remaining == 0;
	}
	lidia_archive_data_free(data, size, m->mapped);
	return c->stopped;
}

/* --index: a member on the way to a wanted one (its position a prefix of one), or one. */
static bool capture_want(void *ctx, const struct lidia_archive_member *m)
{
	const struct capture_ctx *c = ctx;
	char at[STATE_POSITION_MAX];

	if (!walk_wanted(&c->b->walk, m->name))
		return false;
	return !c->wanted || dwz_wanted(c, m->path) ||
	       (!state_position(at, sizeof(at), m->at, m->depth) &&
		position_set_has(c->wanted, at));
}

static bool group_uses_input(const struct batch *b, const struct group *g, size_t input)
{
	ssize_t idx[2] = { g->main, g->bin };

	for (int s = 0; s < 2; s++)
		if (idx[s] >= 0 && b->state.parts[idx[s]].member &&
		    b->state.parts[idx[s]].input == input)
			return true;
	return false;
}

/*
 * True when every archive member the group reads is loaded, and every
 * archive holding one streamed to its end: the dwz files gathered as it
 * streams (its debug files' own, in a debug package) come after them.
 */
static bool group_ready(const struct batch *b, const struct group *g)
{
	ssize_t idx[2] = { g->main, g->bin };

	for (int s = 0; s < 2; s++) {
		const struct state_part *p = idx[s] >= 0 ? &b->state.parts[idx[s]] : NULL;

		if (p && p->member && (!g->data[s] || (b->streamed && !b->streamed[p->input])))
			return false;
	}
	return true;
}

/* Whether a group must be converted at all (or its output is known to be enough). */
static bool needs_work(struct batch *b, struct group *g)
{
	if (g->done)
		return false;
	if (b->o->force || !strcmp(b->o->out_dir, "-") || output_probe(b, g))
		return true;
	/* Groups are settled in convert_group; this only spares the archive reads. */
	return !settles_unread(b, g, &g->there);
}

/*
 * One archive, streamed once: its members go to the groups that read them,
 * and each group whose every part is now here is converted. Archives stream
 * side by side (one per job), so memory holds a few archives' members, not
 * the tree's.
 */
struct archive_task {
	struct batch *b;
	size_t input;
};

/*
 * --index: the positions of the members this archive's waiting groups read,
 * so that the walk looks at no other (all of them when out of memory).
 */
static bool wanted_positions(struct batch *b, size_t input, struct position_set *ps, size_t *nparts)
{
	size_t *parts = malloc(2 * b->ngroups * sizeof(*parts) + 1), n = 0;
	bool ok;

	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; parts && i < b->ngroups; i++) {
		const struct group *g = &b->groups[i];
		ssize_t idx[2] = { g->main, g->bin };

		for (int k = 0; k < 2 && !g->dispatched && !g->done; k++)
			if (idx[k] >= 0 && b->state.parts[idx[k]].at &&
			    b->state.parts[idx[k]].input == input)
				parts[n++] = (size_t)idx[k];
	}
	ok = parts && !position_set_build(ps, &b->state, parts, n);
	pthread_mutex_unlock(&b->lock);
	*nparts = n;
	free(parts);
	if (!ok)
		position_set_release(ps);
	return ok;
}

/*
 * --index: the paths of the dwz files the index found in this archive (the
 * state's, left as they are until the run ends), for the walk to reach
 * them too; NULL when none (or out of memory: then its debug files say
 * that they miss them).
 */
static const char **dwz_paths(struct batch *b, size_t input, size_t *n)
{
	const char **v = NULL;

	*n = 0;
	pthread_mutex_lock(&b->lock);
	for (size_t k = 0; k < b->state.nskips; k++) {
		const struct state_skip *sk = &b->state.skips[k];
		const char **nv;

		if (!sk->dwz || sk->input != input || !(nv = realloc(v, (*n + 1) * sizeof(*v))))
			continue;
		v = nv;
		v[(*n)++] = sk->path;
	}
	pthread_mutex_unlock(&b->lock);
	return v;
}

/* Per archive streamed: libarchive's buffers and decoders (xz's dictionary, zstd's window). */
#define STREAM_COST (32ull << 20)

/*
 * The heap an archive's stream will hold: the members of it that waiting
 * groups read and that stay on the heap (no larger than the spill
 * threshold), and the reading itself.
 */
static uint64_t stream_estimate(struct batch *b, size_t input)
{
	uint64_t bytes = STREAM_COST;

	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->ngroups; i++) {
		const struct group *g = &b->groups[i];
		ssize_t idx[2] = { g->main, g->bin };

		for (int k = 0; k < 2 && !g->dispatched && !g->done; k++) {
			const struct state_part *p = idx[k] >= 0 ? &b->state.parts[idx[k]] : NULL;

			if (p && p->at && p->input == input && p->size <= b->spill_over)
				bytes += p->size;
		}
	}
	pthread_mutex_unlock(&b->lock);
	return bytes;
}

static void stream_archive(void *arg)
{
	struct archive_task *t = arg;
	struct batch *b = t->b;
	struct state *s = &b->state;
	struct position_set wanted = { 0 };
	struct capture_ctx c = { .b = b, .input = t->input };
	uint64_t bytes;
	off_t at;
	struct lidia_archive_opts ao = b->o->archive;
	struct group **ready;
	size_t nready = 0;
	int fd;

	if (b->o->index && wanted_positions(b, t->input, &wanted, &c.remaining)) {
		c.wanted = &wanted;
		c.dwz = dwz_paths(b, t->input, &c.ndwz);
		c.remaining += c.ndwz;
	}
	pthread_mutex_lock(&b->lock);
	c.gather = b->o->index || s->inputs[t->input].from_state;
	pthread_mutex_unlock(&b->lock);
	c.reserved = stream_estimate(b, t->input);
	budget_start(&b->budget, c.reserved);
	/* No problem callback: problems were said when the archive was first read. */
	ao.elf_member = capture_member;
	ao.want_member = capture_want;
	ao.ctx = &c;
	ao.spill_over = b->spill_over;
	fd = open_regular(s->inputs[t->input].path);
	bytes = s->inputs[t->input].size; /* streamed to its end */
	if (fd >= 0) {
		lidia_archive_walk_fd(fd, s->inputs[t->input].path, &ao, NULL);
		at = lseek(fd, 0, SEEK_CUR);
		if (c.stopped && at >= 0 && (uint64_t)at < bytes)
			bytes = (uint64_t)at; /* stopped there */
		close(fd);
	}
	position_set_release(&wanted);
	free(c.dwz);
	/* Given back before its groups run: with -j 1 they run here, inside this call. */
	budget_end(&b->budget, c.reserved);
	ready = malloc(b->ngroups * sizeof(*ready) + 1);
	pthread_mutex_lock(&b->lock);
	if (fd >= 0)
		input_opened(b, t->input, bytes);
	b->streamed[t->input] = true;
	for (size_t i = 0; ready && i < b->ngroups; i++) {
		struct group *g = &b->groups[i];

		if (!g->dispatched && !g->done && group_uses_input(b, g, t->input) &&
		    group_ready(b, g)) {
			g->dispatched = true;
			ready[nready++] = g;
		}
	}
	pthread_mutex_unlock(&b->lock);
	for (size_t i = 0; i < nready; i++)
		dispatch(b, ready[i]);
	free(ready);
	free(t);
}

int convert_all(struct batch *b)
{
	struct state *s = &b->state;
	bool *needed = calloc(s->ninputs + 1, sizeof(*needed));

	b->streamed = calloc(s->ninputs + 1, sizeof(*b->streamed));
	if (!needed || !b->streamed) {
		free(needed);
		free(b->streamed);
		b->streamed = NULL;
		return -ENOMEM;
	}
	if (b->o->bucket)
		output_survey(b);
	dwz_pool_gather_unread(b);
	/* Groups read from plain files (or already settled) go first. */
	for (size_t i = 0; i < b->ngroups; i++) {
		struct group *g = &b->groups[i];

		if (g->done)
			continue;
		if (group_ready(b, g) || !needs_work(b, g)) {
			dispatch(b, g);
			continue;
		}
		for (size_t k = 0; k < s->ninputs; k++)
			if (group_uses_input(b, g, k))
				needed[k] = true;
	}
	/* Then the archives, side by side with those conversions. */
	for (size_t k = 0; k < s->ninputs; k++) {
		struct archive_task *t;

		/* A changed input is never opened: its groups fail (convert.c). */
		if (!needed[k] || s->inputs[k].changed || !(t = malloc(sizeof(*t))))
			continue;
		*t = (struct archive_task){ b, k };
		pool_add(&b->pool, stream_archive, t);
	}
	pool_wait(&b->pool);
	/* A member not found again (the archive changed since): the group says so. */
	for (size_t i = 0; i < b->ngroups; i++)
		if (!b->groups[i].dispatched && !b->groups[i].done)
			dispatch(b, &b->groups[i]);
	pool_wait(&b->pool);
	free(needed);
	free(b->streamed);
	b->streamed = NULL;
	return 0;
}
