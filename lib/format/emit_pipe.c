/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Write: the tables through the writer's sink with the encoding on a second
 * thread. A big file's tables are encoded (a third of writing it) and then
 * written (the copy into the page cache, the rest) one chunk after the
 * other on one thread; with a second one, a chunk is encoded while the one
 * before it is written. The sink is still called on the calling thread, in
 * order, with the same bytes. The strings table goes as it is, no copy.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "internal.h"
#include "tables.h"

#define SLOT (1u << 20) /* bytes of a chunk */
#define NSLOTS 3	/* chunks encoded ahead of the writing, at most */
#define PIPE_MIN (4u << 20)

struct slot {
	unsigned char *buf; /* SLOT bytes, encoded into */
	const void *data;   /* what goes to the sink: buf, or the strings' own bytes */
	size_t len;
};

struct pipe {
	const struct tables *t;
	struct slot slots[NSLOTS];
	size_t encoded, written; /* chunks so far, slot i % NSLOTS the next of each */
	bool done, stop;	 /* the encoder is done; the writer failed */
	pthread_mutex_t lock;
	pthread_cond_t changed;
};

/* The slot to encode into next, once the writer has freed it; NULL: stop. */
static struct slot *free_slot(struct pipe *p)
{
	struct slot *s;

	pthread_mutex_lock(&p->lock);
	while (!p->stop && p->encoded - p->written == NSLOTS)
		pthread_cond_wait(&p->changed, &p->lock);
	s = p->stop ? NULL : &p->slots[p->encoded % NSLOTS];
	pthread_mutex_unlock(&p->lock);
	return s;
}

static void advance(struct pipe *p, size_t *count, bool stop)
{
	pthread_mutex_lock(&p->lock);
	++*count;
	p->stop |= stop;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
}

/* Table k in chunks of whole entries (the strings: of SLOT bytes); false: stopped. */
static bool encode_table(struct pipe *p, int k)
{
	const struct tables *t = p->t;
	size_t n = tables_entries(t, k), size = tables_entry_size(t, k), per = SLOT / size;

	for (size_t lo = 0; lo < n; lo += per) {
		size_t hi = n - lo < per ? n : lo + per;
		struct slot *s = free_slot(p);

		if (!s)
			return false;
		if (k == TABLE_STRINGS) {
			s->data = t->strings + lo;
		} else {
			tables_encode_entries(t, k, lo, hi, s->buf);
			s->data = s->buf;
		}
		s->len = (hi - lo) * size;
		advance(p, &p->encoded, false);
	}
	return true;
}

static void *encoder(void *arg)
{
	struct pipe *p = arg;

	for (int k = 0; k < NTABLES && encode_table(p, k); k++)
		;
	pthread_mutex_lock(&p->lock);
	p->done = true;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* The chunks to the sink as they are encoded, in order; the first error stops both. */
static int write_chunks(struct pipe *p, emit_fn emit, void *ctx)
{
	for (;;) {
		struct slot *s;
		int err;

		pthread_mutex_lock(&p->lock);
		while (p->written == p->encoded && !p->done)
			pthread_cond_wait(&p->changed, &p->lock);
		s = p->written < p->encoded ? &p->slots[p->written % NSLOTS] : NULL;
		pthread_mutex_unlock(&p->lock);
		if (!s)
			return 0; /* all written */
		err = emit(ctx, s->data, s->len);
		advance(p, &p->written, err != 0);
		if (err)
			return err;
	}
}

static bool big_enough(const struct tables *t)
{
	uint64_t size[NTABLES];

	tables_sizes(t, size);
	return size[TABLE_VA] + size[TABLE_RANGES] + size[TABLE_STRINGS] + size[TABLE_LINES] >=
	       PIPE_MIN;
}

int tables_emit_pipe(const struct tables *t, unsigned threads, emit_fn emit, void *ctx)
{
	struct pipe p = { .t = t };
	unsigned char *bufs;
	pthread_t tid;
	int err;

	if (threads < 2 || !big_enough(t) || !(bufs = malloc((size_t)NSLOTS * SLOT)))
		return tables_emit(t, emit, ctx);
	for (int i = 0; i < NSLOTS; i++)
		p.slots[i].buf = bufs + (size_t)i * SLOT;
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.changed, NULL);
	if (pthread_create(&tid, NULL, encoder, &p)) {
		err = tables_emit(t, emit, ctx);
	} else {
		err = write_chunks(&p, emit, ctx);
		pthread_join(tid, NULL);
	}
	pthread_cond_destroy(&p.changed);
	pthread_mutex_destroy(&p.lock);
	free(bufs);
	return err;
}
