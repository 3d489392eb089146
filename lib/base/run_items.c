/* SPDX-License-Identifier: Apache-2.0 */
/* Base: items run on threads, the way an extraction uses them; see the header. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "internal.h"
#include "run_items.h"

struct items {
	size_t n;
	atomic_size_t next;
	void (*run)(void *ctx, unsigned slot, size_t k);
	void *ctx;
	bool *done; /* run to its end; read once the threads are joined */
	int (*guard)(void (*fn)(void *), void *);
};

struct taker {
	struct items *it;
	unsigned slot;
	pthread_t tid;
};

/* A thread's share: the next item not yet taken, until none is left. */
static void take(void *arg)
{
	struct taker *t = arg;
	struct items *it = t->it;
	size_t k;

	while ((k = atomic_fetch_add(&it->next, 1)) < it->n) {
		it->run(it->ctx, t->slot, k);
		it->done[k] = true;
	}
}

static void *take_guarded(void *arg)
{
	struct taker *t = arg;

	if (t->it->guard)
		t->it->guard(take, t);
	else
		take(t);
	return NULL;
}

int run_items(size_t n, unsigned threads, int (*guard)(void (*fn)(void *), void *),
	      void (*run)(void *ctx, unsigned slot, size_t k), void *ctx)
{
	struct items it = { .n = n, .run = run, .ctx = ctx, .guard = guard };
	struct taker takers[RUN_ITEMS_MAX];
	unsigned started = 1;

	if (!(it.done = calloc(n + 1, sizeof(*it.done))))
		return -ENOMEM;
	atomic_init(&it.next, 0);
	for (unsigned i = 0; i < RUN_ITEMS_MAX; i++)
		takers[i] = (struct taker){ .it = &it, .slot = i };
	while (started < threads && started < n && started < RUN_ITEMS_MAX &&
	       !pthread_create(&takers[started].tid, NULL, take_guarded, &takers[started]))
		started++;
	/* The calling thread's share guarded too while others run: none may outlive this frame. */
	if (started > 1)
		take_guarded(&takers[0]);
	else
		take(&takers[0]);
	for (unsigned i = 1; i < started; i++)
		pthread_join(takers[i].tid, NULL);
	for (size_t k = 0; k < n; k++)
		if (!it.done[k])
			run(ctx, RUN_ITEMS_MAX, k);
	free(it.done);
	return 0;
}
