/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lidia_builder_map_prefix() and lidia_extract_opts.prefix_map: a builder
 * given rules and the names as compiled writes the very bytes of a builder
 * given no rule and the names mapped by hand (file names and call sites
 * mapped, the first matching rule winning, function names and unmatched
 * names kept, each name stored once; a mapped name met again as compiled
 * mapped by its own rule); the rules' contract (before the first
 * range only, OLD not empty); prefix_map entries that are not OLD=NEW and
 * non-zero reserved bytes refused with LIDIA_E_INVAL.
 */
#include <stdlib.h>
#include <string.h>

#include "lidia.h"
#include "unit.h"

/* The file a builder writes with rules[] (pairs, NULL-ended) over ranges in[]. */
static void *build(const char *const *rules, const struct lidia_range_desc *in, size_t n,
		   size_t *len)
{
	struct lidia_builder *b;
	void *buf = NULL;

	if (lidia_builder_new(&b))
		abort();
	for (size_t i = 0; rules && rules[i]; i += 2)
		if (lidia_builder_map_prefix(b, rules[i], rules[i + 1]))
			abort();
	for (size_t i = 0; i < n; i++)
		if (lidia_builder_add(b, &in[i]))
			abort();
	if (lidia_builder_finalize(b) || lidia_builder_write_mem(b, &buf, len))
		abort();
	lidia_builder_free(b);
	return buf;
}

#define R(v, fn, f, cf)                                                                            \
	{                                                                                          \
		.va = v, .length = 8, .func = fn, .file = f, .call_file = cf, .call_line = 3       \
	}

static void same_bytes(void)
{
	/* 200 ranges naming few files: each name mapped once, stored once. */
	struct lidia_range_desc raw[200], want[200];
	static const char *const rules[] = { "/b/src/", "", "/b/", "/out/", "/b", "/never/", NULL };
	size_t la, lb;
	void *a, *b;

	for (int i = 0; i < 200; i++) {
		static const struct lidia_range_desc r[4] = {
			R(0, "/b/src/fn", "/b/src/a.c", "/b/src/a.h"),
			R(0, "f", "/b/gen/x.c", "/usr/include/y.h"),
			R(0, "g", "/bx/z.c", NULL),
			R(0, "h", "/elsewhere/b/src/q.c", "/b/src/"),
		};
		static const struct lidia_range_desc m[4] = {
			R(0, "/b/src/fn", "a.c", "a.h"),
			R(0, "f", "/out/gen/x.c", "/usr/include/y.h"),
			R(0, "g", "/never/x/z.c", NULL),
			R(0, "h", "/elsewhere/b/src/q.c", ""),
		};

		raw[i] = r[i % 4];
		want[i] = m[i % 4];
		raw[i].va = want[i].va = 0x1000 + 16 * (uint64_t)i;
	}
	a = build(rules, raw, 200, &la);
	b = build(NULL, want, 200, &lb);
	CHECK(la == lb && !memcmp(a, b, la),
	      "rules over names as compiled: the bytes of the names mapped by hand (%zu bytes)",
	      la);
	free(a);
	free(b);
}

/*
 * A name mapped, then the same name as compiled in the next range: that one
 * is mapped too (by the second rule), not taken for the name just stored.
 */
static void mapped_then_given(void)
{
	static const char *const rules[] = { "/a/", "/b/", "/b/", "/c/", NULL };
	const struct lidia_range_desc raw[] = {
		R(0x1000, "f", "/a/x.c", "/a/x.h"),
		R(0x1010, "f", "/b/x.c", "/b/x.h"),
		R(0x1020, "g", "/b/x.c", "/b/x.h"),
	};
	const struct lidia_range_desc want[] = {
		R(0x1000, "f", "/b/x.c", "/b/x.h"),
		R(0x1010, "f", "/c/x.c", "/c/x.h"),
		R(0x1020, "g", "/c/x.c", "/c/x.h"),
	};
	size_t la, lb;
	void *a = build(rules, raw, 3, &la), *b = build(NULL, want, 3, &lb);

	CHECK(la == lb && !memcmp(a, b, la),
	      "a name mapped, then that name as compiled: mapped again, by its own rule");
	free(a);
	free(b);
}

static void contract(void)
{
	struct lidia_range_desc r = R(0x1000, "f", "/b/a.c", NULL);
	struct lidia_builder *b;

	if (lidia_builder_new(&b))
		abort();
	CHECK(lidia_builder_map_prefix(b, "", "x") == LIDIA_E_INVAL, "an empty OLD: LIDIA_E_INVAL");
	CHECK(lidia_builder_map_prefix(b, NULL, "x") == LIDIA_E_INVAL, "a NULL OLD: LIDIA_E_INVAL");
	CHECK(lidia_builder_map_prefix(b, "/b/", NULL) == LIDIA_E_INVAL,
	      "a NULL NEW: LIDIA_E_INVAL");
	CHECK(lidia_builder_map_prefix(b, "/b/", "") == 0, "a rule before any range");
	CHECK(lidia_builder_add(b, &r) == 0, "a range after it");
	CHECK(lidia_builder_map_prefix(b, "/c/", "") == LIDIA_E_STATE,
	      "a rule after a range: LIDIA_E_STATE (that range's names would not be mapped)");
	lidia_builder_free(b);
}

/* lidia_extract with opts on this test's own executable: its error. */
static int extract_self(const struct lidia_extract_opts *opts)
{
	struct lidia_elf *elf;
	struct lidia_builder *b;
	int err;

	if (lidia_elf_open(&elf, "/proc/self/exe") || lidia_builder_new(&b))
		abort();
	err = lidia_extract(b, &elf, 1, opts, NULL);
	lidia_builder_free(b);
	lidia_elf_close(elf);
	return err;
}

static void extract_opts(void)
{
	static const char *const good[] = { "/=", NULL }, *const no_eq[] = { "/b", NULL },
				 *const empty_old[] = { "=/x", NULL };
	struct lidia_extract_opts o = LIDIA_EXTRACT_OPTS(.no_dwarf = true, .prefix_map = good);

	CHECK(extract_self(&o) == 0, "extract: prefix_map { \"/=\" } is accepted");
	o.prefix_map = no_eq;
	CHECK(extract_self(&o) == LIDIA_E_INVAL, "extract: prefix_map without '=': LIDIA_E_INVAL");
	o.prefix_map = empty_old;
	CHECK(extract_self(&o) == LIDIA_E_INVAL,
	      "extract: prefix_map with an empty OLD: LIDIA_E_INVAL");
	o.prefix_map = NULL;
	o.reserved[3] = 1;
	CHECK(extract_self(&o) == LIDIA_E_INVAL,
	      "extract: a non-zero reserved byte (before prefix_map): LIDIA_E_INVAL");
	o.reserved[3] = 0;
	o.reserved_end[1] = 1;
	CHECK(extract_self(&o) == LIDIA_E_INVAL,
	      "extract: a non-zero reserved_end byte (before dwz_dir): LIDIA_E_INVAL");
	/* A caller built before dwz_dir: those bytes past its struct are what it checks. */
	o.sz = offsetof(struct lidia_extract_opts, dwz_dir);
	CHECK(extract_self(&o) == LIDIA_E_INVAL,
	      "extract: a caller's struct ending before dwz_dir, a non-zero byte at its end: "
	      "LIDIA_E_INVAL");
	o.reserved_end[1] = 0;
	CHECK(extract_self(&o) == 0, "extract: a caller's struct ending before dwz_dir: accepted");
}

int main(void)
{
	same_bytes();
	mapped_then_given();
	contract();
	extract_opts();
	return unit_exit();
}
