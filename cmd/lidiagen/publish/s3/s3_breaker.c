/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The run's circuit breaker (s3.h). Each request once tried on its own
 * against a dead endpoint: 189 keys cost 1,045 PUT attempts, 189 error
 * lines and five minutes. Now the clients share one count of requests in
 * a row that found no server; past S3_BREAKER_FAILS, or on one answer that
 * is not what S3 sends, the breaker opens for the rest of the run, and the
 * command says it once, with how many keys it kept back.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3.h"
#include "s3_breaker.h"

struct s3_breaker {
	pthread_mutex_t lock;
	unsigned fails; /* requests in a row that found no server */
	bool open;
	size_t not_sent; /* keys refused while open, or lost in flight as it opened */
	char why[640];	 /* what opened it: the endpoint, the request, the reason */
};

int s3_breaker_new(struct s3_breaker **out)
{
	struct s3_breaker *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	pthread_mutex_init(&b->lock, NULL);
	*out = b;
	return 0;
}

void s3_breaker_free(struct s3_breaker *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->lock);
	free(b);
}

bool s3_breaker_admit(struct s3_breaker *b, bool count_refusal)
{
	bool open;

	if (!b)
		return true;
	pthread_mutex_lock(&b->lock);
	open = b->open;
	if (open && count_refusal)
		b->not_sent++;
	pthread_mutex_unlock(&b->lock);
	return !open;
}

void s3_breaker_note(struct s3_breaker *b, bool reached, const char *endpoint, const char *why)
{
	if (!b)
		return;
	pthread_mutex_lock(&b->lock);
	if (reached) {
		b->fails = 0;
	} else if (++b->fails >= S3_BREAKER_FAILS && !b->open) {
		b->open = true;
		snprintf(b->why, sizeof(b->why),
			 "%s: %u requests in a row failed to connect or timed out (the last: %s)",
			 endpoint, b->fails, why);
	}
	pthread_mutex_unlock(&b->lock);
}

bool s3_breaker_fold(struct s3_breaker *b)
{
	bool open;

	if (!b)
		return false;
	pthread_mutex_lock(&b->lock);
	open = b->open;
	b->not_sent += open;
	pthread_mutex_unlock(&b->lock);
	return open;
}

void s3_breaker_open(struct s3_breaker *b, const char *why)
{
	if (!b)
		return;
	pthread_mutex_lock(&b->lock);
	if (!b->open) {
		b->open = true;
		snprintf(b->why, sizeof(b->why), "%s", why);
	}
	pthread_mutex_unlock(&b->lock);
}

bool s3_stopped(const struct s3_config *c, char *buf, size_t size)
{
	struct s3_breaker *b = c->breaker;
	bool open;

	if (!b)
		return false;
	pthread_mutex_lock(&b->lock);
	open = b->open;
	if (open && b->not_sent)
		snprintf(buf, size, "%s; the remaining %zu key%s not sent", b->why, b->not_sent,
			 b->not_sent == 1 ? " was" : "s were");
	else if (open)
		snprintf(buf, size, "%s; no request was sent after it", b->why);
	pthread_mutex_unlock(&b->lock);
	return open;
}
