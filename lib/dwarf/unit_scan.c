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

#include "dwarf_cursor.h"
#include "internal.h"
#include "unit_scan.h"

/* One abbreviation: its attribute specifications are read again at each DIE. */
struct abbrev {
	uint64_t code;
	const unsigned char *specs; /* (attribute, form[, implicit value]) pairs, ended by 0, 0 */
	bool children;
};

/* A table: c->abbrevs[first, first + n), sorted by code. */
struct abbrev_table {
	uint64_t offset;
	size_t first, n;
	bool ok; /* read to its end without fault */
};

/* Nesting deeper than this is corrupt (real DWARF stays under a few dozen). */
#define MAX_DEPTH 512

static int cmp_code(const void *pa, const void *pb)
{
	const struct abbrev *a = pa, *b = pb;

	return a->code < b->code ? -1 : a->code > b->code;
}

/* Skip the (attribute, form) pairs of one abbreviation, up to and past its 0, 0. */
static void skip_specs(struct cursor *c)
{
	for (;;) {
		uint64_t attr = cursor_uleb(c), form = cursor_uleb(c);

		if (c->bad || (!attr && !form))
			return;
		if (form == DW_FORM_implicit_const)
			cursor_sleb(c);
	}
}

/* Read the table at t->offset into c->abbrevs; t->ok when it is well-formed. */
static int read_table(struct abbrev_cache *c, const struct dwarf_sections *s,
		      struct abbrev_table *t)
{
	struct cursor cur = { s->abbrev + t->offset, s->abbrev + s->abbrev_size, false };
	int err;

	t->first = c->nabbrevs;
	for (;;) {
		struct abbrev a = { .code = cursor_uleb(&cur) };

		if (cur.bad || !a.code)
			break;
		cursor_uleb(&cur); /* the tag: what matters is the attributes */
		a.children = cursor_u(&cur, 1) != 0;
		a.specs = cur.p;
		skip_specs(&cur);
		if (cur.bad)
			break;
		if ((err = LIDIA_GROW(c->abbrevs, c->nabbrevs + 1, c->cap_abbrevs)))
			return err;
		c->abbrevs[c->nabbrevs++] = a;
	}
	t->n = c->nabbrevs - t->first;
	t->ok = !cur.bad;
	if (t->n) /* c->abbrevs is NULL until a table has an entry */
		sort_array(c->abbrevs + t->first, t->n, sizeof(*c->abbrevs), cmp_code);
	return 0;
}

