/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lidiagen index's run (batch.h): phase 1 of the batch (identify.c) over
 * the inputs of this slice, each hashed, the unchanged inputs of an older
 * index taken from it unread (--reuse), then the index written.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch_internal.h"
#include "cpus.h"
#include "index.h"
#include "index_id.h"
#include "tempfile.h"
#include "usage.h"

/*
 * --reuse: the older index becomes the batch's saved state, so that an
 * input of the same path, size and mtime comes with its records (identify.c
 * also takes one of another mtime whose SHA-256 is the same). An input it
 * recorded a problem for is read again. An index that cannot be used is
 * said, and every input read.
 */
static void load_reuse(struct batch *b, const char *path, const struct index_header *mine)
{
	struct index old;
	char err[1024];

	index_init(&old);
	if (index_load(&old, path, err, sizeof(err))) {
		warning(path, "cannot be reused (%s); every input is read", err);
		index_release(&old);
		return;
	}
	/* Other options find other records in the same inputs; other paths are its point. */
	if (old.h.fallback != mine->fallback || strcmp(old.h.options, mine->options)) {
		warning(path, "cannot be reused (made with %s); every input is read",
			old.h.fallback != mine->fallback ? "another --fallback-key"
							 : "other options");
		index_release(&old);
		return;
	}
	for (size_t e = 0; e < old.errors.n; e++) {
		ssize_t i = index_error_input(&old.st, old.errors.v[e].path);

		if (i >= 0)
			old.st.inputs[i].size = UINT64_MAX; /* matches no file */
	}
	if ((b->state.saved = malloc(sizeof(*b->state.saved)))) {
		*b->state.saved = old.st;
		state_init(&old.st);
	}
	index_release(&old);
}

/* The index of what phase 1 found, with the problems it met. */
static int save_index(struct batch *b, const struct index_header *h, const char *out)
{
	return index_write(out, h, &b->state, &b->failures);
}

/* The distinct build IDs of the parts (their order is the index's: sorted on a copy). */
static size_t distinct_keys(const struct state *s)
{
	const char **keys = malloc((s->nparts + 1) * sizeof(*keys));
	size_t n = 0;

	if (!keys)
		return 0;
	for (size_t k = 0; k < s->nparts; k++)
		keys[k] = s->parts[k].key;
	if (s->nparts > 1)
		qsort(keys, s->nparts, sizeof(*keys), cmp_str_ptrs);
	for (size_t k = 0; k < s->nparts; k++)
		n += !k || strcmp(keys[k - 1], keys[k]);
	free(keys);
	return n;
}

static size_t reused(const struct batch *b)
{
	size_t n = 0;

	for (size_t i = 0; i < b->state.ninputs; i++)
		n += b->state.inputs[i].from_state;
	return n;
}

int batch_index(const struct batch_opts *o, char **paths, size_t npaths, const char *out,
		const char *reuse)
{
	unsigned jobs = o->jobs ? o->jobs : usable_cpus();
	struct lidia_log_cb old_log;
	struct index_header h;
	struct batch b;
	size_t keys;
	int err, ret;

	if (index_run_header(&h, o, paths, npaths)) {
		free(h.options);
		error(NULL, "out of memory");
		return EXIT_FAILED;
	}
	batch_init(&b, o);
	if (reuse)
		load_reuse(&b, reuse, &h);
	remove_temps_on_signal();
	if (pool_start(&b.pool, jobs)) {
		error(NULL, "cannot start %u threads", jobs);
		batch_release(&b);
		return EXIT_FAILED;
	}
	if (verbosity >= 3)
		fprintf(stderr, "lidiagen: %u thread%s%s\n", jobs, jobs == 1 ? "" : "s",
			o->jobs ? "" : " (-j: the CPUs its affinity and cgroup quota allow)");
	old_log = lidia_set_log(batch_log, &b);
	progress_start(&b);
	identify_inputs(&b, paths, npaths);
	pool_stop(&b.pool);
	progress_stop(&b);
	lidia_set_log(old_log.fn, old_log.ctx);
	err = save_index(&b, &h, out);
	free(h.options);
	if (err)
		error(out, "cannot write the index: %s", strerror(-err));
	keys = distinct_keys(&b.state);
	fprintf(stderr,
		"lidiagen: index: %zu file%s, %zu ELF, %zu build ID%s (%zu inputs reused); %zu "
		"warning%s; %zu failed\n",
		b.files, b.files == 1 ? "" : "s", b.elves, keys, keys == 1 ? "" : "s", reused(&b),
		b.warnings, b.warnings == 1 ? "" : "s", b.failed_inputs);
	ret = err || b.failed_inputs || (o->strict && b.warnings) ? EXIT_FAILED : EXIT_OK;
	batch_release(&b);
	return ret;
}
