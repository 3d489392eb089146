/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: the DIEs of a unit for the two passes (see the header). Ours
 * reads a DIE's attributes once, as libdw's __libdw_find_attr() would, and
 * moves between DIEs as dwarf_child() and dwarf_siblingof() of elfutils
 * 0.188 do: a sibling by DW_AT_sibling when a DIE has it, else past its
 * children. Whatever those would refuse or read otherwise, ours does not
 * guess at: it fails, and its caller reads the unit with libdw.
 */
#include <dwarf.h>
#include <stdint.h>
#include <string.h>

#include "die_reader.h"
#include "internal.h"
#include "range_lists.h"

/* The size of each form's value in this unit that has one size (VARIABLE: the others). */
static void size_forms(struct die_reader *r)
{
	const struct unit_hdr *h = &r->hdr;

	memset(r->fixed, VARIABLE, sizeof(r->fixed));
	r->fixed[DW_FORM_flag_present] = 0;
	r->fixed[DW_FORM_data1] = r->fixed[DW_FORM_ref1] = r->fixed[DW_FORM_flag] = 1;
	r->fixed[DW_FORM_strx1] = r->fixed[DW_FORM_addrx1] = 1;
	r->fixed[DW_FORM_data2] = r->fixed[DW_FORM_ref2] = r->fixed[DW_FORM_strx2] = 2;
	r->fixed[DW_FORM_addrx2] = 2;
	r->fixed[DW_FORM_strx3] = r->fixed[DW_FORM_addrx3] = 3;
	r->fixed[DW_FORM_data4] = r->fixed[DW_FORM_ref4] = r->fixed[DW_FORM_strx4] = 4;
	r->fixed[DW_FORM_addrx4] = r->fixed[DW_FORM_ref_sup4] = 4;
	r->fixed[DW_FORM_data8] = r->fixed[DW_FORM_ref8] = r->fixed[DW_FORM_ref_sig8] = 8;
	r->fixed[DW_FORM_ref_sup8] = 8;
	r->fixed[DW_FORM_data16] = 16;
	r->fixed[DW_FORM_addr] = (uint8_t)h->address_size;
	r->fixed[DW_FORM_strp] = r->fixed[DW_FORM_line_strp] = (uint8_t)h->offset_size;
	r->fixed[DW_FORM_sec_offset] = r->fixed[DW_FORM_strp_sup] = (uint8_t)h->offset_size;
	r->fixed[DW_FORM_ref_addr] = (uint8_t)(h->version == 2 ? h->address_size : h->offset_size);
	/* What the sizes depend on: the abbreviations' plans are made for them. */
	r->plan_key = (uint16_t)(h->address_size | h->offset_size << 4 | (h->version == 2) << 8);
}

void die_reader_unit(struct die_reader *r, struct abbrev_cache *c, const struct dwarf_sections *s,
		     const Dwarf_Die *in_unit, uint64_t unit_off, bool own)
{
	uintptr_t at = (uintptr_t)in_unit->addr;

	r->abbrevs = c;
	r->cudie = *in_unit;
	r->base_known = false;
	r->ours = false;
	r->failed = false;
	if (!own || !s->abbrev || !unit_hdr_read(s, unit_off, &r->hdr))
		return;
	r->abbrev_start = s->abbrev;
	r->unit_start = s->info + unit_off;
	r->secs = s;
	r->unit_end = r->hdr.dies.end;
	/* libdw must be reading the very bytes ours reads: its DIE is among them. */
	if (at < (uintptr_t)r->hdr.dies.p || at >= (uintptr_t)r->unit_end)
		return;
	r->table = abbrev_table_at(c, s, r->hdr.abbrev_offset);
	r->ours = r->table && r->table->ok;
	if (r->ours)
		size_forms(r);
}

