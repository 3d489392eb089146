/* SPDX-License-Identifier: Apache-2.0 */
/*
 * range_list_next() (lib/dwarf/range_lists.c) and die_ranges() against
 * libdw's own dwarf_ranges(): for every DIE with DW_AT_ranges in programs
 * built here by cc -O2 (DWARF 5's .debug_rnglists and DWARF 4's
 * .debug_ranges; functions split into hot and cold parts and inlined
 * bodies in pieces), ours must give libdw's ranges one for one, and read
 * GCC's lists itself (never leaving them to libdw). Then made-up lists:
 * each entry kind ours reads, and what it must leave to libdw (an address
 * index, a truncated entry, a position past the section).
 */
#include <dwarf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdw.h>

#include "abbrevs.h"
#include "die_reader.h"
#include "range_lists.h"
#include "built_elf.h"
#include "our_units.h"
#include "unit.h"

/* Cold paths (split off by -freorder-blocks-and-partition) inside inlined bodies. */
static const char prog_c[] =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"__attribute__((cold, noinline)) void fail(const char *m) { fputs(m, stderr); abort(); }\n"
	"static inline int check(int x) { if (__builtin_expect(x < 0, 0)) fail(\"neg\"); "
	"return x * 3; }\n"
	"static inline int step(int x) { int s = 0; for (int i = 0; i < x; i++) { "
	"if (__builtin_expect(i == 977, 0)) { printf(\"odd %d\\n\", i); s -= check(i); } "
	"s += check(i) ^ x; } return s; }\n"
	"__attribute__((noinline)) int work(int x) { int t = step(x) + step(x + 1); "
	"if (__builtin_expect(t == 12345, 0)) { fail(\"t\"); } return t + check(x); }\n"
	"int main(int argc, char **argv) { (void)argv; return work(argc) & 1; }\n";

static char dir[] = "/tmp/lidia-test-range-lists.XXXXXX";

struct tally {
	size_t lists, ranges, differ, left_to_libdw;
};

/* d's ranges by dwarf_ranges() and by ours (die_ranges() and range_list_next() alone). */
static void compare(struct die_reader *r, struct die_attrs *d, struct tally *t)
{
	Dwarf_Addr b1, l1, h1, b2, l2, h2, b3, l3, h3;
	ptrdiff_t o1 = 0, o2 = 0, o3, resume;
	Dwarf_Attribute a;
	Dwarf_Word start;

	if (!d->ranges.form || !dwarf_attr(&d->die, DW_AT_ranges, &a) ||
	    dwarf_formudata(&a, &start) != 0)
		return;
	t->lists++;
	/* Ours alone, from the list's start with the unit's base (GCC: the unit's low_pc). */
	if (dwarf_lowpc(&r->cudie, &b3) != 0)
		b3 = 0;
	o3 = (ptrdiff_t)start;
	for (;;) {
		o1 = dwarf_ranges(&d->die, o1, &b1, &l1, &h1);
		o2 = die_ranges(r, d, o2, &b2, &l2, &h2);
		o3 = range_list_next(r->secs, r->hdr.version, r->hdr.address_size, o3, &b3, &l3,
				     &h3, &resume);
		if (o3 == RANGE_LIST_LIBDW) {
			t->left_to_libdw++;
			return;
		}
		if (o1 != o2 || o1 != o3 ||
		    (o1 > 0 && (l1 != l2 || h1 != h2 || l1 != l3 || h1 != h3 || b1 != b3))) {
			if (!t->differ++)
				printf("# differ at DIE %#llx: libdw %td [%#llx, %#llx) ours %td "
				       "%td\n",
				       (unsigned long long)dwarf_dieoffset(&d->die), o1,
				       (unsigned long long)l1, (unsigned long long)h1, o2, o3);
			return;
		}
		if (o1 <= 0)
			return;
		t->ranges++;
	}
}

static void visit_die(struct die_reader *r, struct die_attrs *d, void *ctx)
{
	compare(r, d, ctx);
}

