/* SPDX-License-Identifier: Apache-2.0 */
/* A fixed set of worker threads taking tasks from one queue. */
#ifndef LIDIAGEN_POOL_H
#define LIDIAGEN_POOL_H

#include <pthread.h>
#include <stddef.h>

struct pool_task {
	void (*fn)(void *arg);
	void *arg;
};

struct pool {
	pthread_t *threads;
	unsigned nthreads;
	pthread_mutex_t lock;
	pthread_cond_t more, idle;
	struct pool_task *queue;
	size_t head, len, cap;
	unsigned busy;
	int stopping;
};

/* Start n workers (n 0: run every task in pool_add's caller). */
int pool_start(struct pool *p, unsigned n);

/* Queue fn(arg); runs it at once when the pool has no threads. */
int pool_add(struct pool *p, void (*fn)(void *), void *arg);

/* Wait until every queued task has run. */
void pool_wait(struct pool *p);

void pool_stop(struct pool *p);

#endif
