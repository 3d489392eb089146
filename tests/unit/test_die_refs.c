/* SPDX-License-Identifier: Apache-2.0 */
/*
 * die_ref_target() (lib/dwarf/die_reader.c) against libdw's own
 * dwarf_formref_die(): for every DW_AT_abstract_origin our reader finds in
 * real DWARF, where ours says the DIE it points to begins must be where
 * libdw finds it. Built here, every command printed: two programs of two
 * units sharing inline functions (cc -O2 -g), one rewritten by dwz alone
 * (the shared DIEs in partial units, reached by DW_FORM_ref_addr), the other
 * two by dwz -m (reached in the dwz file by DW_FORM_GNU_ref_alt); an inline
 * function of one unit only is reached within it (DW_FORM_ref4, or
 * DW_FORM_ref_udata where dwz rewrote it). Each form must be met and
 * agree; a reference ours does not read (another form) must be NULL.
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
#include "built_elf.h"
#include "our_units.h"
#include "unit.h"

static const char shared_h[] = "static inline int mix(int x) { int s = 0; for (int i = 0; i < x; "
			       "i++) s += i * x; return s; }\n"
			       "static inline int twice(int x) { return mix(x) + mix(x + 1); }\n";

static const char u1_c[] =
	"#include \"h.h\"\n"
	"int g(int);\n"
	"static inline int own(int x) { int p = 1; for (int i = 1; i < x; i++) p *= i + V; return "
	"p; }\n"
	"__attribute__((noinline)) int f(int x) { return twice(x) + own(x) + 1; }\n"
	"int main(int argc, char **argv) { return f(argc) + g(argc) + V; }\n";

static const char u2_c[] = "#include \"h.h\"\n"
			   "__attribute__((noinline)) int g(int x) { return twice(x) * 3; }\n";

static char dir[] = "/tmp/lidia-test-die-refs.XXXXXX";

/* What was compared, by the reference's form. */
struct tally {
	size_t in_unit, ref_addr, ref_alt, other, differ, null_other;
};

static bool write_file(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return (f = fopen(path, "w")) && fputs(text, f) >= 0 && !fclose(f);
}

static void compare(const struct die_reader *r, struct die_attrs *d, struct tally *t)
{
	const void *ours = die_ref_target(r, &d->origin);
	Dwarf_Die target;

	if (!dwarf_formref_die(&d->origin, &target))
		return;
	switch (d->origin.form) {
	case DW_FORM_ref1:
	case DW_FORM_ref2:
	case DW_FORM_ref4:
	case DW_FORM_ref8:
	case DW_FORM_ref_udata:
		t->in_unit++;
		break;
	case DW_FORM_ref_addr:
		t->ref_addr++;
		break;
	case DW_FORM_GNU_ref_alt:
		t->ref_alt++;
		break;
	default:
		t->other++;
		t->null_other += !ours;
		return;
	}
	t->differ += ours != target.addr;
}

static void visit_die(struct die_reader *r, struct die_attrs *d, void *ctx)
{
	if (d->origin.form)
		compare(r, d, ctx);
}

/* Every unit of path (with alt_path as its dwz file, or NULL) through our reader. */
static bool tally_file(const char *path, const char *alt_path, struct tally *t)
{
	int fd = open(path, O_RDONLY), alt_fd = alt_path ? open(alt_path, O_RDONLY) : -1;
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	Dwarf *alt = alt_fd >= 0 ? dwarf_begin(alt_fd, DWARF_C_READ) : NULL;
	struct dwarf_sections s = { 0 };
	bool ok = dw && (!alt_path || alt);

	if (ok) {
		if (alt)
			dwarf_setalt(dw, alt);
		built_section(dwarf_getelf(dw), ".debug_info", &s.info, &s.info_size);
		built_section(dwarf_getelf(dw), ".debug_abbrev", &s.abbrev, &s.abbrev_size);
		if (alt)
			built_section(dwarf_getelf(alt), ".debug_info", &s.alt_info,
				      &s.alt_info_size);
	}
	ok = ok && our_units(dw, &s, visit_die, t);
	if (dw)
		dwarf_end(dw);
	if (alt)
		dwarf_end(alt);
	if (fd >= 0)
		close(fd);
	if (alt_fd >= 0)
		close(alt_fd);
	return ok;
}

/* name's references (with alt_name as its dwz file, or NULL) compared; its tally. */
static struct tally check_file(const char *name, const char *alt_name)
{
	char path[512], alt_path[512];
	struct tally t = { 0 };

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(alt_path, sizeof(alt_path), "%s/%s", dir, alt_name ? alt_name : "");
	CHECK(tally_file(path, alt_name ? alt_path : NULL, &t), "%s: every unit read by our reader",
	      name);
	CHECK(!t.differ,
	      "%s: ours and libdw's agree on where each reference points (in the unit %zu, "
	      "ref_addr %zu, "
	      "GNU_ref_alt %zu; %zu differ)",
	      name, t.in_unit, t.ref_addr, t.ref_alt, t.differ);
	CHECK(t.null_other == t.other, "%s: other forms left to libdw (%zu of %zu)", name,
	      t.null_other, t.other);
	return t;
}

int main(void)
{
	struct tally one, a;
	char cmd[256];

	if (!mkdtemp(dir)) {
		printf("not ok - scratch directory\n");
		return 1;
	}
	if (system("command -v dwz >/dev/null 2>&1") != 0) {
		printf("ok - # SKIP dwz not found\n");
		return 0;
	}
	elf_version(EV_CURRENT);
	CHECK(write_file("h.h", shared_h) && write_file("u1.c", u1_c) && write_file("u2.c", u2_c),
	      "sources written");
	CHECK(built_run(dir,
			"cc -O2 -g -DV=1 -o one u1.c u2.c && cc -O2 -g -DV=2 -o a u1.c u2.c && "
			"cc -O2 -g -DV=3 -o b u1.c u2.c"),
	      "three programs built");
	CHECK(built_run(dir, "dwz one"), "dwz one");
	CHECK(built_run(dir, "dwz -m common.debug a b"), "dwz -m common.debug a b");
	one = check_file("one", NULL);
	CHECK(one.in_unit > 0 && one.ref_addr > 0,
	      "one: references within units and to partial units");
	a = check_file("a", "common.debug");
	CHECK(a.ref_alt > 0, "a: references into its dwz file");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return unit_exit();
}
