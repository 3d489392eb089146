/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unit_scan (lib/dwarf/unit_scan.c) on units assembled here byte by byte:
 * what it reads of a partial unit's DIE (DW_AT_stmt_list, DW_AT_comp_dir),
 * whether a DIE with an address range is seen at any depth, DWARF 4 and 5
 * headers, one read per abbreviation table however many units share it, and
 * refusals (false, so that libdw reads the unit) for forms and shapes it does
 * not handle. Then every truncation and every single-byte change of a unit:
 * never a read out of bounds (the sanitizer builds run this too).
 */
#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "unit_scan.h"

/*
 * The abbreviations: 1, a partial unit (children; stmt_list, comp_dir as a
 * string); 2, a declaration (name, decl_file, an implicit constant); 3, a
 * subprogram with code (low_pc, high_pc); 4, a lexical block (children).
 */
static const unsigned char abbrev[] = {
	1,
	DW_TAG_partial_unit,
	1,
	DW_AT_stmt_list,
	DW_FORM_sec_offset,
	DW_AT_comp_dir,
	DW_FORM_string,
	0,
	0,
	2,
	DW_TAG_subprogram,
	0,
	DW_AT_name,
	DW_FORM_string,
	DW_AT_decl_file,
	DW_FORM_data1,
	DW_AT_decl_line,
	DW_FORM_implicit_const,
	0x7f,
	DW_AT_declaration,
	DW_FORM_flag_present,
	0,
	0,
	3,
	DW_TAG_subprogram,
	0,
	DW_AT_name,
	DW_FORM_string,
	DW_AT_low_pc,
	DW_FORM_addr,
	DW_AT_high_pc,
	DW_FORM_data8,
	0,
	0,
	4,
	DW_TAG_lexical_block,
	1,
	DW_AT_sibling,
	DW_FORM_ref4,
	0,
	0,
	0,
};

/* A unit: header for version (4 or 5), then body; returns its size. */
static size_t unit(unsigned char *out, unsigned version, const unsigned char *body, size_t n)
{
	size_t h = version >= 5 ? 12 : 11;
	uint32_t len = (uint32_t)(h - 4 + n);

	memcpy(out, &len, 4); /* the hosts that run the tests are little-endian, as the reader */
	out[4] = (unsigned char)version;
	out[5] = 0;
	if (version >= 5) {
		out[6] = DW_UT_partial;
		out[7] = 8;
		memset(out + 8, 0, 4); /* abbrev offset 0 */
	} else {
		memset(out + 6, 0, 4);
		out[10] = 8;
	}
	memcpy(out + h, body, n);
	return h + n;
}

/* The partial unit DIE: stmt_list 0x1234, comp_dir "/src". */
#define ROOT 1, 0x34, 0x12, 0, 0, '/', 's', 'r', 'c', 0
/* A declaration "f". */
#define DECL 2, 'f', 0, 1
/* A subprogram "g" with code at 0x1000, 0x10 long. */
#define CODE 3, 'g', 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0
/* A lexical block (its sibling reference is not followed). */
#define BLOCK 4, 0, 0, 0, 0

static bool scan_with(const unsigned char *info, size_t size, const unsigned char *abbrevs,
		      size_t abbrevs_size, struct unit_facts *f, struct abbrev_cache *c)
{
	struct dwarf_sections s = {
		.info = info, .info_size = size, .abbrev = abbrevs, .abbrev_size = abbrevs_size
	};

	return unit_scan(c, &s, 0, f);
}

static bool scan(const unsigned char *info, size_t size, struct unit_facts *f,
		 struct abbrev_cache *c)
{
	return scan_with(info, size, abbrev, sizeof(abbrev), f, c);
}

/* A copy of n bytes in a heap block of exactly that size, where a sanitizer sees past the end. */
static unsigned char *heap_copy(const unsigned char *p, size_t n)
{
	unsigned char *q = malloc(n ? n : 1);

	if (!q)
		abort();
	memcpy(q, p, n);
	return q;
}

static void facts(void)
{
	static const unsigned char body[] = { ROOT, DECL, DECL, 0 };
	unsigned char info[64];
	struct abbrev_cache c = { 0 };
	struct unit_facts f;

	for (unsigned v = 4; v <= 5; v++) {
		size_t n = unit(info, v, body, sizeof(body));
		bool ok = scan(info, n, &f, &c);

		CHECK(ok && !f.code, "DWARF %u: a unit of declarations has no code", v);
		CHECK(ok && f.has_lines && f.line_offset == 0x1234,
		      "DWARF %u: its DW_AT_stmt_list is read", v);
		CHECK(ok && f.comp_dir && !strcmp(f.comp_dir, "/src"),
		      "DWARF %u: its DW_AT_comp_dir is read", v);
		CHECK(ok && f.address_size == 8, "DWARF %u: its address size is the header's", v);
	}
	CHECK(c.ntables == 1, "two units with the same abbreviations read the table once (%zu)",
	      c.ntables);
	abbrev_cache_release(&c);
}

static void code(void)
{
	static const unsigned char top[] = { ROOT, DECL, CODE, 0 };
	static const unsigned char nested[] = { ROOT, BLOCK, BLOCK, DECL, CODE, 0, 0, 0 };
	static const unsigned char after[] = { ROOT, BLOCK, DECL, 0, DECL, 0 };
	unsigned char info[128];
	struct abbrev_cache c = { 0 };
	struct unit_facts f;
	size_t n;

	n = unit(info, 5, top, sizeof(top));
	CHECK(scan(info, n, &f, &c) && f.code, "a subprogram with DW_AT_low_pc is code");
	n = unit(info, 5, nested, sizeof(nested));
	CHECK(scan(info, n, &f, &c) && f.code, "so is one nested in lexical blocks");
	n = unit(info, 5, after, sizeof(after));
	CHECK(scan(info, n, &f, &c) && !f.code, "children lists are followed to the unit's end");
	abbrev_cache_release(&c);
}

