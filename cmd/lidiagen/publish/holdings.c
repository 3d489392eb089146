/* SPDX-License-Identifier: Apache-2.0 */
/* What a lidia file holds (holdings.h), read with the library's reader, CRCs checked. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "holdings.h"
#include "json.h"
#include "sha256.h"

const char *const level_name[4] = { "nothing", "symbols", "symbols+lines",
				    "symbols+lines+inlines" };

int level_parse(const char *name)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, level_name[i]))
			return i;
	return -1;
}

/* The ranges [lo, hi) of r counted into c: those the reader can read, by depth. */
static void count_ranges(const struct lidia_reader *r, size_t lo, size_t hi, struct counts *c)
{
	for (size_t i = lo; i < hi; i++) {
		struct lidia_range_info ri;

		if (lidia_reader_range(r, i, &ri))
			continue;
		if (ri.depth)
			c->inline_ranges++;
		else
			c->functions++;
	}
}

void counts_read(const struct lidia_reader *r, struct counts *c)
{
	struct lidia_file_info fi;

	memset(c, 0, sizeof(*c));
	lidia_reader_info(r, &fi);
	c->line_rows = (size_t)fi.lines.count;
	count_ranges(r, 0, lidia_reader_count(r), c);
}

/* ex: a valid file holding c, size bytes. */
static void existing_of(struct existing *ex, const struct counts *c, uint64_t size)
{
	ex->counts = *c;
	ex->valid = true;
	ex->level = counts_level(c);
	ex->size = size;
}

/* Counts, level and size from an open reader. */
static void existing_from(struct lidia_reader *r, struct existing *ex)
{
	struct lidia_file_info fi;
	struct counts c;

	lidia_reader_info(r, &fi);
	counts_read(r, &c);
	existing_of(ex, &c, fi.file_size);
}

/* Which file st is, as a rename over it would change: device, inode, date and size. */
static void identity_of(const struct stat *st, struct existing *id)
{
	id->dev = (uint64_t)st->st_dev;
	id->ino = (uint64_t)st->st_ino;
	id->mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
	id->size = (uint64_t)st->st_size;
}

bool existing_same_fd(int fd, const struct existing *ex)
{
	struct existing now;
	struct stat st;

	if (fd < 0 || fstat(fd, &st))
		return !ex->ino;
	identity_of(&st, &now);
	return now.ino == ex->ino && now.dev == ex->dev && now.mtime_ns == ex->mtime_ns &&
	       now.size == ex->size;
}

/* From this size, with two threads, reading a file back is shared between them. */
#define SHARED_MIN ((off_t)8 << 20)

/* Ranges taken at a time by either thread. */
#define CHUNK (1u << 16)

struct read_back {
	const struct lidia_reader *r;
	atomic_size_t next; /* the first range no thread has taken */
	struct counts half[2];
	struct lidia_file_info fi; /* the second thread's lidia_reader_info(): the CRCs */
	bool crcs_hold;
};

/* Chunks of ranges counted into half[t] until none is left. */
static void count_chunks(struct read_back *rb, unsigned t)
{
	size_t n = lidia_reader_count(rb->r), lo;

	while ((lo = atomic_fetch_add(&rb->next, CHUNK)) < n)
		count_ranges(rb->r, lo, lo + CHUNK < n ? lo + CHUNK : n, &rb->half[t]);
}

/*
 * The second thread: every table's CRC32C (lidia_reader_info() checks those
 * not checked at open, as check_crc would have), then counting beside the first.
 */
static void *second_half(void *arg)
{
	struct read_back *rb = arg;
	const struct lidia_file_info *fi = &rb->fi;

	rb->crcs_hold = !lidia_reader_info(rb->r, &rb->fi) && fi->va.crc_ok && fi->ranges.crc_ok &&
			fi->strings.crc_ok && fi->lines.crc_ok;
	count_chunks(rb, 1);
	return NULL;
}