static bool tally_file(const char *path, struct tally *t)
{
	int fd = open(path, O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	struct dwarf_sections s = { 0 };
	bool ok = dw != NULL;

	if (ok) {
		Elf *elf = dwarf_getelf(dw);

		built_section(elf, ".debug_info", &s.info, &s.info_size);
		built_section(elf, ".debug_abbrev", &s.abbrev, &s.abbrev_size);
		built_section(elf, ".debug_ranges", &s.ranges, &s.ranges_size);
		built_section(elf, ".debug_rnglists", &s.rnglists, &s.rnglists_size);
	}
	ok = ok && our_units(dw, &s, visit_die, t);
	if (dw)
		dwarf_end(dw);
	if (fd >= 0)
		close(fd);
	return ok;
}

static void check_program(const char *name, const char *flags)
{
	char cmd[512], path[512];
	struct tally t = { 0 };

	snprintf(cmd, sizeof(cmd), "cc -O2 %s -o %s prog.c", flags, name);
	CHECK(built_run(dir, cmd), "%s built", name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK(tally_file(path, &t), "%s: every unit read by our reader", name);
	CHECK(t.lists > 0 && t.ranges > t.lists, "%s: range lists met (%zu lists, %zu ranges)",
	      name, t.lists, t.ranges);
	CHECK(!t.differ, "%s: ours and libdw's ranges agree (%zu differ)", name, t.differ);
	CHECK(!t.left_to_libdw, "%s: GCC's lists read by ours (%zu left to libdw)", name,
	      t.left_to_libdw);
}

/* One made-up list in a section of its own: ours from off, as a DWARF version v unit. */
static ptrdiff_t made_up(const unsigned char *bytes, size_t size, unsigned v, ptrdiff_t off,
			 Dwarf_Addr *base, Dwarf_Addr *lo, Dwarf_Addr *hi, ptrdiff_t *resume)
{
	struct dwarf_sections s = { 0 };

	if (v >= 5) {
		s.rnglists = bytes;
		s.rnglists_size = size;
	} else {
		s.ranges = bytes;
		s.ranges_size = size;
	}
	return range_list_next(&s, v, 8, off, base, lo, hi, resume);
}

static void check_made_up(void)
{
	/* base_address 0x1000; offset_pair [0x10, 0x20); start_length 0x5000 +0x8; end. */
	static const unsigned char v5[] = { DW_RLE_base_address,
					    0x00,
					    0x10,
					    0,
					    0,
					    0,
					    0,
					    0,
					    0,
					    DW_RLE_offset_pair,
					    0x10,
					    0x20,
					    DW_RLE_start_length,
					    0x00,
					    0x50,
					    0,
					    0,
					    0,
					    0,
					    0,
					    0,
					    0x08,
					    DW_RLE_end_of_list };
	static const unsigned char startx[] = { DW_RLE_startx_length, 0x01, 0x04 };
	static const unsigned char cut[] = { DW_RLE_offset_pair, 0x90 };
	/* DWARF 4: a base selection (all ones, then 0x2000), a pair, the end. */
	unsigned char v4[48];
	Dwarf_Addr base = 0, lo = 0, hi = 0;
	ptrdiff_t resume, o;

	o = made_up(v5, sizeof(v5), 5, 0, &base, &lo, &hi, &resume);
	CHECK(o == 12 && base == 0x1000 && lo == 0x1010 && hi == 0x1020,
	      "v5: a base address, then an offset pair (%td, %#llx, [%#llx, %#llx))", o,
	      (unsigned long long)base, (unsigned long long)lo, (unsigned long long)hi);
	o = made_up(v5, sizeof(v5), 5, o, &base, &lo, &hi, &resume);
	CHECK(o == 22 && lo == 0x5000 && hi == 0x5008, "v5: a start and a length");
	CHECK(made_up(v5, sizeof(v5), 5, o, &base, &lo, &hi, &resume) == 0,
	      "v5: the end of the list");
	CHECK(made_up(v5, sizeof(v5), 5, (ptrdiff_t)sizeof(v5), &base, &lo, &hi, &resume) ==
		      RANGE_LIST_LIBDW,
	      "a position past the section: libdw's");
	CHECK(made_up(startx, sizeof(startx), 5, 0, &base, &lo, &hi, &resume) == RANGE_LIST_LIBDW &&
		      resume == 0,
	      "an address index: libdw's, from where it begins");
	base = 0x1000;
	CHECK(made_up(v5, 10, 5, 0, &base, &lo, &hi, &resume) == RANGE_LIST_LIBDW && resume == 9 &&
		      base == 0x1000,
	      "a list cut short after its base: libdw's, from the entry cut, with the base read");
	CHECK(made_up(cut, sizeof(cut), 5, 0, &base, &lo, &hi, &resume) == RANGE_LIST_LIBDW,
	      "a LEB128 cut short: libdw's");

	memset(v4, 0, sizeof(v4));
	memset(v4, 0xff, 8);
	v4[9] = 0x20; /* base 0x2000 */
	v4[16] = 0x04;
	v4[24] = 0x08; /* [0x2004, 0x2008) */
	base = 0;
	o = made_up(v4, sizeof(v4), 4, 0, &base, &lo, &hi, &resume);
	CHECK(o == 32 && base == 0x2000 && lo == 0x2004 && hi == 0x2008,
	      "v4: a base selection, then a pair");
	CHECK(made_up(v4, sizeof(v4), 4, o, &base, &lo, &hi, &resume) == 0, "v4: the end");
	memset(v4 + 8, 0xff, 8);
	CHECK(made_up(v4, sizeof(v4), 4, 0, &base, &lo, &hi, &resume) == RANGE_LIST_LIBDW,
	      "v4: a base selection of all ones: libdw's error");
	CHECK(made_up(v4, 40, 4, 32, &base, &lo, &hi, &resume) == RANGE_LIST_LIBDW,
	      "v4: a pair cut short: libdw's");
}

/*
 * Random bytes as lists, from every position: ours reads within the
 * section (ASan's builds check it) and moves on at each range, so that a
 * caller's loop ends; or it gives the list's end, or libdw's turn.
 */
static void check_random(void)
{
	unsigned char buf[64];
	uint64_t state = 0x9e3779b97f4a7c15ull;
	size_t bad = 0, ranges = 0, ends = 0;

	for (int round = 0; round < 4000; round++) {
		size_t size = 1 + unit_next_random(&state) % sizeof(buf);
		unsigned v = round % 2 ? 5 : 4;

		for (size_t i = 0; i < size; i++)
			buf[i] = (unsigned char)(unit_next_random(&state) % 9 < 6
							 ? unit_next_random(&state) % 8
							 : unit_next_random(&state));
		for (size_t start = 0; start < size; start++) {
			Dwarf_Addr base = 0, lo, hi;
			ptrdiff_t off = (ptrdiff_t)start, next, resume;

			for (int step = 0; step < 64; step++) {
				next = made_up(buf, size, v, off, &base, &lo, &hi, &resume);
				if (next == RANGE_LIST_LIBDW) {
					bad += resume < off || (size_t)resume > size;
					break;
				}
				if (next == 0) {
					ends++;
					break;
				}
				ranges++;
				bad += next <= off || (size_t)next > size;
				off = next;
			}
		}
	}
	CHECK(!bad && ranges && ends,
	      "random lists: each range moves on within the section (%zu ranges, %zu ends, %zu "
	      "bad)",
	      ranges, ends, bad);
}

int main(void)
{
	char cmd[256];

	if (!mkdtemp(dir)) {
		printf("not ok - scratch directory\n");
		return 1;
	}
	elf_version(EV_CURRENT);
	check_made_up();
	check_random();
	snprintf(cmd, sizeof(cmd), "%s/prog.c", dir);
	{
		FILE *f = fopen(cmd, "w");

		CHECK(f && fputs(prog_c, f) >= 0 && !fclose(f), "source written");
	}
	check_program("v5", "-gdwarf-5");
	check_program("v4", "-gdwarf-4");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return unit_exit();
}