static void refusals(void)
{
	static const unsigned char open[] = { ROOT, DECL, DECL };
	static const unsigned char unknown[] = { ROOT, 9, 0 };
	static const unsigned char extra_close[] = { ROOT, 0, 0 };
	unsigned char info[64];
	struct abbrev_cache c = { 0 };
	struct unit_facts f;
	size_t n;

	n = unit(info, 5, open, sizeof(open));
	CHECK(!scan(info, n, &f, &c), "a children list left open is refused");
	n = unit(info, 5, unknown, sizeof(unknown));
	CHECK(!scan(info, n, &f, &c), "an abbreviation code the table lacks is refused");
	n = unit(info, 5, extra_close, sizeof(extra_close));
	CHECK(scan(info, n, &f, &c) && !f.code,
	      "padding after the unit DIE's children is not read");
	info[6] = DW_UT_type;
	CHECK(!scan(info, n, &f, &c), "a type unit is not read here (its header is longer)");
	n = unit(info, 3, extra_close, sizeof(extra_close));
	info[4] = 1;
	CHECK(!scan(info, n, &f, &c), "DWARF 1 is refused");
	CHECK(!scan(info, 3, &f, &c), "a header cut short is refused");
	abbrev_cache_release(&c);
}

/* What libdw would read otherwise: a code defined twice, a children flag not 0 or 1. */
static void tables_refused(void)
{
	static const unsigned char twice[] = { 1,
					       DW_TAG_partial_unit,
					       1,
					       DW_AT_stmt_list,
					       DW_FORM_sec_offset,
					       DW_AT_comp_dir,
					       DW_FORM_string,
					       0,
					       0,
					       1,
					       DW_TAG_partial_unit,
					       0,
					       0,
					       0,
					       0 };
	static const unsigned char body[] = { ROOT, 0 };
	unsigned char info[64], flag[sizeof(abbrev)];
	struct abbrev_cache c = { 0 };
	struct unit_facts f;
	size_t n = unit(info, 5, body, sizeof(body));

	CHECK(!scan_with(info, n, twice, sizeof(twice), &f, &c),
	      "a table defining a code twice is refused (libdw takes the first)");
	abbrev_cache_release(&c);
	memcpy(flag, abbrev, sizeof(abbrev));
	flag[2] = 2;
	CHECK(!scan_with(info, n, flag, sizeof(flag), &f, &c),
	      "a children flag of 2 is refused (libdw reads it as no children)");
	abbrev_cache_release(&c);
}

/* Units of as many tables as the cache keeps, and more: it forgets, it does not grow. */
static void bounded(void)
{
	enum { TABLES = 2 * ABBREVS_KEPT / 4 + 3 };
	static const unsigned char body[] = { ROOT, DECL, 0 };
	unsigned char *tables = malloc(TABLES * sizeof(abbrev)), info[64];
	struct abbrev_cache c = { 0 };
	size_t most = 0, read = 0;
	struct unit_facts f;
	size_t n = unit(info, 4, body, sizeof(body));

	if (!tables)
		abort();
	for (size_t t = 0; t < TABLES; t++) {
		uint32_t off = (uint32_t)(t * sizeof(abbrev));

		memcpy(tables + off, abbrev, sizeof(abbrev));
		memcpy(info + 6, &off, 4); /* the unit's abbreviation offset (DWARF 4) */
		read += scan_with(info, n, tables, TABLES * sizeof(abbrev), &f, &c) && f.has_lines;
		if (c.nabbrevs > most)
			most = c.nabbrevs;
	}
	CHECK(read == TABLES, "units of %d tables, each its own, read (%zu)", TABLES, read);
	CHECK(most <= ABBREVS_KEPT + 4,
	      "the cache holds at most %d abbreviations and a table (%zu)", ABBREVS_KEPT, most);
	abbrev_cache_release(&c);
	free(tables);
}

/*
 * Every truncation of a unit, and every byte of it or of its abbreviations
 * changed to a few values: false or true, never a fault.
 */
static void hostile(void)
{
	static const unsigned char body[] = { ROOT, BLOCK, DECL, BLOCK, DECL, 0, 0, DECL, CODE, 0 };
	static const unsigned char values[] = { 0, 1, 0x7f, 0x80, 0xff };
	unsigned char good[128], *info, *abbrevs;
	struct unit_facts f;
	size_t n = unit(good, 5, body, sizeof(body)), runs = 0;

	for (size_t len = 0; len <= n; len++, runs++) {
		struct abbrev_cache c = { 0 };

		info = heap_copy(good, len);
		scan(info, len, &f, &c);
		free(info);
		abbrev_cache_release(&c);
	}
	for (size_t i = 0; i < n + sizeof(abbrev); i++) {
		for (size_t v = 0; v < sizeof(values); v++, runs++) {
			struct abbrev_cache c = { 0 }; /* a table changed is a new table */

			info = heap_copy(good, n);
			abbrevs = heap_copy(abbrev, sizeof(abbrev));
			if (i < n)
				info[i] = values[v];
			else
				abbrevs[i - n] = values[v];
			scan_with(info, n, abbrevs, sizeof(abbrev), &f, &c);
			free(info);
			free(abbrevs);
			abbrev_cache_release(&c);
		}
	}
	CHECK(runs == n + 1 + (n + sizeof(abbrev)) * sizeof(values),
	      "%zu damaged units and tables read without a fault", runs);
}

int main(void)
{
	facts();
	code();
	refusals();
	tables_refused();
	bounded();
	hostile();
	return unit_exit();
}
