/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The batch's own header (batch.h is its interface): what its files share.
 * batch_run.c runs the phases, each in its own file (batch.c makes and
 * lets go the batch they share):
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
 *     warnings, each group's line in group order, and the summary.
 *
 * Outputs depend on the parts alone, never on the thread count or the order
 * in which inputs were found: groups and their parts are sorted first.
 *
 * Threads: the walker (the calling thread) and the pool's workers share one
 * struct batch, and b->lock is its only lock. Under it, and only under it:
 * the state (inputs, parts, outputs: adding may move the arrays), the counts,
 * the groups' status/done/dispatched/data fields, the failed inputs, the
 * progress line and message printing (progress.c; the library's messages
 * come there too). A task carries a copy of what it reads (identify.c's
 * identify_task: path and size); a group's own fields (st, counts, level,
 * out_key, out_size, sha, message, warning) belong to the one worker
 * converting it (convert.c, keep.c). Phase 2 starts after pool_wait, when
 * the parts are fixed.
 */
#ifndef LIDIAGEN_BATCH_INTERNAL_H
#define LIDIAGEN_BATCH_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "batch.h"
#include "budget.h"
#include "holdings.h"
#include "pool.h"
#include "problems.h"
#include "state.h"
#include "walk.h"

/*
 * What became of a group. CONVERTED: written where there was no output;
 * REPLACED: written over one; KEPT: the output there left as it is (it
 * holds as much, or the same bytes); NOTHING: no function to write.
 */
enum status {
	ST_PENDING,
	ST_CONVERTED,
	ST_REPLACED,
	ST_KEPT,
	ST_FAILED,
	ST_OTHER_SHARD,
	ST_NOTHING,
	ST_DYNSYM_ONLY, /* only .dynsym to give: not written (--allow-dynsym-only writes it) */
	ST_MIXED,	/* a binary and its debug file at different addresses: not written */
	ST_PLANNED,	/* --dry-run: would be written (g->there_exists: over another) */
};

/*
 * What became of a group's output: decided once (keep.c for what stays,
 * convert.c for what is written or planned), as a record that decision.c
 * alone turns into words: the group's -v line, and its manifest status and
 * reason.
 */
enum verdict {
	V_NONE,		 /* not decided (failed, pending, another shard's) */
	V_WRITTEN,	 /* nothing was there */
	V_REPLACED,	 /* over one holding less, or not ours, or (--force) as much */
	V_SAME,		 /* the very bytes were there: not written again */
	V_KEPT,		 /* kept: it holds what the inputs give */
	V_KEPT_MORE,	 /* kept: it holds more than the inputs gave */
	V_RACED_MORE,	 /* another run put one holding more there meanwhile: kept */
	V_RACED_EQUAL,	 /* another run put one holding as much there meanwhile: kept */
	V_NOTHING,	 /* no function in the inputs: nothing written */
	V_DYNSYM_ONLY,	 /* only .dynsym's symbols: not written (--allow-dynsym-only) */
	V_MIXED,	 /* the debug file's addresses are not the binary's: not written */
	V_WOULD_WRITE,	 /* --dry-run: nothing there */
	V_WOULD_REPLACE, /* --dry-run: over what is there */
	V_COUNT
};

/* The warnings' fixes, one line each, said wherever the warning is. */
#define FIX_NO_KEY "link with -Wl,--build-id or use --fallback-key"
#define FIX_NO_SYMBOLS "give its debug file or --debug-dir"

