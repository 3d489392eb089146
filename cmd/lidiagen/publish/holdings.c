/* SPDX-License-Identifier: Apache-2.0 */
/* What a lidia file holds (holdings.h), read with the library's reader, CRCs checked. */
#include <inttypes.h>
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

void counts_read(const struct lidia_reader *r, struct counts *c)
{
	struct lidia_file_info fi;

	memset(c, 0, sizeof(*c));
	lidia_reader_info(r, &fi);
	c->line_rows = (size_t)fi.lines.count;
	for (size_t i = 0; i < lidia_reader_count(r); i++) {
		struct lidia_range_info ri;

		if (lidia_reader_range(r, i, &ri))
			continue;
		if (ri.depth)
			c->inline_ranges++;
		else
			c->functions++;
	}
}

/* Counts, level and size from an open reader. */
static void existing_from(struct lidia_reader *r, struct existing *ex)
{
	struct lidia_file_info fi;

	lidia_reader_info(r, &fi);
	counts_read(r, &ex->counts);
	ex->valid = true;
	ex->level = counts_level(&ex->counts);
	ex->size = fi.file_size;
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

void existing_read_fd(int fd, bool want_sha, struct existing *ex)
{
	struct lidia_reader *r;
	struct stat st;

	memset(ex, 0, sizeof(*ex));
	ex->level = LEVEL_NONE;
	/* Its identity first: a file renamed over it after this is told apart. */
	if (fd < 0 || fstat(fd, &st))
		return;
	identity_of(&st, ex);
	if (!S_ISREG(st.st_mode) ||
	    lidia_reader_open_fd(&r, fd, &LIDIA_READER_OPTS(.check_crc = true)))
		return;
	existing_from(r, ex);
	lidia_reader_close(r);
	if (want_sha)
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