const void *die_ref_target(const struct die_reader *r, const Dwarf_Attribute *a)
{
	struct cursor c = { a->valp, r->unit_end, false };
	uint64_t off;

	if (!r->ours || r->failed || !a->valp)
		return NULL;
	switch (a->form) {
	case DW_FORM_ref1:
	case DW_FORM_ref2:
	case DW_FORM_ref4:
	case DW_FORM_ref8:
		off = cursor_u(&c, r->fixed[a->form]);
		break;
	case DW_FORM_ref_udata:
		off = cursor_uleb10(&c);
		break;
	case DW_FORM_ref_addr:
		/* An offset in the section, where libdw looks for its unit. */
		off = cursor_u(&c, r->fixed[a->form]);
		return c.bad || off >= r->secs->info_size ? NULL : r->secs->info + off;
	case DW_FORM_GNU_ref_alt:
		off = cursor_u(&c, r->hdr.offset_size);
		return c.bad || !r->secs->alt_info || off >= r->secs->alt_info_size
			       ? NULL
			       : r->secs->alt_info + off;
	default:
		return NULL;
	}
	return c.bad || off >= (uint64_t)(r->unit_end - r->unit_start) ? NULL : r->unit_start + off;
}

static bool fail(struct die_reader *r)
{
	r->failed = true;
	return false;
}

/* Where DW_AT_sibling of the DIE at die points, as dwarf_siblingof() takes it; NULL: refused. */
static const unsigned char *sibling_at(const struct die_reader *r, const unsigned char *die,
				       uint64_t form, const unsigned char *valp)
{
	struct cursor c = { valp, r->unit_end, false };
	uint64_t off;

	switch (form) {
	case DW_FORM_ref1:
		off = cursor_u(&c, 1);
		break;
	case DW_FORM_ref2:
		off = cursor_u(&c, 2);
		break;
	case DW_FORM_ref4:
		off = cursor_u(&c, 4);
		break;
	case DW_FORM_ref8:
		off = cursor_u(&c, 8);
		break;
	case DW_FORM_ref_udata:
		off = cursor_uleb10(&c);
		break;
	default:
		return NULL;
	}
	/* After the DIE, within the unit. */
	if (c.bad || off >= (uint64_t)(r->unit_end - r->unit_start) ||
	    off <= (uint64_t)(die - r->unit_start))
		return NULL;
	return r->unit_start + off;
}

/* The first of an attribute is what dwarf_attr() finds. */
static void keep(Dwarf_Attribute *a, uint64_t attr, uint64_t form, const unsigned char *valp,
		 Dwarf_CU *cu)
{
	if (!a->form)
		*a = (Dwarf_Attribute){ (unsigned)attr, (unsigned)form, (unsigned char *)valp, cu };
}

/* Note one attribute of d, its value at valp (one that noted_attr() names). */
static bool note_attr(struct die_reader *r, struct die_attrs *d, uint64_t attr, uint64_t form,
		      const unsigned char *valp)
{
	Dwarf_CU *cu = d->die.cu;

	switch (attr) {
	case DW_AT_sibling:
		if (!d->sibling && !(d->sibling = sibling_at(r, d->die.addr, form, valp)))
			return false;
		break;
	case DW_AT_low_pc:
		keep(&d->low_pc, attr, form, valp, cu);
		break;
	case DW_AT_high_pc:
		keep(&d->high_pc, attr, form, valp, cu);
		break;
	case DW_AT_ranges:
		keep(&d->ranges, attr, form, valp, cu);
		break;
	case DW_AT_abstract_origin:
		keep(&d->origin, attr, form, valp, cu);
		break;
	case DW_AT_call_file:
		keep(&d->call_file, attr, form, valp, cu);
		break;
	case DW_AT_call_line:
		keep(&d->call_line, attr, form, valp, cu);
		break;
	default:
		break;
	}
	return true;
}

/* d with none of the attributes note_attr() keeps, yet. */
static void no_attrs(struct die_attrs *d)
{
	d->low_pc.form = d->high_pc.form = d->ranges.form = 0;
	d->origin.form = d->call_file.form = d->call_line.form = 0;
	d->sibling = NULL;
}

