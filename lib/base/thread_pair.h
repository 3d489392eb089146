/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_THREAD_PAIR_H
#define LIDIA_THREAD_PAIR_H

#include <pthread.h>
#include <stdbool.h>

/*
 * fn(arg, 0) on the calling thread beside fn(arg, 1) on a second one, *sync
 * made a barrier of the two for fn to wait on between its steps (the
 * shared passes of a sort); returns once both are done. false when the
 * barrier or the second thread cannot be had: fn then never ran.
 */
bool thread_pair_run(void (*fn)(void *arg, unsigned t), void *arg, pthread_barrier_t *sync);

#endif
