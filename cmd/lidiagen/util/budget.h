/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The run's one memory budget (--max-memory): the heap the batch will hold
 * for an archive streamed, the members it loaded for groups still waiting,
 * and a group's conversion, each an estimate reserved before the work
 * starts. Work waits while its estimate would take the reserved bytes past
 * the limit, unless nothing runs at all: one piece of work always may, so
 * the batch never deadlocks on an estimate larger than the budget.
 */
#ifndef LIDIAGEN_BUDGET_H
#define LIDIAGEN_BUDGET_H

#include <pthread.h>
#include <stdint.h>

struct budget {
	pthread_mutex_t lock; /* its own: may be taken inside b->lock, never the reverse */
	pthread_cond_t freed;
	uint64_t limit; /* bytes */
	uint64_t used;	/* reserved */
	unsigned running;
	uint64_t peak; /* the most ever reserved, for -vv */
};

void budget_init(struct budget *bg, uint64_t limit);
void budget_destroy(struct budget *bg);

/*
 * Wait until bytes fit (or nothing runs), then reserve them for work that
 * now runs. Never with b->lock held: the work that would free bytes needs it.
 */
void budget_start(struct budget *bg, uint64_t bytes);

/* The work started ends, giving back bytes (what it leaves loaded stays reserved). */
void budget_end(struct budget *bg, uint64_t bytes);

/* Reserve bytes more, without waiting, for work already running (a member bigger than thought). */
void budget_add(struct budget *bg, uint64_t bytes);

/* Give back bytes that no running work held (a loaded member, freed). */
void budget_release(struct budget *bg, uint64_t bytes);

#endif