/* The attributes note_attr() keeps. */
static bool noted_attr(unsigned attr)
{
	switch (attr) {
	case DW_AT_sibling:
	case DW_AT_low_pc:
	case DW_AT_high_pc:
	case DW_AT_ranges:
	case DW_AT_abstract_origin:
	case DW_AT_call_file:
	case DW_AT_call_line:
		return true;
	default:
		return false;
	}
}

/*
 * a's plan for units of this one's sizes: which attributes are kept, and
 * the size of all when each form has one (most DIEs are then passed over
 * in one step: types, variables, parameters).
 */
static void plan(struct die_reader *r, struct abbrev *a)
{
	struct attr_spec *specs = r->abbrevs->specs;
	int64_t size = 0;

	a->named = a->noted = false;
	for (uint32_t k = 0; k < a->nspecs; k++) {
		struct attr_spec *sp = &specs[a->first_spec + k];
		unsigned form = sp->form;

		sp->noted = noted_attr(sp->attr);
		a->noted |= sp->noted;
		a->named |= sp->attr == DW_AT_name || sp->attr == DW_AT_linkage_name ||
			    sp->attr == DW_AT_MIPS_linkage_name;
		if (form < FIXED_FORMS && r->fixed[form] != VARIABLE && size >= 0)
			size += r->fixed[form];
		else if (form != DW_FORM_implicit_const)
			size = -1;
	}
	a->fixed_size = size <= INT32_MAX ? (int32_t)size : -1;
	a->plan_key = r->plan_key;
}

/*
 * Step c past the value of sp; *valp: where libdw reads it. False: ours
 * cannot size it. The unit's sizes are given, not r, so that a caller's
 * loop keeps them in registers.
 */
static inline bool step_value(const uint8_t *fixed, const unsigned char *abbrev_start,
			      const struct unit_hdr *hdr, const struct attr_spec *sp,
			      struct cursor *c, const unsigned char **valp)
{
	unsigned form = sp->form, size;

	*valp = c->p;
	if (form < FIXED_FORMS && (size = fixed[form]) != VARIABLE) {
		if ((size_t)(c->end - c->p) < size)
			return false;
		c->p += size;
	} else if (form == DW_FORM_implicit_const) {
		*valp = abbrev_start + sp->implicit; /* libdw's value is there */
	} else if (form == DW_FORM_indirect || !skip_value(c, hdr, form)) {
		return false;
	}
	return true;
}

/* The values of a DIE of a at c, the kept ones into *d; false: ours cannot read them. */
static bool read_values(struct die_reader *r, const struct abbrev *a, struct cursor *c,
			struct die_attrs *d)
{
	/* Locals: note_attr() is given r, so that its fields would be loaded again each time. */
	const struct attr_spec *specs = r->abbrevs->specs + a->first_spec;
	const uint8_t *fixed = r->fixed;

	for (uint32_t k = 0, n = a->nspecs; k < n; k++) {
		const struct attr_spec *sp = &specs[k];
		const unsigned char *valp;

		if (!step_value(fixed, r->abbrev_start, &r->hdr, sp, c, &valp))
			return false;
		if (sp->noted && !note_attr(r, d, sp->attr, sp->form, valp))
			return false;
	}
	return true;
}

/* Ours: the DIE at p, in cu, into *d. */
static bool read_at(struct die_reader *r, const unsigned char *p, Dwarf_CU *cu, struct die_attrs *d)
{
	struct cursor c = { p, r->unit_end, false };
	struct abbrev *a;
	uint64_t code = cursor_uleb10(&c);

	if (c.bad || !code || !(a = abbrev_find(r->abbrevs, r->table, code)))
		return fail(r);
	if (a->plan_key != r->plan_key)
		plan(r, a);
	d->die = (Dwarf_Die){ .addr = (void *)p, .cu = cu };
	d->tag = a->tag;
	d->children = a->children;
	d->named = a->named;
	no_attrs(d);
	if (!a->noted && a->fixed_size >= 0) {
		if ((size_t)(c.end - c.p) < (size_t)a->fixed_size)
			return fail(r);
		d->next = c.p + a->fixed_size;
		return true;
	}
	if (!read_values(r, a, &c, d))
		return fail(r);
	d->next = c.p;
	return true;
}

