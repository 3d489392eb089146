/* SPDX-License-Identifier: Apache-2.0 */
/* The run's memory budget (budget.h). */
#include "budget.h"

void budget_init(struct budget *bg, uint64_t limit)
{
	*bg = (struct budget){ .limit = limit };
	pthread_mutex_init(&bg->lock, NULL);
	pthread_cond_init(&bg->freed, NULL);
}

void budget_destroy(struct budget *bg)
{
	pthread_mutex_destroy(&bg->lock);
	pthread_cond_destroy(&bg->freed);
}

static void reserve(struct budget *bg, uint64_t bytes)
{
	bg->used += bytes;
	if (bg->used > bg->peak)
		bg->peak = bg->used;
}

void budget_start(struct budget *bg, uint64_t bytes)
{
	pthread_mutex_lock(&bg->lock);
	while (bg->running && (bg->used > bg->limit || bytes > bg->limit - bg->used))
		pthread_cond_wait(&bg->freed, &bg->lock);
	reserve(bg, bytes);
	bg->running++;
	pthread_mutex_unlock(&bg->lock);
}

static void give_back(struct budget *bg, uint64_t bytes)
{
	bg->used = bytes < bg->used ? bg->used - bytes : 0;
	pthread_cond_broadcast(&bg->freed);
}

void budget_end(struct budget *bg, uint64_t bytes)
{
	pthread_mutex_lock(&bg->lock);
	bg->running--;
	give_back(bg, bytes);
	pthread_mutex_unlock(&bg->lock);
}

void budget_add(struct budget *bg, uint64_t bytes)
{
	pthread_mutex_lock(&bg->lock);
	reserve(bg, bytes);
	pthread_mutex_unlock(&bg->lock);
}

void budget_release(struct budget *bg, uint64_t bytes)
{
	pthread_mutex_lock(&bg->lock);
	give_back(bg, bytes);
	pthread_mutex_unlock(&bg->lock);
}
