/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a lidia file holds: its level (symbols < lines < inline frames) and
 * its counts, as `lidiagen info` counts them, read from a file or from
 * bytes. The batch's keep-or-replace (keep.c) and publishing (publish.c,
 * cmd_upload.c) decide by these.
 */
#ifndef LIDIAGEN_HOLDINGS_H
#define LIDIAGEN_HOLDINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lidia.h"

/* How much an output holds: each level includes the ones below; NONE: no function. */
enum level { LEVEL_NONE, LEVEL_SYMBOLS, LEVEL_LINES, LEVEL_INLINES };

/* "nothing", "symbols", "symbols+lines", "symbols+lines+inlines": also the metadata's words. */
extern const char *const level_name[4];

/* The level level_name[] names; -1 for any other word. */
int level_parse(const char *name);

/* What a lidia file holds, as `lidiagen info` counts it (counts_read). */
struct counts {
	size_t functions;     /* ranges of depth 0 */
	size_t inline_ranges; /* ranges of depth > 0 */
	size_t line_rows;     /* the rows of the file's line table */
};

/* What an output already there (in the tree, or in the bucket) holds. */
struct existing {
	bool valid;	  /* a lidia file whose CRCs hold (in a bucket: with our metadata) */
	enum level level; /* LEVEL_NONE: no readable output, or no function in it */
	struct counts counts;
	uint64_t size;
	char sha[65]; /* only when asked for */
	/* Which object it is, to tell whether another took its place since it was seen: */
	char etag[80];		     /* in a bucket: its ETag ("": none seen) */
	uint64_t dev, ino, mtime_ns; /* in a tree: its inode and date (ino 0: none) */
};

/*
 * What the file open as fd holds (LEVEL_NONE when fd < 0: nothing there);
 * its sha256 too when want_sha. Only a regular file is read. threads >= 2:
 * a big file's CRCs are checked on a second thread while the first counts.
 */
void existing_read_fd(int fd, bool want_sha, unsigned threads, struct existing *ex);

/*
 * Whether fd (< 0: nothing there) is still the file ex was read from
 * (existing_read_fd): the same inode, size and date, or still none.
 * Writers rename whole files into place, so another file there means
 * another writer came meanwhile.
 */
bool existing_same_fd(int fd, const struct existing *ex);

/* The same of a lidia file's bytes (sha256 always). */
void existing_read_mem(const void *buf, size_t size, struct existing *ex);

/* A lidia file's counts, as `lidiagen info` counts them. */
void counts_read(const struct lidia_reader *r, struct counts *c);

/* The level extraction statistics give, and the level a file's counts show. */
enum level stats_level(const struct lidia_extract_stats *st);
enum level counts_level(const struct counts *c);

/*
 * The decision, for trees and buckets alike: an output holding at least what
 * the inputs give (equal is enough) is kept; one holding nothing never is.
 */
bool keep_enough(enum level existing, enum level inputs);

/*
 * A manifest line's object fields, the same for convert and upload (the
 * MANIFEST section of lidiagen(1)): "key" (under the tree or the prefix),
 * "object" (where plus "/" plus key: DIR/KEY, or s3://BUCKET/PREFIX/KEY;
 * "-" for standard output), and once there is one, what it holds:
 * "holds", "counts", "size" and "sha256" (sha may be NULL: not known).
 */
void manifest_object(FILE *f, const char *where, const char *key);
void manifest_holds(FILE *f, enum level level, const struct counts *c, uint64_t size,
		    const char *sha);

#endif
