/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The index (doc/index.md): what every top-level input holds, written by
 * `lidiagen index` and read by `lidiagen convert --index`, so that shards
 * open only the inputs that hold their build IDs. JSON Lines: a header,
 * then per input (sorted by path) its record, its ELF images in the order
 * found, the images passed over, and the problems met reading it.
 * index_write.c writes it, index_read.c reads it back and trusts nothing.
 */
#ifndef LIDIAGEN_INDEX_H
#define LIDIAGEN_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "problems.h"
#include "state.h"

/*
 * 2: an image record has its "position"; 3: the header says what run made
 * it (inputs, inputs_sha256, options). Others are refused (index again).
 */
#define INDEX_VERSION 3

struct index_header {
	enum fallback_key fallback; /* keys must be made alike by index and convert */
	unsigned slice_k, slice_n;  /* lidiagen index --shard K/N: slice K of N; n 0: whole */
	/* The run (index_id.c): slices merge only if these agree. */
	size_t ninputs;		/* paths given to lidiagen index */
	char inputs_sha256[65]; /* of those paths sorted bytewise, each ended by a NUL */
	char *options;		/* what changes what is found, canonical (owned: malloc'd) */
};

struct index {
	struct index_header h;
	struct state st;	/* inputs (size, mtime, sha256, kind), parts, skips */
	struct problems errors; /* met reading inputs: path names it (and the member) */
};

void index_init(struct index *ix);
void index_release(struct index *ix);

/*
 * Read the index at path ("-": standard input) into ix (initialised).
 * Returns 0, or -1 with "PATH:LINE: what is wrong" in err (ix then holds
 * what was read before: release it).
 */
int index_load(struct index *ix, const char *path, char *err, size_t err_size);

/* The same from a stream f, named name in messages. */
int index_load_stream(struct index *ix, FILE *f, const char *name, char *err, size_t err_size);

/*
 * Write the index of s and its problems to path ("-": standard output)
 * atomically (tempfile.h): the same inputs give the same bytes, whatever
 * order they were found in. 0 or -errno.
 */
int index_write(const char *path, const struct index_header *h, const struct state *s,
		const struct problems *errors);

/* The input of s a problem's path names: the path, or its part before a '!' (a member's); -1. */
ssize_t index_error_input(const struct state *s, const char *path);

#endif
