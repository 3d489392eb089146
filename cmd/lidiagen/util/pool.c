/* SPDX-License-Identifier: Apache-2.0 */
/* The worker threads of -j: one queue, tasks run in any order (outputs do not depend on it). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

static void *worker(void *arg)
{
	struct pool *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct pool_task t;

		while (!p->len && !p->stopping)
			pthread_cond_wait(&p->more, &p->lock);
		if (!p->len && p->stopping)
			break;
		t = p->queue[p->head];
		p->head = (p->head + 1) % p->cap;
		p->len--;
		p->busy++;
		pthread_mutex_unlock(&p->lock);
		t.fn(t.arg);
		pthread_mutex_lock(&p->lock);
		p->busy--;
		if (!p->len && !p->busy)
			pthread_cond_broadcast(&p->idle);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int pool_start(struct pool *p, unsigned n)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->more, NULL);
	pthread_cond_init(&p->idle, NULL);
	if (n <= 1)
		return 0; /* one job: tasks run inline, in order */
	p->threads = calloc(n, sizeof(*p->threads));
	if (!p->threads)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		if (pthread_create(&p->threads[i], NULL, worker, p))
			break;
		p->nthreads++;
	}
	return 0;
}

int pool_add(struct pool *p, void (*fn)(void *), void *arg)
{
	if (!p->nthreads) {
		fn(arg);
		return 0;
	}
	pthread_mutex_lock(&p->lock);
	if (p->len == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct pool_task *q = malloc(cap * sizeof(*q));

		if (!q) {
			pthread_mutex_unlock(&p->lock);
			fn(arg); /* no room to queue: run it here */
			return 0;
		}
		for (size_t i = 0; i < p->len; i++)
			q[i] = p->queue[(p->head + i) % p->cap];
		free(p->queue);
		p->queue = q;
		p->head = 0;
		p->cap = cap;
	}
	p->queue[(p->head + p->len) % p->cap] = (struct pool_task){ fn, arg };
	p->len++;
	pthread_cond_signal(&p->more);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

void pool_wait(struct pool *p)
{
	if (!p->nthreads)
		return;
	pthread_mutex_lock(&p->lock);
	while (p->len || p->busy)
		pthread_cond_wait(&p->idle, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

void pool_stop(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->stopping = 1;
	pthread_cond_broadcast(&p->more);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	free(p->threads);
	free(p->queue);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->more);
	pthread_cond_destroy(&p->idle);
}