struct group {
	const char *key;
	size_t first, n;      /* its parts: parts[first .. first + n) */
	ssize_t main, bin;    /* the images read, indexes into parts, -1: none */
	enum level predicted; /* at most what main and bin give */
	bool poor;	      /* no image has .symtab, DWARF or Go: .dynsym at most */
	int known_level;      /* what its unchanged inputs gave last run (state), -1: unknown */
	bool known_dynsym;    /* and whether .dynsym alone gave it */
	enum status status;
	bool done;	 /* converted, kept or failed: its lines may be printed */
	bool dispatched; /* handed to the pool (under the batch lock once threads run) */
	char out_key[512];
	bool probed;		       /* there and there_exists are known (output.c) */
	bool there_exists;	       /* something is at out_key (valid or not) */
	struct existing there;	       /* what it holds */
	struct lidia_extract_stats st; /* what extraction gave */
	struct counts counts;	       /* of the output in the tree: written, or kept */
	enum level level;
	uint64_t out_size;
	char sha[65];
	enum verdict verdict; /* what became of its output (decision.c) */
	char put_etag[33];    /* published now: the MD5 of its bytes, S3's ETag of them */
	enum level inputs;    /* what its inputs give: read, or predicted (the verdict's) */
	char *message; /* its -v line or its error, printed in group order; kept for the manifest */
	bool message_is_error;
	bool said;     /* its error follows from an input's, said already: printed with -v only */
	char *warning; /* a warning about it, printed before its message */
	bool ask_debuginfod;	/* --debuginfod, and no image gives DWARF (group.c) */
	char *fetched_from;	/* "debuginfod:URL": the debug file read came from there */
	char *fetched_alt;	/* "debuginfod:URL": and the dwz file it names */
	unsigned char *data[2]; /* loaded archive members of main and bin */
	size_t size[2];
	bool mapped[2];	   /* spilled: data is a mapping (lidia_archive_member.mapped) */
	uint64_t holds[2]; /* the bytes each really holds (lidia_archive_member.holds) */
	uint64_t reserved; /* of the budget, for the members loaded on the heap */
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
	struct budget budget; /* --max-memory: its own lock (budget.h) */
	uint64_t spill_over;  /* archive members larger are spilled (lidia_archive_opts) */
	/* counts for the progress line and the summary */
	size_t files, elves, failed_inputs;
	size_t skipped[SKIP_REASONS]; /* ELF images passed over, by reason */
	size_t converted, replaced, kept, failed, nothing, skipped_shard, groups_done;
	size_t dynsym_only;	      /* build IDs not written: only .dynsym to give */
	size_t mixed;		      /* build IDs not written: binary and debug file apart */
	size_t planned, planned_over; /* --dry-run: would be written, of which over another */
	size_t warnings;	      /* --strict: each one a failure */
	bool debuginfod_down;	      /* a fetch failed for want of a server: none is asked again */
	/* "": none yet; else the run's dwz files, gathered and fetched (dwz_pool.c) */
	char alt_dir[4096];
	struct dwz_seen *dwz;	       /* the dwz files gathered there */
	size_t *dwz_slots, dwz_nslots; /* dwz by build ID: place + 1, 0 empty */
	bool *streamed;		       /* phase 3: by input, the archives streamed to their end */
	size_t ndwz, cap_dwz;
	unsigned extracting; /* groups being read (convert.c: each the free workers' threads) */
	uint64_t bytes;	     /* of the inputs read */
	struct problems failures; /* inputs that failed, for the manifest and the index */
	/* the progress line (progress.c) */
	bool tty, drawn, ticking, stop_ticking;
	pthread_t ticker;
	pthread_cond_t tick;
	struct timespec start, convert_start, last_progress;
	size_t keys_seen, cap_keys; /* distinct keys found so far: hashes in keys */
	uint64_t *keys;
	char current[256]; /* the end of the path of the input read last */
};

/* ---- batch.c ---- */

/* A batch for the options o, with nothing found yet; batch_release() ends it. */
void batch_init(struct batch *b, const struct batch_opts *o);
void batch_release(struct batch *b);

/* ---- identify.c: phase 1 ---- */

/* Walk paths and identify every file found, on the pool; returns when all are done. */
void identify_inputs(struct batch *b, char **paths, size_t npaths);

struct index;

/*
 * --index: phase 1 from the index instead: its inputs, parts and images
 * passed over taken as they are (none read), and the problems it recorded
 * said again, as the run that met them said them.
 */
void identify_from_index(struct batch *b, const struct index *ix);

/* ---- shard_inputs.c: --index, what a shard opens ---- */

/*
 * Before converting: the inputs this shard's groups read must still be the
 * files the index describes (size, and mtime or else SHA-256). One that is
 * not is said (one line, naming it) and marked changed: its groups fail,
 * and it is never opened.
 */
void check_inputs_unchanged(struct batch *b);

/*
 * --shard-by input: shard K takes whole sets of inputs rather than build IDs
 * by their digits: inputs read by one group (a binary's package and its
 * debug package) are one set, the sets go, largest first, to the shard read
 * least so far. Every shard computes the same from the same parts, and the
 * other shards' groups are settled as such (ST_OTHER_SHARD). -ENOMEM.
 */
int assign_by_input(struct batch *b);

/* The member positions an archive walk must look at to reach the parts given (position_set_*). */
struct position_set {
	char **at; /* sorted */
	size_t n;
};

