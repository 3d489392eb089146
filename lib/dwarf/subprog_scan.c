/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: DWARF, the first pass over a run of units (see dwarf.c): each
 * unit's comp_dir and line program, and its subprograms' address ranges.
 *
 * A scanner scans one run at a time, on one thread, reading the units
 * dwarf.c listed through the Dwarf that listed them, or through one of its
 * own (s->own_dw: unit_chunks.c's threads); the subprograms are kept by the
 * offset of their DIE, which reads the same in either.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "die_reader.h"
#include "dwarf_walk.h"
#include "internal.h"
#include "unit_scan.h"

static int add_subprog(struct scanner *s, struct die_reader *r, struct die_attrs *die,
		       uint32_t unit)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int err;

	while (next_code_range(r, die, &off, &base, &lo, &hi)) {
		if ((err = LIDIA_GROW(s->subs, s->nsubs + 1, s->cap_subs)))
			return err;
		s->subs[s->nsubs++] = (struct subprog){
			.lo = lo, .hi = hi, .off = dwarf_dieoffset(&die->die), .unit = unit
		};
	}
	return 0;
}

/*
 * Whether the unit's compiler puts no code in a class outside functions: C,
 * C++ and Objective-C. GCC and Clang write a member function's code at
 * namespace level, its DIE pointing at the declaration in the class. Rust's
 * (LLVM 14, rustc 1.63) writes it inside the struct, and so may any other.
 */
static bool classes_declare_only(Dwarf_Die *cudie)
{
	switch (dwarf_srclang(cudie)) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
	case DW_LANG_ObjC:
	case DW_LANG_ObjC_plus_plus:
		return true;
	default:
		return false;
	}
}

/*
 * Subprograms at any depth: under namespaces and classes, and nested in
 * other subprograms (GCC's nested functions); not inside inlined code.
 * in_code: inside a function, or in a unit whose classes may hold code.
 */
static int scan_dies(struct scanner *s, struct die_reader *r, struct die_attrs *parent,
		     uint32_t unit, int level, bool in_code)
{
	struct die_attrs child;
	int err = 0;

	if (level > 64 || die_child(r, parent, &child) != 0)
		return 0;
	do {
		switch (child.tag) {
		case DW_TAG_subprogram:
			if ((err = add_subprog(s, r, &child, unit)))
				return err;
			err = scan_dies(s, r, &child, unit, level + 1, true);
			break;
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_enumeration_type: /* Rust: an enum's methods */
		case DW_TAG_interface_type:
		case DW_TAG_variant_part:
		case DW_TAG_variant:
			/*
			 * C and C++ compilers put code in classes only inside functions
			 * (a lambda's closure type); at namespace level a class holds
			 * declarations, and walking every one of them is a tenth of the
			 * time in C++.
			 */
			if (in_code)
				err = scan_dies(s, r, &child, unit, level + 1, in_code);
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_lexical_block:
			err = scan_dies(s, r, &child, unit, level + 1, in_code);
			break;
		default:
			break;
		}
		if (err)
			return err;
	} while (die_sibling(r, &child) == 0);
	die_children_read(r, parent);
	return 0;
}

/* What the second pass needs of a unit: its comp_dir, line program and address size. */
static void read_unit(struct unit *un, Dwarf_Die *cudie)
{
	Dwarf_Attribute attr;
	Dwarf_Word off;
	Dwarf_Die cu;
	uint8_t offset_size;

	un->comp_dir = dwarf_attr(cudie, DW_AT_comp_dir, &attr) ? dwarf_formstring(&attr) : NULL;
	un->has_lines = dwarf_attr(cudie, DW_AT_stmt_list, &attr) && !dwarf_formudata(&attr, &off);
	un->line_offset = un->has_lines ? off : 0;
	if (!dwarf_diecu(cudie, &cu, &un->address_size, &offset_size))
		un->address_size = 0; /* our decoder refuses it: libdw's lines */
}

/*
 * A partial unit with no code, read without libdw (unit_scan.c): un takes
 * its line program and comp_dir, and nothing more of it is read. False: the
 * unit is libdw's to walk (it may have code, or the scan could not tell).
 */
static bool partial_without_code(struct scanner *s, struct unit *un)
{
	struct unit_facts f;
	uint64_t offset = un->unit_off;

	if (!unit_scan(&s->abbrevs, &s->w->secs, offset, &f) || f.code)
		return false;
	un->comp_dir = f.comp_dir;
	un->has_lines = f.has_lines;
	un->line_offset = f.line_offset;
	un->address_size = (uint8_t)f.address_size;
	un->no_ranges = true;
	return true;
}

/*
 * The subprogram ranges under top, unit u's DIE (or its split unit's), read
 * by our reader, or by libdw's calls when ours cannot read the unit.
 */
static int scan_top(struct scanner *s, uint32_t u, Dwarf_Die *top, bool in_code)
{
	const struct unit *un = &s->w->units[u];
	struct die_reader r;
	struct die_attrs root;
	int err = 0;

	die_reader_unit(&r, &s->abbrevs, &s->w->secs, top, un->unit_off, !un->split);
	if (die_read(&r, top, &root))
		err = scan_dies(s, &r, &root, u, 0, in_code);
	if (!r.failed)
		return err;
	s->nsubs = un->subs_first; /* what ours found, read again */
	die_reader_by_libdw(&r);
	die_read(&r, top, &root);
	return scan_dies(s, &r, &root, u, 0, in_code);
}

/* Unit u: its facts, and its subprogram ranges at the end of s->subs. */
static int scan_unit(struct scanner *s, uint32_t u)
{
	struct unit *un = &s->w->units[u];
	Dwarf_Die cudie = un->die, *top;
	int err = 0;

	un->subs_first = s->nsubs;
	if (un->partial && partial_without_code(s, un)) {
		un->subs_end = s->nsubs;
		return 0;
	}
	if (s->own_dw && !dwarf_offdie(s->own_dw, un->die_off, &cudie))
		return LIDIA_E_ELF; /* listed already: cannot happen */
	read_unit(un, &cudie);
	/* A skeleton's code is described in its split unit (a .dwo), when found. */
	top = un->split ? &un->split_die : &cudie;
	err = scan_top(s, u, top, !classes_declare_only(top));
	un->subs_end = s->nsubs;
	return err;
}

int scan_units(struct scanner *s, uint32_t first, uint32_t end)
{
	int err = 0;

	for (uint32_t u = first; u < end && !err; u++)
		err = scan_unit(s, u);
	return err;
}

void scanner_release(struct scanner *s)
{
	free(s->subs);
	abbrev_cache_release(&s->abbrevs);
	memset(s, 0, sizeof(*s));
}
