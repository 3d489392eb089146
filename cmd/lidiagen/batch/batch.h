/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The batch: walk the inputs (files, directories, archives), identify every
 * ELF by build ID, pair binaries with their debug files wherever each was
 * found, and convert each build ID once into the output tree.
 */
#ifndef LIDIAGEN_BATCH_H
#define LIDIAGEN_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lidia.h"
#include "s3.h"
#include "state.h"

struct publish;

struct batch_opts {
	const char *out_dir; /* "-": the one output to stdout; "s3://...": the bucket */
	struct lidia_store_opts store;
	struct lidia_extract_opts extract;
	const char *debug_dirs[65];
	size_t ndebug_dirs;
	const char *prefix_map[65]; /* --prefix-map OLD=NEW, in order; NULL after the last */
	size_t nprefix_map;
	bool recursive, follow_symlinks, force;
	bool allow_dynsym_only; /* write a build ID whose only symbols are .dynsym's */
	/* Ask debuginfod servers for what the inputs lack (batch/debuginfod_fetch.c). */
	bool debuginfod;
	const char *debuginfod_urls[16]; /* --debuginfod-url: DEBUGINFOD_URLS's instead */
	size_t ndebuginfod_urls;
	/* --build-id, --build-ids: inputs fetched from the servers by build ID alone (by_build_id.c) */
	const char *build_ids[64];
	size_t nbuild_ids;
	const char *build_ids_file;
	const char *include[64], *exclude[64];
	size_t ninclude, nexclude;
	unsigned jobs;	      /* 0: the number of cores */
	uint64_t max_memory;  /* the run's memory budget in bytes; 0: half of what it may use */
	const char *manifest; /* JSON Lines, one per build ID; NULL: none */
	enum fallback_key fallback;
	unsigned shard_k, shard_n; /* convert only build IDs of shard k of n (1-based); n 0: all */
	const char *index; /* --index: the inputs and their parts from this index, not walked */
	/*
	 * --shard-by input: shards take whole sets of inputs (shard_inputs.c).
	 * Not given (shard_by_set false): input with --index, key without.
	 */
	bool shard_by_input, shard_by_set;
	const char *platform; /* --platform OS/ARCH: a container image's of it alone; NULL: all */
	bool indexing; /* lidiagen index: inputs hashed; shard_k/n slice the inputs, not keys */
	struct lidia_archive_opts archive; /* the limits; each walk adds its callbacks */
	const char *state; /* the re-run cache (keep it outside the synced tree); NULL: none */
	bool no_state;
	bool strict;		/* warnings fail the run, and so does a run that leaves no output */
	bool dry_run;		/* say what would be written, replaced and kept; change nothing */
	struct s3_overrides s3; /* --region, --endpoint-url, --profile, --path-style */
	struct publish *bucket; /* out_dir "s3://...": opened by the command; NULL: a tree */
};

/* Convert every input path; returns an exit code (EXIT_OK, EXIT_FAILED). */
int batch_run(const struct batch_opts *opts, char **paths, size_t npaths);

/*
 * lidiagen index (index_run.c): identify every input path of this slice
 * (opts->shard_k/n over the inputs), taking those unchanged since the
 * index reuse (NULL: none) from it, and write the index to out ("-":
 * stdout). Returns an exit code.
 */
int batch_index(const struct batch_opts *opts, char **paths, size_t npaths, const char *out,
		const char *reuse);

#endif
