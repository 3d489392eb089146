/* SPDX-License-Identifier: Apache-2.0 */
/* Support: one job split between the calling thread and a second, in lockstep. */
#include "thread_pair.h"

struct second {
	void (*fn)(void *arg, unsigned t);
	void *arg;
};

static void *second_thread(void *p)
{
	const struct second *s = p;

	s->fn(s->arg, 1);
	return NULL;
}

bool thread_pair_run(void (*fn)(void *arg, unsigned t), void *arg, pthread_barrier_t *sync)
{
	struct second s = { fn, arg };
	pthread_t tid;

	if (pthread_barrier_init(sync, NULL, 2))
		return false;
	if (pthread_create(&tid, NULL, second_thread, &s)) {
		pthread_barrier_destroy(sync);
		return false;
	}
	fn(arg, 0);
	pthread_join(tid, NULL);
	pthread_barrier_destroy(sync);
	return true;
}