/*
 * The positions on the way to each of parts[0..n) (indexes into the
 * state's parts, all of input): every prefix of their positions ("3",
 * "3.0", "3.0.17"), so that the walk opens the nested archives that hold
 * them and passes over all else. 0 or -ENOMEM.
 */
int position_set_build(struct position_set *ps, const struct state *s, const size_t *parts,
		       size_t n);
bool position_set_has(const struct position_set *ps, const char *at);
void position_set_release(struct position_set *ps);

/* Count an input opened, and bytes of it read (under the lock). */
void input_opened(struct batch *b, size_t input, uint64_t bytes);

/* ---- group.c ---- */

/* Group the parts by key, each with its images and prediction; -ENOMEM. */
int make_groups(struct batch *b);

/* ---- schedule.c ---- */

/* Convert (or keep) every group not done, plain files first, then by archive. */
int convert_all(struct batch *b);

/* ---- convert.c ---- */

/* Convert one group (on a worker), then mark it done and print what is due. */
void convert_group(struct batch *b, struct group *g);

/* Free the group's loaded members, and give their bytes back to the budget. */
void release_members(struct batch *b, struct group *g);

/* ---- dwz_pool.c: the run's dwz files ---- */

struct dwz_seen {
	char id[LIDIA_KEY_MAX];
	char sha[65]; /* of its bytes */
	bool placed;  /* in the root */
	bool clash;   /* another of this build ID has other bytes: neither is used */
};

/*
 * The link to target (a dwz file debuginfod gave) under the run's root of
 * dwz files, by build ID hex; made on first use. Under the lock; 0 or -errno.
 */
int dwz_pool_link(struct batch *b, const char *hex, const char *target);

/*
 * The dwz file input (its bytes at data, or the file when data is NULL),
 * of build ID hex, put under the root where every extraction looks (not
 * under the lock). Its problems are warnings: its debug files then say
 * that they miss it.
 */
void dwz_pool_add(struct batch *b, const char *input, const void *data, size_t size,
		  const char *hex);

/*
 * The dwz files that are inputs of their own (not archive members) and that
 * phase 1 did not read (unchanged since --state's run, or --index's),
 * gathered before any group is converted. Members are gathered as their
 * archives stream (schedule.c).
 */
void dwz_pool_gather_unread(struct batch *b);

/* The root into dir, when there is one (for lidia_extract_opts.dwz_dir). */
bool dwz_pool_dir(struct batch *b, char *dir, size_t size);

/* The root and all in it removed, the table freed (the run's end). */
void dwz_pool_release(struct batch *b);

/* ---- debuginfod_fetch.c: --debuginfod ---- */

/*
 * When the group asks the servers and the extraction into *bld found no
 * DWARF, not even in a debug file on disk: its debug file fetched by the
 * build ID of elfs[0] and, when it has that build ID, the extraction done
 * again into a new *bld with it after elfs[0..n), as a debug file given
 * beside the binary; g->fetched_from says where it came from. Not found
 * or no server: one warning, and *bld stays as it is. 0 or the error of
 * the new extraction.
 */
int extract_fetched(struct batch *b, struct group *g, struct lidia_elf *const *elfs, size_t n,
		    const struct lidia_extract_opts *opts, struct lidia_builder **bld);

/* ---- output.c: the tree, the bucket or stdout ---- */

/*
 * What is at the group's key now (g->there, g->there_exists), in the tree
 * or the bucket; asked once, whichever of schedule.c and convert.c asks
 * first. On failure the group's message says why.
 */
/*
 * --state, publishing: what is at the group's key in the bucket now (what
 * was written, or what was left there), so that a re-run whose listing shows
 * the same ETag there sends no HEAD.
 */
void output_remember(struct batch *b, struct group *g);

int output_probe(struct batch *b, struct group *g);

/* What output_write did. */
enum written {
	WRITTEN,	    /* the output is there now */
	WRITTEN_SAME,	    /* these very bytes were there: not written again */
	WRITTEN_KEPT_MORE,  /* another run's output holding more came meanwhile: left */
	WRITTEN_KEPT_EQUAL, /* another's holding as much came meanwhile: left (the first stays) */
};

/*
 * Write the group's output at its key (g->there: what was there when probed),
 * unless it holds these very bytes, or another run put there meanwhile an
 * output holding as much (*how says which). The decision is made again
 * at the time of writing, with no other writer between: in a tree under
 * the key's lock (lidia_store_lock), in a bucket by conditional writes
 * (publish_write). Either way g's counts, level, size and sha256 then
 * describe the output there. On failure the message says why.
 */
