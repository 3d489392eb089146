/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The batch's own header (batch.h is its interface): what its files share.
 * batch.c runs the phases, each in its own file:
 *
 *  1. identify.c: every input file is read once (in parallel): an ELF file
 *     becomes a part, an archive is streamed and each ELF member becomes a
 *     part; a part records its key (GNU build ID) and what it holds, and its
 *     bytes are let go. Unchanged inputs of an earlier run are taken from the
 *     state file without reading them.
 *  2. group.c: parts are grouped by key; each group picks its best image
 *     (the one with DWARF, say) and its binary, and predicts what they give.
 *  3. schedule.c: groups read from plain files are converted first; then
 *     archives are streamed again, side by side, keeping only the members
 *     some group still needs, so memory follows the largest inputs, not the
 *     tree. convert.c converts one group, unless keep.c finds that the output
 *     there already has as much.
 *  4. manifest.c writes the manifest; progress.c prints the progress line,
 *     each group's line in group order, and the summary.
 *
 * Outputs depend on the parts alone, never on the thread count or the order
 * in which inputs were found: groups and their parts are sorted first.
 *
 * Threads: the walker (the calling thread) and the pool's workers share one
 * struct batch, and b->lock is its only lock. Under it, and only under it:
 * the state (inputs, parts, outputs: adding may move the arrays), the counts,
 * the groups' status/done/dispatched/data fields and message printing
 * (progress.c). A task carries a copy of what it reads (identify.c's
 * identify_task: path and size); a group's own fields (st, level, out_key,
 * out_size, sha, message) belong to the one worker converting it
 * (convert.c, keep.c). Phase 2 starts after pool_wait, when the parts are
 * fixed.
 */
#ifndef LIDIAGEN_BATCH_INTERNAL_H
#define LIDIAGEN_BATCH_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "batch.h"
#include "pool.h"
#include "state.h"
#include "walk.h"

/* How much an output holds: each level includes the ones below. */
enum level { LEVEL_NONE, LEVEL_SYMBOLS, LEVEL_LINES, LEVEL_INLINES };

enum status { ST_PENDING, ST_CONVERTED, ST_KEPT, ST_FAILED, ST_OTHER_SHARD };

struct group {
	const char *key;
	size_t first, n;      /* its parts: parts[first .. first + n) */
	ssize_t main, bin;    /* the images read, indexes into parts, -1: none */
	enum level predicted; /* at most what main and bin give */
	enum status status;
	bool done;	 /* converted, kept or failed: its lines may be printed */
	bool dispatched; /* handed to the pool (under the batch lock once threads run) */
	char out_key[512];
	struct lidia_extract_stats st; /* of the output: converted, or kept */
	enum level level;
	uint64_t out_size;
	char sha[65];
	char *message; /* what to print for it, in group order */
	bool message_is_error;
	unsigned char *data[2]; /* loaded archive members of main and bin */
	size_t size[2];
};

struct batch {
	const struct batch_opts *o;
	struct walk_opts walk;
	pthread_mutex_t lock; /* guards all below but o and walk: see the top */
	struct state state;   /* parts and inputs, as identified */
	struct group *groups;
	size_t ngroups;
	size_t next_print;
	struct pool pool;
	/* counts for the progress line and the summary */
	size_t files, elves, no_key, failed_inputs, converted, kept, failed, skipped_shard;
	uint64_t bytes;
	bool tty;
	struct timespec last_progress;
};

/* ---- identify.c: phase 1 ---- */

/* Walk paths and identify every file found, on the pool; returns when all are done. */
void identify_inputs(struct batch *b, char **paths, size_t npaths);

/* ---- group.c ---- */

/* Group the parts by key, each with its images and prediction; -ENOMEM. */
int make_groups(struct batch *b);

/* ---- schedule.c ---- */

/* Convert (or keep) every group not done, plain files first, then by archive. */
int convert_all(struct batch *b);

/* ---- convert.c ---- */

/* Convert one group (on a worker), then mark it done and print what is due. */
void convert_group(struct batch *b, struct group *g);

/* ---- keep.c: keep or replace ---- */

/* What an output already in the tree holds. */
struct existing {
	enum level level; /* LEVEL_NONE: no readable output */
	struct lidia_extract_stats st;
	uint64_t size;
	char sha[65]; /* only when asked for */
};

/* What the output at path holds (LEVEL_NONE when missing); its sha256 too when want_sha. */
void existing_read(const char *path, bool want_sha, struct existing *ex);

/* The level extraction statistics give. */
enum level stats_level(const struct lidia_extract_stats *st);

/* The decision: an output holding at least what the inputs give is kept. */
bool keep_enough(enum level existing, enum level inputs);

/*
 * Keep the group's existing output ex if keep_enough() says so, for what the
 * inputs give: g->level once extracted, else g->predicted (an upper bound).
 * A kept group is settled: status, counts of the output, state, message.
 */
bool keep_if_enough(struct batch *b, struct group *g, const struct existing *ex, bool extracted);

/* ---- manifest.c ---- */

/* Write the manifest (batch_opts.manifest): a JSON line per converted or kept group. */
int write_manifest(struct batch *b);

/* ---- progress.c: everything the batch prints ---- */

/* The progress line on a terminal, at most every 100 ms unless force (under the lock). */
void progress(struct batch *b, bool force);

/* Clear the progress line before another line is printed (under the lock). */
void end_progress(struct batch *b);

/* An input problem: one line naming it, counted; the batch goes on (takes the lock). */
void input_problem(void *ctx, const char *path, const char *msg);

/* Set the group's line, printed in group order once it is done. */
void group_message(struct group *g, bool is_error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Print the lines of the groups done, in group order (under the lock). */
void print_done(struct batch *b);

/* The last line: the counts of the run. */
void print_summary(struct batch *b);

#endif
