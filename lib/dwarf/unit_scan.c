/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: what a unit holds, read without libdw, for the units that need no
 * more: dwz's partial units, thousands in a large C library, which hold
 * types and declarations shared by compile units, and no code.
 *
 * libdw reads each unit's abbreviations into tables of its own, unit after
 * unit, up to the highest code the unit uses: dwz gives thousands of small
 * partial units one table of up to 127 abbreviations, and libdw keeps a copy
 * per unit (PETSc's debug file: 20 MiB for 0.5 MiB of partial units, 40%
 * of the peak). Here each table is read once, and a unit costs the bytes of
 * its DIEs: they are walked,
 * attribute by attribute, with every value skipped by its form, to find
 * whether any DIE has an address range (DW_AT_low_pc, DW_AT_high_pc,
 * DW_AT_ranges: what dwarf_ranges() reads, and so what could make a
 * subprogram range). A unit with none has no code: it is never given to
 * libdw to walk. Anything not understood sends the unit back to libdw.
 */
#include <dwarf.h>

#include "abbrevs.h"
#include "internal.h"
#include "unit_scan.h"

/* Nesting deeper than this is corrupt (real DWARF stays under a few dozen). */
#define MAX_DEPTH 512

/* DW_AT_stmt_list's value at c, in the forms producers give it; false for another form. */
static bool stmt_list_at(struct cursor *c, const struct unit_hdr *h, uint64_t form, uint64_t *off)
{
	if (form == DW_FORM_sec_offset)
		*off = cursor_u(c, h->offset_size);
	else if (form == DW_FORM_data4 || form == DW_FORM_data8)
		*off = cursor_u(c, form == DW_FORM_data4 ? 4 : 8);
	else
		return false;
	return !c->bad;
}

/* A DW_FORM_indirect form read from c into *form; false when it names no form a value has. */
static bool direct_form(struct cursor *c, uint64_t *form)
{
	if (*form == DW_FORM_indirect) {
		*form = cursor_uleb10(c);
		if (*form == DW_FORM_indirect || *form == DW_FORM_implicit_const)
			return false;
	}
	return true;
}

/*
 * An attribute of the unit DIE: its line program and compilation directory
 * are kept, in the forms producers give them; other forms of those two (a
 * string by index, or in the dwz file) are libdw's to read.
 */
static bool root_attr(struct cursor *c, const struct dwarf_sections *s, const struct unit_hdr *h,
		      uint64_t attr, uint64_t form, struct unit_facts *out)
{
	if (attr == DW_AT_stmt_list) {
		out->has_lines = stmt_list_at(c, h, form, &out->line_offset);
		return out->has_lines;
	}
	if (attr == DW_AT_comp_dir) {
		if (form == DW_FORM_string)
			out->comp_dir = cursor_cstr(c);
		else if (form == DW_FORM_strp || form == DW_FORM_line_strp)
			out->comp_dir = dwarf_sections_str(s, form == DW_FORM_line_strp,
							   cursor_u(c, h->offset_size));
		else
			return false;
		return !c->bad && out->comp_dir;
	}
	return skip_value(c, h, form);
}

/* One DIE's attributes, as abbreviation a lists them (specs: its table's); out->code when one is an address range. */
static bool read_die(struct cursor *c, const struct dwarf_sections *s, const struct unit_hdr *h,
		     const struct attr_spec *specs, const struct abbrev *a, bool root,
		     struct unit_facts *out)
{
	for (uint32_t k = 0; k < a->nspecs; k++) {
		const struct attr_spec *sp = &specs[a->first_spec + k];
		uint64_t form = sp->form;

		if (sp->attr == DW_AT_low_pc || sp->attr == DW_AT_high_pc ||
		    sp->attr == DW_AT_ranges) {
			out->code = true;
			return true;
		}
		if (form == DW_FORM_implicit_const)
			continue; /* the value is in the abbreviation */
		if (!direct_form(c, &form))
			return false;
		if (!(root ? root_attr(c, s, h, sp->attr, form, out) : skip_value(c, h, form)))
			return false;
	}
	return true;
}

bool unit_scan(struct abbrev_cache *c, const struct dwarf_sections *s, uint64_t offset,
	       struct unit_facts *out)
{
	const struct abbrev_table *t;
	struct unit_hdr h;
	unsigned depth = 0;

	memset(out, 0, sizeof(*out));
	if (!unit_hdr_read(s, offset, &h) || !(t = abbrev_table_at(c, s, h.abbrev_offset)) ||
	    !t->ok)
		return false;
	out->address_size = h.address_size;
	for (bool root = true;; root = false) {
		uint64_t code = cursor_uleb10(&h.dies);
		const struct abbrev *a;

		if (h.dies.bad)
			return false;
		if (!code) { /* the end of a list of children */
			if (root || !depth)
				return false;
			if (!--depth)
				return true;
			continue;
		}
		if (!(a = abbrev_find(c, t, code)) ||
		    !read_die(&h.dies, s, &h, c->specs, a, root, out))
			return false;
		if (out->code)
			return true;
		if (a->children && ++depth > MAX_DEPTH)
			return false;
		if (!depth)
			return true; /* a unit DIE without children */
	}
}

/*
 * The value of DW_AT_stmt_list in form, at c, as dwarf_formudata() reads it:
 * a line program offset (checked against .debug_line's size) when it is
 * DW_FORM_sec_offset or, before DWARF 4, data4 or data8; DWARF 4's data4
 * and data8 are constants.
 */
static int stmt_list_value(struct cursor *c, const struct dwarf_sections *s,
			   const struct unit_hdr *h, uint64_t form, uint64_t *off)
{
	bool lineptr = form == DW_FORM_sec_offset || h->version < 4;

	if (!stmt_list_at(c, h, form, off))
		return -1;
	return !lineptr || *off < s->line_size;
}

int unit_stmt_list(struct abbrev_cache *c, const struct dwarf_sections *s, uint64_t offset,
		   const void *die_addr, uint64_t *line_offset)
{
	const struct abbrev_table *t;
	const struct abbrev *a;
	struct unit_hdr h;

	/* Where libdw found the unit DIE, or not ours to read (.debug_types, a .zdebug_line). */
	if (!s->line || !unit_hdr_read(s, offset, &h) || h.dies.p != die_addr ||
	    !(t = abbrev_table_at(c, s, h.abbrev_offset)) || !t->ok ||
	    !(a = abbrev_find(c, t, cursor_uleb10(&h.dies))) || h.dies.bad)
		return -1;
	for (uint32_t k = 0; k < a->nspecs; k++) {
		const struct attr_spec *sp = &c->specs[a->first_spec + k];
		uint64_t form = sp->form;

		if (form == DW_FORM_implicit_const) {
			if (sp->attr == DW_AT_stmt_list)
				return -1;
			continue; /* the value is in the abbreviation */
		}
		if (!direct_form(&h.dies, &form))
			return -1;
		if (sp->attr == DW_AT_stmt_list) /* the first, as dwarf_attr() finds */
			return stmt_list_value(&h.dies, s, &h, form, line_offset);
		if (!skip_value(&h.dies, &h, form))
			return -1;
	}
	return 0;
}
