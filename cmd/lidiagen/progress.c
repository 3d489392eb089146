/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the batch prints (batch_internal.h): the progress line on a
 * terminal, problems with inputs, each group's line in group order, and the
 * summary. All of it under b->lock, so lines never interleave.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_internal.h"
#include "usage.h"

void progress(struct batch *b, bool force)
{
	struct timespec now;

	if (!b->tty || verbosity < 1)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!force &&
	    now.tv_sec * 1000 + now.tv_nsec / 1000000 <
		    b->last_progress.tv_sec * 1000 + b->last_progress.tv_nsec / 1000000 + 100)
		return;
	b->last_progress = now;
	fprintf(stderr,
		"\rlidiagen: %zu files, %zu ELF, %zu converted, %zu kept, %zu skipped, %zu failed, "
		"%.1f MiB\033[K",
		b->files, b->elves, b->converted, b->kept, b->no_key, b->failed + b->failed_inputs,
		(double)b->bytes / (1 << 20));
}

void end_progress(struct batch *b)
{
	if (b->tty && verbosity >= 1)
		fprintf(stderr, "\r\033[K");
}

void input_problem(void *ctx, const char *path, const char *msg)
{
	struct batch *b = ctx;

	pthread_mutex_lock(&b->lock);
	end_progress(b);
	error(path, "%s", msg);
	b->failed_inputs++;
	pthread_mutex_unlock(&b->lock);
}

void group_message(struct group *g, bool is_error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&g->message, fmt, ap) < 0)
		g->message = NULL;
	va_end(ap);
	g->message_is_error = is_error;
}

void print_done(struct batch *b)
{
	while (b->next_print < b->ngroups && b->groups[b->next_print].done) {
		struct group *g = &b->groups[b->next_print++];

		if (g->message) {
			end_progress(b);
			if (g->message_is_error)
				fprintf(stderr, "lidiagen: %s\n", g->message);
			else if (verbosity >= 1)
				printf("%s\n", g->message);
			free(g->message);
			g->message = NULL;
		}
	}
	fflush(stdout);
	progress(b, false);
}

void print_summary(struct batch *b)
{
	if (verbosity < 1 || !strcmp(b->o->out_dir, "-"))
		return;
	fprintf(stderr,
		"lidiagen: %zu files, %zu ELF, %zu build IDs: %zu converted, %zu kept%s; "
		"%zu skipped (no build ID); %zu failed\n",
		b->files, b->elves, b->ngroups - b->skipped_shard, b->converted, b->kept,
		b->skipped_shard ? " (the others are another shard's)" : "", b->no_key,
		b->failed + b->failed_inputs);
}