/*
 * existing_from() of a big file opened without its CRCs checked, on two
 * threads: the second checks them while the first counts, then both count.
 * Reading back a big output just written was the longest step left on one
 * thread at the end of a run. The figures of a reader opened with
 * check_crc: when a CRC fails, the identity alone, as a failed open left.
 */
static void existing_shared(struct lidia_reader *r, struct existing *ex)
{
	struct read_back rb = { .r = r };
	pthread_t tid;

	if (pthread_create(&tid, NULL, second_half, &rb)) {
		second_half(&rb); /* no second thread: its work, every chunk with it, here */
	} else {
		count_chunks(&rb, 0);
		pthread_join(tid, NULL);
	}
	if (rb.crcs_hold)
		existing_of(ex,
			    &(struct counts){ rb.half[0].functions + rb.half[1].functions,
					      rb.half[0].inline_ranges + rb.half[1].inline_ranges,
					      (size_t)rb.fi.lines.count },
			    rb.fi.file_size);
}

void existing_read_fd(int fd, bool want_sha, unsigned threads, struct existing *ex)
{
	struct lidia_reader *r;
	struct stat st;
	bool shared;

	memset(ex, 0, sizeof(*ex));
	ex->level = LEVEL_NONE;
	/* Its identity first: a file renamed over it after this is told apart. */
	if (fd < 0 || fstat(fd, &st))
		return;
	identity_of(&st, ex);
	shared = threads >= 2 && st.st_size >= SHARED_MIN;
	if (!S_ISREG(st.st_mode) ||
	    lidia_reader_open_fd(&r, fd, &LIDIA_READER_OPTS(.check_crc = !shared)))
		return;
	if (shared)
		existing_shared(r, ex);
	else
		existing_from(r, ex);
	lidia_reader_close(r);
	if (want_sha && ex->valid)
		sha256_fd(fd, ex->sha);
}

void existing_read_mem(const void *buf, size_t size, struct existing *ex)
{
	struct lidia_reader *r;

	memset(ex, 0, sizeof(*ex));
	ex->level = LEVEL_NONE;
	if (lidia_reader_open_mem(&r, buf, size, &LIDIA_READER_OPTS(.check_crc = true)))
		return;
	existing_from(r, ex);
	lidia_reader_close(r);
	sha256_hex(buf, size, ex->sha);
}

enum level stats_level(const struct lidia_extract_stats *st)
{
	return st->inline_ranges ? LEVEL_INLINES : st->line_rows ? LEVEL_LINES : LEVEL_SYMBOLS;
}

enum level counts_level(const struct counts *c)
{
	if (!c->functions && !c->inline_ranges)
		return LEVEL_NONE; /* holds nothing: never enough */
	return c->inline_ranges ? LEVEL_INLINES : c->line_rows ? LEVEL_LINES : LEVEL_SYMBOLS;
}

bool keep_enough(enum level existing, enum level inputs)
{
	return existing != LEVEL_NONE && existing >= inputs;
}

void manifest_object(FILE *f, const char *where, const char *key)
{
	char *object = NULL;

	json_field(f, "key", key);
	if (strcmp(key, "-") && asprintf(&object, "%s/%s", where, key) < 0)
		object = NULL;
	json_field(f, "object", object ? object : key); /* out of memory: the key at least */
	free(object);
}

void manifest_holds(FILE *f, enum level level, const struct counts *c, uint64_t size,
		    const char *sha)
{
	fprintf(f,
		",\"holds\":{\"symbols\":true,\"lines\":%s,\"inlines\":%s},"
		"\"counts\":{\"functions\":%zu,\"inline_ranges\":%zu,\"line_rows\":%zu},"
		"\"size\":%" PRIu64,
		level >= LEVEL_LINES ? "true" : "false", level >= LEVEL_INLINES ? "true" : "false",
		c->functions, c->inline_ranges, c->line_rows, size);
	if (sha && sha[0])
		fprintf(f, ",\"sha256\":\"%s\"", sha);
}