bool die_read(struct die_reader *r, const Dwarf_Die *die, struct die_attrs *d)
{
	uintptr_t at = (uintptr_t)die->addr;

	if (r->ours && (at < (uintptr_t)r->hdr.dies.p || at >= (uintptr_t)r->unit_end))
		return fail(r); /* not in the unit begun: cannot happen */
	if (r->ours)
		return read_at(r, die->addr, die->cu, d);
	/* libdw's: an inlined subroutine's attributes, each by its own search. */
	d->die = *die;
	d->tag = (unsigned)dwarf_tag(&d->die);
	d->named = false;
	no_attrs(d);
	d->next = NULL;
	if (d->tag != DW_TAG_inlined_subroutine)
		return true;
	d->named = dwarf_hasattr(&d->die, DW_AT_linkage_name) ||
		   dwarf_hasattr(&d->die, DW_AT_MIPS_linkage_name) ||
		   dwarf_hasattr(&d->die, DW_AT_name);
	if (!dwarf_attr(&d->die, DW_AT_abstract_origin, &d->origin))
		d->origin.form = 0;
	if (!dwarf_attr(&d->die, DW_AT_call_file, &d->call_file))
		d->call_file.form = 0;
	if (!dwarf_attr(&d->die, DW_AT_call_line, &d->call_line))
		d->call_line.form = 0;
	return true;
}

/* The slot of out for an attribute die_names_read() keeps, or NULL. */
static Dwarf_Attribute *name_slot(struct die_names *out, uint64_t attr)
{
	switch (attr) {
	case DW_AT_linkage_name:
		return &out->linkage;
	case DW_AT_MIPS_linkage_name:
		return &out->mips_linkage;
	case DW_AT_name:
		return &out->name;
	case DW_AT_abstract_origin:
		return &out->origin;
	case DW_AT_specification:
		return &out->specification;
	default:
		return NULL;
	}
}

bool die_names_read(struct die_reader *r, const Dwarf_Die *die, struct die_names *out)
{
	const unsigned char *p = die->addr;
	struct cursor c = { p, r->unit_end, false };
	const struct attr_spec *specs;
	const struct abbrev *a;
	uint64_t code;

	memset(out, 0, sizeof(*out));
	if (!r->ours || p < r->hdr.dies.p || p >= r->unit_end)
		return false;
	code = cursor_uleb10(&c);
	if (c.bad || !code || !(a = abbrev_find(r->abbrevs, r->table, code)))
		return false;
	specs = r->abbrevs->specs + a->first_spec;
	for (uint32_t k = 0; k < a->nspecs; k++) {
		const unsigned char *valp;
		Dwarf_Attribute *slot;

		if (!step_value(r->fixed, r->abbrev_start, &r->hdr, &specs[k], &c, &valp))
			return false;
		if ((slot = name_slot(out, specs[k].attr)))
			keep(slot, specs[k].attr, specs[k].form, valp, die->cu);
	}
	return true;
}

int die_child(struct die_reader *r, struct die_attrs *parent, struct die_attrs *child)
{
	const unsigned char *p = parent->next;
	Dwarf_Die die;
	int ret;

	if (!r->ours) {
		if ((ret = dwarf_child(&parent->die, &die)) == 0)
			die_read(r, &die, child);
		return ret;
	}
	if (r->failed)
		return -1;
	if (!parent->children)
		return 1;
	/* A null entry first, however many bytes encode it, is no child. */
	while (p < r->unit_end && *p == 0x80)
		p++;
	if (p >= r->unit_end || !*p)
		return 1;
	return read_at(r, parent->next, parent->die.cu, child) ? 0 : -1;
}

