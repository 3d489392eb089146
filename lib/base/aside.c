/* SPDX-License-Identifier: Apache-2.0 */
/* Base: a job beside the calling thread; see the header. */
#include <stdlib.h>

#include "aside.h"

struct job {
	void (*fn)(void *);
	void *arg;
};

static void *run(void *arg)
{
	struct job j = *(struct job *)arg;

	free(arg);
	j.fn(j.arg);
	return NULL;
}

void aside_start(struct aside *a, unsigned threads, bool guarded, void (*fn)(void *), void *arg)
{
	struct job *j = NULL;

	aside_join(a);
	if (threads > 1 && !guarded && (j = malloc(sizeof(*j)))) {
		*j = (struct job){ fn, arg };
		if (!pthread_create(&a->tid, NULL, run, j)) {
			a->running = true;
			return;
		}
		free(j);
	}
	fn(arg);
}

void aside_join(struct aside *a)
{
	if (a->running)
		pthread_join(a->tid, NULL);
	a->running = false;
}
