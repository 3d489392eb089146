/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_ASIDE_H
#define LIDIA_ASIDE_H

#include <pthread.h>
#include <stdbool.h>

/*
 * A job run beside the calling thread until it is joined: work that need
 * not hold up what follows (giving back a big image's pages while the
 * extraction's last steps run). Only the kernel's work is worth it: the
 * job must not touch what the calling thread goes on with.
 */
struct aside {
	pthread_t tid;
	bool running;
};

/*
 * fn(arg) on a thread of its own when threads > 1 and no guard is given
 * (lidia_extract_opts.thread_guard: every thread is the caller's to run),
 * and one starts; otherwise on the calling thread, now. a is joined first.
 */
void aside_start(struct aside *a, unsigned threads, bool guarded, void (*fn)(void *), void *arg);

/* Wait for a's job, if one runs. */
void aside_join(struct aside *a);

#endif