int output_write(struct batch *b, struct group *g, struct lidia_builder *bld, enum written *how);

/* A bucket: one listing where the groups' keys go, instead of a HEAD per absent key. */
void output_survey(struct batch *b);

/* The one output to stdout, streamed (a manifest gets its counts from a copy in memory). */
int output_write_stdout(struct batch *b, struct group *g, struct lidia_builder *bld);

/* ---- keep.c: keep or replace ---- */

/*
 * Keep the group's existing output ex if keep_enough() says so, for what the
 * inputs give: g->level once extracted, else g->predicted (an upper bound).
 * A kept group is settled: status, counts of the output, state, message.
 */
bool keep_if_enough(struct batch *b, struct group *g, const struct existing *ex, bool extracted);

/* Whether settle_unread() settles the group (it may stay unread: schedule.c). */
bool settles_unread(const struct batch *b, const struct group *g, const struct existing *ex);

/*
 * Before reading: settle the group by what the tree and the state know
 * (kept, or nothing to symbolize, as last run). A poor group (.dynsym at
 * best) whose inputs the state does not know is always read: what it gives
 * decides its warning.
 */
bool settle_unread(struct batch *b, struct group *g, const struct existing *ex);

/*
 * Settle a group whose binary and debug file are at different addresses
 * (LIDIA_E_ELF_ADDRESSES): nothing written, a warning naming both.
 */
void settle_mixed(struct batch *b, struct group *g);

/* Settle a group its inputs give no function for: nothing written, a warning. */
void settle_nothing(struct batch *b, struct group *g);

/*
 * Settle a group whose inputs give the exported symbols of .dynsym alone:
 * not written (without --allow-dynsym-only), a warning with the fix.
 */
void settle_dynsym_only(struct batch *b, struct group *g);

/* The warning of a group whose output holds .dynsym's symbols only (when it does). */
void warn_dynsym_only(struct batch *b, struct group *g, bool dynsym_only);

/* ---- manifest.c ---- */

/*
 * Write the manifest (batch_opts.manifest): a JSON line per build ID (its
 * status, and for an output its inputs, holds, counts, size and sha256),
 * then one per ELF image passed over and one per input that failed.
 */
int write_manifest(struct batch *b);

/* ---- progress.c: everything the batch prints ---- */

/*
 * The progress line, on a terminal and without -q: build IDs done of those
 * known, percentage, MiB/s, ETA and the input read last, cut to the
 * terminal's width; drawn at most every 100 ms (under the lock).
 */
void progress(struct batch *b);

/* Erase the progress line before another line is printed (under the lock). */
void end_progress(struct batch *b);

/* Start and stop the thread that redraws the line while nothing else happens. */
void progress_start(struct batch *b);
void progress_stop(struct batch *b);

/* Note a key found (for "of the total known so far") and the input read now (under the lock). */
void progress_key(struct batch *b, const char *key);
void progress_input(struct batch *b, const char *path);

/* An input problem: one line naming it, counted, remembered; the batch goes on (takes the lock). */
void input_problem(void *ctx, const char *path, const char *msg);

/*
 * A warning about what: one line with its fix, counted; with --strict a
 * failure, printed as an error even with -q (under the lock).
 */
void batch_warning(struct batch *b, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The library's messages, printed like the batch's own (lidia_set_log; takes the lock). */
void batch_log(enum lidia_log_level level, const char *msg, void *ctx);

/*
 * Decide what became of g's output (decision.c): its verdict, its status,
 * and its -v line; inputs is what its inputs give (read, or predicted).
 * g->there, g->counts and g->level are as the verdict leaves them.
 */
void decide(struct batch *b, struct group *g, enum verdict v, enum level inputs);

/* The manifest's status of a decided group ("kept", "uploaded"...), and its reason or NULL. */
const char *verdict_status(const struct batch *b, const struct group *g);
const char *verdict_reason(const struct group *g);

/* Set the group's line (-v, or an error), printed in group order once it is done. */
void group_message(struct group *g, bool is_error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Set the group's warning, printed (and counted) in group order once it is done. */
void group_warning(struct group *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print the lines of the groups done, in group order (under the lock). */
void print_done(struct batch *b);

/* The last line: the counts of the run (even with -q). */
void print_summary(struct batch *b);

#endif
