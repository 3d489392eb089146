/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The batch (batch.h): the state one run shares, made and let go. The run
 * itself, phase after phase, is batch_run.c's; batch_internal.h says which
 * file does each phase, and how the threads share the batch.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch_internal.h"
#include "cpus.h"
#include "memory.h"
#include "usage.h"

void batch_release(struct batch *b)
{
	for (size_t i = 0; i < b->ngroups; i++) {
		for (int s = 0; s < 2; s++)
			lidia_archive_data_free(b->groups[i].data[s], b->groups[i].size[s],
						b->groups[i].mapped[s]);
		free(b->groups[i].message);
		free(b->groups[i].warning);
		free(b->groups[i].fetched_from);
		free(b->groups[i].fetched_alt);
	}
	free(b->groups);
	dwz_pool_release(b);
	problems_release(&b->failures);
	state_release(&b->state);
	budget_destroy(&b->budget);
	pthread_mutex_destroy(&b->lock);
}

/*
 * The run's memory budget: --max-memory, else half of what the process may
 * use (the cgroup's limit or the physical memory), the rest left to the
 * page cache, the kernel and the other jobs of a CI runner. Members past
 * a share of it per job are spilled rather than held on the heap: at most
 * 64 MiB (a larger one costs a write to the page cache, not a copy the
 * heap keeps), at least 1 MiB.
 */
static void set_budget(struct batch *b)
{
	unsigned jobs = b->o->jobs ? b->o->jobs : usable_cpus();
	bool cgroup = false;
	uint64_t limit = b->o->max_memory ? b->o->max_memory : usable_memory(&cgroup) / 2;
	uint64_t spill = limit / (4 * (uint64_t)(jobs ? jobs : 1));

	budget_init(&b->budget, limit);
	b->spill_over = spill > (64ull << 20)  ? 64ull << 20
			: spill < (1ull << 20) ? 1ull << 20
					       : spill;
	if (verbosity >= 3)
		fprintf(stderr,
			"lidiagen: memory budget %llu MiB (%s), archive members over %llu MiB "
			"spilled to $TMPDIR\n",
			(unsigned long long)(limit >> 20),
			b->o->max_memory ? "--max-memory"
			: cgroup	 ? "half the cgroup's memory limit"
					 : "half the physical memory",
			(unsigned long long)(b->spill_over >> 20));
}

void batch_init(struct batch *b, const struct batch_opts *o)
{
	*b = (struct batch){
		.o = o,
		.walk = { .recursive = o->recursive,
			  .follow_symlinks = o->follow_symlinks,
			  .include = o->include,
			  .exclude = o->exclude,
			  .ninclude = o->ninclude,
			  .nexclude = o->nexclude,
			  .skip_dir = o->out_dir && strcmp(o->out_dir, "-") && !o->bucket
					      ? o->out_dir
					      : NULL },
		.tty = isatty(STDERR_FILENO),
	};
	pthread_mutex_init(&b->lock, NULL);
	state_init(&b->state);
	set_budget(b);
}