static size_t slot_of(uint64_t offset, size_t cap)
{
	return (size_t)((offset * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

/* Grow the slots to twice the tables, at least, and place the tables again. */
static int rehash(struct abbrev_cache *c)
{
	size_t cap = c->cap_slots ? c->cap_slots * 2 : 64;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t t = 0; t < c->ntables; t++) {
		size_t i = slot_of(c->tables[t].offset, cap);

		while (slots[i])
			i = (i + 1) & (cap - 1);
		slots[i] = (uint32_t)t + 1;
	}
	free(c->slots);
	c->slots = slots;
	c->cap_slots = cap;
	return 0;
}

/* The table at offset, read now if it is new; NULL when it cannot be had. */
static const struct abbrev_table *table_at(struct abbrev_cache *c, const struct dwarf_sections *s,
					   uint64_t offset)
{
	struct abbrev_table *t;
	size_t i;

	if (!s->abbrev || offset >= s->abbrev_size || c->ntables >= UINT32_MAX - 1)
		return NULL;
	if ((c->ntables + 1) * 2 > c->cap_slots && rehash(c))
		return NULL;
	for (i = slot_of(offset, c->cap_slots); c->slots[i]; i = (i + 1) & (c->cap_slots - 1))
		if (c->tables[c->slots[i] - 1].offset == offset)
			return &c->tables[c->slots[i] - 1];
	if (LIDIA_GROW(c->tables, c->ntables + 1, c->cap_tables))
		return NULL;
	t = &c->tables[c->ntables];
	*t = (struct abbrev_table){ .offset = offset };
	if (read_table(c, s, t))
		return NULL; /* out of memory: not kept, libdw reads the unit */
	c->slots[i] = (uint32_t)++c->ntables;
	return t;
}

static const struct abbrev *find_abbrev(const struct abbrev_cache *c, const struct abbrev_table *t,
					uint64_t code)
{
	const struct abbrev *v;
	size_t lo = 0, hi = t->n;

	if (!t->n)
		return NULL;
	v = c->abbrevs + t->first;
	if (code - 1 < t->n && v[code - 1].code == code) /* codes are 1, 2, 3... mostly */
		return &v[code - 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].code == code)
			return &v[mid];
		if (v[mid].code < code)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A unit's header: where its DIEs are, and what sizes their values. */
struct unit_hdr {
	struct cursor dies; /* from the unit DIE to the unit's end */
	uint64_t abbrev_offset;
	unsigned version, address_size, offset_size;
};

/* The header of the compile or partial unit at offset (DWARF 5 section 7.5.1). */
static bool read_header(const struct dwarf_sections *s, uint64_t offset, struct unit_hdr *h)
{
	struct cursor c;
	uint64_t len;

	if (!s->info || offset >= s->info_size)
		return false;
	c = (struct cursor){ s->info + offset, s->info + s->info_size, false };
	h->offset_size = 4;
	len = cursor_u(&c, 4);
	if (len == 0xffffffff) {
		len = cursor_u(&c, 8);
		h->offset_size = 8;
	} else if (len >= 0xfffffff0) {
		return false; /* reserved */
	}
	if (c.bad || len > (uint64_t)(c.end - c.p))
		return false;
	c.end = c.p + len;
	h->version = (unsigned)cursor_u(&c, 2);
	if (h->version >= 5) {
		uint64_t type = cursor_u(&c, 1);

		/* Other unit types have more header fields; they are not asked for. */
		if (type != DW_UT_compile && type != DW_UT_partial)
			return false;
		h->address_size = (unsigned)cursor_u(&c, 1);
		h->abbrev_offset = cursor_u(&c, h->offset_size);
	} else {
		h->abbrev_offset = cursor_u(&c, h->offset_size);
		h->address_size = (unsigned)cursor_u(&c, 1);
	}
	h->dies = c;
	return !c.bad && h->version >= 2 && h->version <= 5 &&
	       (h->address_size == 4 || h->address_size == 8);
}

/* Skip one value of form (DWARF 5 section 7.5.6, and GNU's); false when it cannot be sized. */
static bool skip_value(struct cursor *c, const struct unit_hdr *h, uint64_t form)
{
	switch (form) {
	case DW_FORM_flag_present:
		return true;
	case DW_FORM_addr:
		cursor_skip(c, h->address_size);
		break;
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
	case DW_FORM_addrx1:
		cursor_skip(c, 1);
		break;
	case DW_FORM_data2:
	case DW_FORM_ref2:
	case DW_FORM_strx2:
	case DW_FORM_addrx2:
		cursor_skip(c, 2);
		break;
	case DW_FORM_strx3:
	case DW_FORM_addrx3:
		cursor_skip(c, 3);
		break;
	case DW_FORM_data4:
	case DW_FORM_ref4:
	case DW_FORM_strx4:
	case DW_FORM_addrx4:
	case DW_FORM_ref_sup4:
		cursor_skip(c, 4);
		break;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
	case DW_FORM_ref_sup8:
		cursor_skip(c, 8);
		break;
	case DW_FORM_data16:
		cursor_skip(c, 16);
		break;
	case DW_FORM_sdata:
		cursor_sleb(c);
		break;
	case DW_FORM_udata:
	case DW_FORM_ref_udata:
	case DW_FORM_strx:
	case DW_FORM_addrx:
	case DW_FORM_loclistx:
	case DW_FORM_rnglistx:
	case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index:
		cursor_uleb(c);
		break;
	case DW_FORM_string:
		cursor_cstr(c);
		break;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		cursor_skip(c, h->offset_size);
		break;
	case DW_FORM_ref_addr: /* an address's size in DWARF 2, an offset's since */
		cursor_skip(c, h->version == 2 ? h->address_size : h->offset_size);
		break;
	case DW_FORM_block1:
		cursor_skip(c, cursor_u(c, 1));
		break;
	case DW_FORM_block2:
		cursor_skip(c, cursor_u(c, 2));
		break;
	case DW_FORM_block4:
		cursor_skip(c, cursor_u(c, 4));
		break;
	case DW_FORM_block:
	case DW_FORM_exprloc:
		cursor_skip(c, cursor_uleb(c));
		break;
	default:
		return false;
	}
	return !c->bad;
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
		if (form == DW_FORM_sec_offset)
			out->line_offset = cursor_u(c, h->offset_size);
		else if (form == DW_FORM_data4 || form == DW_FORM_data8)
			out->line_offset = cursor_u(c, form == DW_FORM_data4 ? 4 : 8);
		else
			return false;
		out->has_lines = true;
		return !c->bad;
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

/* One DIE's attributes, as abbreviation a lists them; out->code when one is an address range. */
static bool read_die(struct cursor *c, const struct dwarf_sections *s, const struct unit_hdr *h,
		     const struct abbrev *a, bool root, struct unit_facts *out)
{
	struct cursor spec = { a->specs, s->abbrev + s->abbrev_size, false };

	for (;;) {
		uint64_t attr = cursor_uleb(&spec), form = cursor_uleb(&spec);

		if (!attr && !form)
			return !spec.bad;
		if (attr == DW_AT_low_pc || attr == DW_AT_high_pc || attr == DW_AT_ranges) {
			out->code = true;
			return true;
		}
		if (form == DW_FORM_implicit_const) {
			cursor_sleb(&spec); /* the value is in the abbreviation */
			continue;
		}
		if (form == DW_FORM_indirect) {
			form = cursor_uleb(c);
			if (form == DW_FORM_indirect || form == DW_FORM_implicit_const)
				return false;
		}
		if (!(root ? root_attr(c, s, h, attr, form, out) : skip_value(c, h, form)))
			return false;
	}
}

bool unit_scan(struct abbrev_cache *c, const struct dwarf_sections *s, uint64_t offset,
	       struct unit_facts *out)
{
	const struct abbrev_table *t;
	struct unit_hdr h;
	unsigned depth = 0;

	memset(out, 0, sizeof(*out));
	if (!read_header(s, offset, &h) || !(t = table_at(c, s, h.abbrev_offset)) || !t->ok)
		return false;
	out->address_size = h.address_size;
	for (bool root = true;; root = false) {
		uint64_t code = cursor_uleb(&h.dies);
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
		if (!(a = find_abbrev(c, t, code)) || !read_die(&h.dies, s, &h, a, root, out))
			return false;
		if (out->code)
			return true;
		if (a->children && ++depth > MAX_DEPTH)
			return false;
		if (!depth)
			return true; /* a unit DIE without children */
	}
}

void abbrev_cache_release(struct abbrev_cache *c)
{
	free(c->abbrevs);
	free(c->tables);
	free(c->slots);
	memset(c, 0, sizeof(*c));
}
