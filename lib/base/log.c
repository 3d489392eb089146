/* SPDX-License-Identifier: Apache-2.0 */
/* The log callback: the library's only way to say anything. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

/*
 * The installed pair, owned by log_lock: lidia_set_log swaps it under the
 * lock and lidia_log copies it under the lock, then calls the copy outside
 * it (a callback may log, or install another callback), so every message
 * goes to one whole pair. log_cb.fn is also read without the lock by
 * lidia_log_enabled, a hint only: every access to it is atomic.
 */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lidia_log_cb log_cb;

struct lidia_log_cb lidia_set_log(lidia_log_fn fn, void *ctx)
{
	struct lidia_log_cb old;

	pthread_mutex_lock(&log_lock);
	old.fn = __atomic_load_n(&log_cb.fn, __ATOMIC_RELAXED);
	old.ctx = log_cb.ctx;
	__atomic_store_n(&log_cb.fn, fn, __ATOMIC_RELAXED);
	log_cb.ctx = ctx;
	pthread_mutex_unlock(&log_lock);
	return old;
}

int lidia_log_enabled(void)
{
	return __atomic_load_n(&log_cb.fn, __ATOMIC_RELAXED) != NULL;
}

void lidia_log(enum lidia_log_level level, const char *fmt, ...)
{
	struct lidia_log_cb cb;
	char msg[1024];
	va_list ap;

	if (!lidia_log_enabled())
		return;
	pthread_mutex_lock(&log_lock);
	cb.fn = __atomic_load_n(&log_cb.fn, __ATOMIC_RELAXED);
	cb.ctx = log_cb.ctx;
	pthread_mutex_unlock(&log_lock);
	if (!cb.fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cb.fn(level, msg, cb.ctx);
}
