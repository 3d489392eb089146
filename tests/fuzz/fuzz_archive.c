/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: the archive walk (lidia_archive_walk_mem) on arbitrary bytes,
 * with small limits (a member of 1 MiB, 8 MiB per archive, 3 levels of
 * nesting) so that bombs are cut short. Built with libFuzzer by `make fuzz`
 * (build/fuzz/fuzz_archive) and with tests/fuzz/replay.c by `make test`,
 * which replays tests/fuzz/corpus/archive/ (made by
 * tests/lib/batch_fuzz_corpus.py).
 *
 * Every ELF member is opened as the batch opens it (lidia_elf_open_mem, its
 * build ID and what it holds), then freed. Besides "never crash", it asserts
 * what the API promises: a member is never larger than max_member, the
 * members of one walk add up to at most max_total, a path is "name!member"
 * (or "name" itself for a compressed ELF file) and a member name never holds
 * a control character, every problem is counted, the want callback is asked
 * before a member is handed over, and LIDIA_E_NOT_ELF (no archive, no ELF
 * inside) comes with nothing handed over and nothing said. Each input is
 * walked twice, the second time through elf_member and want_member: a
 * member handed over has the position last asked about, 1 to 4 levels
 * deep, and each member's position comes after the one before it (no two
 * members share one).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lidia.h"

#define NAME "in"

#define MAX_MEMBER (1u << 20)
#define MAX_TOTAL (8u << 20)

struct ctx {
	uint64_t total;
	unsigned problems, elves;
	char last_wanted[1024];
	uint32_t wanted_at[4], given_at[4]; /* the position last asked about, last handed over */
	unsigned wanted_depth, given_depth;
};

static volatile uint64_t sink;

static void check_name(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			abort(); /* member names are cleaned for messages */
}

static int on_elf(void *p, const char *path, const char *member, unsigned char *data, size_t size)
{
	struct ctx *c = p;
	struct lidia_elf *e = NULL;
	struct lidia_elf_info info;
	char id[130];

	if (!data || size > MAX_MEMBER)
		abort();
	c->total += size;
	if (c->total > MAX_TOTAL)
		abort();
	if (!member || (strcmp(path, NAME) && strncmp(path, NAME "!", sizeof(NAME))))
		abort();
	check_name(path);
	/* The member handed over is the one last asked about, or the input itself. */
	if (strcmp(path, NAME) ? strcmp(member, c->last_wanted) : strcmp(member, NAME))
		abort();
	if (lidia_elf_open_mem(&e, data, size, path) == 0) {
		if (!e)
			abort();
		if (lidia_elf_build_id(e, id, sizeof(id)) == 0)
			sink += strlen(id);
		lidia_elf_info(e, &info);
		sink += info.debug_file + info.has_dwarf + info.has_go + info.has_symtab +
			strlen(info.go_build_id);
		lidia_elf_close(e);
	} else if (e) {
		abort(); /* a failed open leaves *out NULL */
	}
	c->elves++;
	free(data);
	return 0;
}

static bool on_want(void *p, const char *member)
{
	struct ctx *c = p;

	check_name(member);
	snprintf(c->last_wanted, sizeof(c->last_wanted), "%s", member);
	/* Leave some members out, so that skipping is exercised as well. */
	return strlen(member) % 5 != 4;
}

/* Positions in walk order: lexicographic, a level's entries counted up. */
static int cmp_at(const uint32_t *a, unsigned na, const uint32_t *b, unsigned nb)
{
	for (unsigned i = 0; i < na && i < nb; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return na < nb ? -1 : na > nb;
}

static bool on_want_member(void *p, const struct lidia_archive_member *m)
{
	struct ctx *c = p;

	if (!m->depth || m->depth > 4)
		abort();
	memcpy(c->wanted_at, m->at, m->depth * sizeof(*m->at));
	c->wanted_depth = m->depth;
	return on_want(p, m->name);
}

static int on_elf_member(void *p, const struct lidia_archive_member *m, unsigned char *data,
			 size_t size)
{
	struct ctx *c = p;

	if (!m->depth || m->depth > 4)
		abort();
	/*
	 * The member asked about, or a compressed ELF file: the one entry (0)
	 * of the input itself, or of the member asked about.
	 */
	if (strcmp(m->path, NAME) ? cmp_at(m->at, m->depth, c->wanted_at, c->wanted_depth) &&
					    (m->depth != c->wanted_depth + 1 ||
					     m->at[m->depth - 1] != 0 ||
					     cmp_at(m->at, c->wanted_depth, c->wanted_at,
						    c->wanted_depth))
				  : m->depth != 1 || m->at[0] != 0)
		abort();
	if (c->given_depth && cmp_at(c->given_at, c->given_depth, m->at, m->depth) >= 0)
		abort();
	memcpy(c->given_at, m->at, m->depth * sizeof(*m->at));
	c->given_depth = m->depth;
	return on_elf(p, m->path, m->name, data, size);
}

static void on_problem(void *p, const char *path, const char *msg)
{
	struct ctx *c = p;

	if (!path || !msg || strncmp(path, NAME, sizeof(NAME) - 1))
		abort();
	check_name(path);
	sink += strlen(msg);
	c->problems++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One walk, through the old callbacks or the ones with positions. */
static void walk(const uint8_t *data, size_t size, bool positions)
{
	struct ctx c = { 0 };
	struct lidia_archive_opts opts = LIDIA_ARCHIVE_OPTS(.max_member = MAX_MEMBER,
							    .max_total = MAX_TOTAL, .max_depth = 3,
							    .elf = on_elf, .want = on_want,
							    .problem = on_problem, .ctx = &c);
	unsigned problems = 0;
	int err;

	if (positions) {
		opts.elf = NULL;
		opts.want = NULL;
		opts.elf_member = on_elf_member;
		opts.want_member = on_want_member;
	}
	err = lidia_archive_walk_mem(data, size, NAME, &opts, &problems);
	if (err > 0 || problems != c.problems)
		abort();
	if (err == LIDIA_E_NOT_ELF && (c.elves || c.problems))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* What the batch sniffs first; the walk itself must cope with anything. */
	sink += lidia_archive_magic(data, size);
	walk(data, size, false);
	walk(data, size, true);
	return 0;
}
