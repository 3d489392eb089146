/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The run (batch.h's batch_run): phase after phase, each in its own file
 * (batch_internal.h), over the batch batch.c makes.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch_internal.h"
#include "debuginfod.h"
#include "cpus.h"
#include "index.h"
#include "names.h"
#include "publish.h"
#include "tempfile.h"
#include "usage.h"

/* Temporary files a killed run left in the output tree: never renamed, never to be synced. */
static void clean_temps(struct batch *b)
{
	char key[LIDIA_KEY_MAX + 256];
	size_t removed, at;
	int err = lidia_store_clean(b->o->out_dir, &b->o->store, &removed);

	/* The link named: where a key of any build ID would go meets it. */
	if (err == LIDIA_E_SYMLINK &&
	    !lidia_store_key(key, sizeof(key), "0123456789abcdef", &b->o->store) &&
	    (at = lidia_store_symlink_at(b->o->out_dir, key)))
		warning(NULL, "%s/%.*s: stale temporary files not removed: %s", b->o->out_dir,
			(int)at, key, lidia_strerror(err));
	else if (err)
		warning(b->o->out_dir, "cannot remove stale temporary files: %s",
			lidia_strerror(err));
	else if (removed && verbosity >= 2)
		fprintf(stderr, "lidiagen: %s: removed %zu temporary files of an unfinished run\n",
			b->o->out_dir, removed);
}

/* Phase 2 on the groups made: converted, every group done and its line printed. */
static int convert_groups(struct batch *b, bool *usage)
{
	int err;

	/* Under the lock: the progress line's thread reads the groups. */
	pthread_mutex_lock(&b->lock);
	err = make_groups(b);
	if (!err && b->o->shard_n && b->o->shard_by_input)
		err = assign_by_input(b);
	clock_gettime(CLOCK_MONOTONIC, &b->convert_start);
	pthread_mutex_unlock(&b->lock);
	if (!err && b->o->index)
		check_inputs_unchanged(b);
	if (!err && !strcmp(b->o->out_dir, "-") && b->ngroups - b->skipped_shard != 1) {
		end_progress(b);
		error(NULL, "-o - writes one file, but the inputs have %zu build IDs",
		      b->ngroups - b->skipped_shard);
		*usage = b->ngroups > 1;
		err = -EINVAL;
	}
	if (!err)
		err = convert_all(b);
	pool_wait(&b->pool);
	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->ngroups; i++)
		b->groups[i].done = true;
	print_done(b);
	pthread_mutex_unlock(&b->lock);
	return err;
}

/* What the run leaves besides the outputs: the manifest, and the state (when nothing failed). */
static int write_side_files(struct batch *b, const char *state_path, int err)
{
	const struct batch_opts *o = b->o;
	int serr;

	if (!err && o->manifest && (err = write_manifest(b)))
		error(o->manifest, "cannot write the manifest: %s", strerror(-err));
	if (state_path && !o->dry_run && !b->failed && !b->failed_inputs &&
	    (serr = state_save(&b->state, state_path))) {
		error(state_path, "cannot write the state: %s", strerror(-serr));
		err = err ? err : serr;
	}
	return err;
}

/*
 * The exit code: failures, and with --strict warnings too, and a run that
 * left no output for any build ID.
 */
static int exit_code(const struct batch *b, int err)
{
	if (err || b->failed || b->failed_inputs)
		return EXIT_FAILED;
	if (b->o->strict && (b->warnings || !(b->converted + b->replaced + b->kept + b->planned)))
		return EXIT_FAILED;
	return EXIT_OK;
}

/* --index: read before any work (a bad index costs nothing); -1 when it cannot be used. */
static int load_index(const struct batch_opts *o, struct index *ix)
{
	char err[1024];

	index_init(ix);
	if (index_load(ix, o->index, err, sizeof(err))) {
		error(NULL, "%s", err);
		return -1;
	}
	if (ix->h.slice_n) {
		error(o->index,
		      "slice %u/%u of an index: merge the slices first (lidiagen index --merge)",
		      ix->h.slice_k, ix->h.slice_n);
		return -1;
	}
	if (ix->h.fallback != o->fallback) {
		error(o->index, "made with --fallback-key %s, but this run has --fallback-key %s",
		      fallback_name(ix->h.fallback), fallback_name(o->fallback));
		return -1;
	}
	return 0;
}

/* --debuginfod: the servers named and the library loaded before any thread starts (setenv). */
static int start_debuginfod(const struct batch_opts *o)
{
	char why[512];
	int err = dbgd_setup(o->debuginfod_urls, o->ndebuginfod_urls, why, sizeof(why));

	if (err)
		error(NULL, "%s", why);
	return err;
}

int batch_run(const struct batch_opts *o, char **paths, size_t npaths)
{
	struct batch b;
	struct index ix;
	bool to_stdout = !strcmp(o->out_dir, "-"), usage = false;
	const char *state_path = !to_stdout && !o->no_state ? o->state : NULL;
	unsigned jobs = o->jobs ? o->jobs : usable_cpus();
	struct lidia_log_cb old_log;
	int err, ret;

	if (o->index && load_index(o, &ix)) {
		index_release(&ix);
		return EXIT_FAILED;
	}
	if (o->debuginfod && (err = start_debuginfod(o))) {
		if (o->index)
			index_release(&ix);
		return err == -EINVAL ? EXIT_USAGE : EXIT_FAILED;
	}
	batch_init(&b, o);
	if (state_path)
		state_load(&b.state, state_path, o->force);
	remove_temps_on_signal();
	if (pool_start(&b.pool, jobs)) {
		error(NULL, "cannot start %u threads", jobs);
		batch_release(&b);
		if (o->index)
			index_release(&ix);
		return EXIT_FAILED;
	}
	if (verbosity >= 3)
		fprintf(stderr, "lidiagen: %u thread%s%s\n", jobs, jobs == 1 ? "" : "s",
			o->jobs ? "" : " (-j: the CPUs its affinity and cgroup quota allow)");

	if (!to_stdout && !o->bucket && !o->dry_run)
		clean_temps(&b);
	/* The library's warnings are counted, and erase the progress line, like ours. */
	old_log = lidia_set_log(batch_log, &b);
	progress_start(&b);
	if (o->index) {
		identify_from_index(&b, &ix);
		index_release(&ix);
	} else {
		identify_inputs(&b, paths, npaths);
		/* An empty tree (a build step that made nothing) is no success to keep quiet about. */
		if (!b.files && !b.failed_inputs)
			batch_warning(&b, npaths == 1 ? paths[0] : NULL,
				      "no input file found%s: nothing to convert",
				      npaths == 1 ? "" : " in the paths given");
	}
	err = convert_groups(&b, &usage);
	pool_stop(&b.pool);
	if (publish_settle(o->bucket) && !err)
		err = -EIO;
	progress_stop(&b);
	lidia_set_log(old_log.fn, old_log.ctx);

	err = write_side_files(&b, state_path, err);
	if (!usage && o->strict && !err && !(b.converted + b.replaced + b.kept + b.planned))
		error(NULL, "--strict: no build ID was converted or kept");
	print_summary(&b);
	ret = usage ? EXIT_USAGE : exit_code(&b, err);
	batch_release(&b);
	return ret;
}