int die_sibling(struct die_reader *r, struct die_attrs *d)
{
	Dwarf_CU *cu = d->die.cu;
	unsigned level = 0;

	if (!r->ours) {
		Dwarf_Die die;
		int ret = dwarf_siblingof(&d->die, &die);

		if (ret == 0)
			die_read(r, &die, d);
		return ret;
	}
	r->list_end = NULL;
	if (r->failed)
		return -1;
	for (;;) {
		const unsigned char *p = d->sibling;

		if (!p) {
			p = d->next;
			level += d->children;
		}
		for (;;) {
			if (p >= r->unit_end)
				return 1;
			if (*p)
				break;
			if (level-- == 0) {
				r->list_end = p + 1; /* d's list of siblings ends here */
				return 1;
			}
			p++;
		}
		/* A DIE inside the children passed over is read for its extent only. */
		if (!read_at(r, p, cu, d))
			return -1;
		if (!level)
			return 0;
	}
}

/* dwarf_highpc() and dwarf_lowpc() of a DIE that is not a split unit's root. */
static bool pc_pair(struct die_attrs *d, Dwarf_Addr *lo, Dwarf_Addr *hi)
{
	Dwarf_Word size;

	if (!d->high_pc.form || !d->low_pc.form)
		return false;
	if (dwarf_formaddr(&d->high_pc, hi) != 0) {
		if (dwarf_formaddr(&d->low_pc, hi) != 0 || dwarf_formudata(&d->high_pc, &size) != 0)
			return false;
		*hi += size;
	}
	return dwarf_formaddr(&d->low_pc, lo) == 0;
}

/* What dwarf_ranges() takes as the unit's base address: __libdw_cu_base_address()'s. */
static Dwarf_Addr unit_base(struct die_reader *r)
{
	Dwarf_Attribute a;

	if (!r->base_known && dwarf_lowpc(&r->cudie, &r->base) != 0 &&
	    dwarf_formaddr(dwarf_attr(&r->cudie, DW_AT_entry_pc, &a), &r->base) != 0)
		r->base = 0;
	r->base_known = true;
	return r->base;
}

/*
 * Where d's range list starts, as dwarf_ranges() finds it, for the form
 * producers give DW_AT_ranges outside split units: false for the others,
 * and for the offsets dwarf_ranges() would take as its own marks (0, 1).
 */
static bool list_start(struct die_reader *r, const struct die_attrs *d, ptrdiff_t *off,
		       Dwarf_Addr *base)
{
	struct cursor c = { d->ranges.valp, r->unit_end, false };
	uint64_t start;

	if (d->ranges.form != DW_FORM_sec_offset)
		return false;
	start = cursor_u(&c, r->hdr.offset_size);
	if (c.bad || start <= 1 || start > PTRDIFF_MAX || unit_base(r) == (Dwarf_Addr)-1)
		return false;
	*off = (ptrdiff_t)start;
	*base = r->base;
	return true;
}

ptrdiff_t die_ranges(struct die_reader *r, struct die_attrs *d, ptrdiff_t off, Dwarf_Addr *base,
		     Dwarf_Addr *lo, Dwarf_Addr *hi)
{
	if (!r->ours)
		return dwarf_ranges(&d->die, off, base, lo, hi);
	if (off == 0) {
		if (pc_pair(d, lo, hi))
			return 1;
		if (!d->ranges.form)
			return 0; /* what dwarf_ranges() says: no range */
		/* Read from the list's start: as the first call would, without looking again. */
		if (!list_start(r, d, &off, base))
			off = 0;
	} else if (off == 1) {
		return 0; /* after the one range of the pc pair */
	}
	if (off > 1) {
		ptrdiff_t next = range_list_next(r->secs, r->hdr.version, r->hdr.address_size, off,
						 base, lo, hi, &off);

		if (next != RANGE_LIST_LIBDW)
			return next;
	}
	return dwarf_ranges(&d->die, off, base, lo, hi);
}
