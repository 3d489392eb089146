/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: what lidiagen's own DIE readers share (see the header). Each
 * abbreviation table is read once, whatever the number of units that share
 * it: dwz gives thousands of partial units one table, and libdw would read
 * it again for each.
 */
#include <dwarf.h>

#include "abbrevs.h"
#include "internal.h"

static int cmp_code(const void *pa, const void *pb)
{
	const struct abbrev *a = pa, *b = pb;

	return a->code < b->code ? -1 : a->code > b->code;
}

/*
 * Decode the (attribute, form) pairs of a, from c up to and past their 0, 0,
 * into c->specs; false when one does not fit 16 bits (none does in DWARF 5
 * or GNU's extensions), which our readers leave to libdw.
 */
static int decode_specs(struct abbrev_cache *ac, const struct dwarf_sections *s, struct cursor *c,
			struct abbrev *a, bool *strict)
{
	int err;

	a->first_spec = (uint32_t)ac->nspecs;
	for (;;) {
		uint64_t attr = cursor_uleb10(c), form = cursor_uleb10(c);
		struct attr_spec sp = { .attr = (uint16_t)attr, .form = (uint16_t)form };

		if (c->bad || (!attr && !form))
			break;
		if (form == DW_FORM_implicit_const) {
			sp.implicit = (uint32_t)(c->p - s->abbrev);
			cursor_leb_skip10(c);
		}
		if (attr > UINT16_MAX || form > UINT16_MAX || c->p - s->abbrev > UINT32_MAX ||
		    ac->nspecs >= UINT32_MAX)
			*strict = false;
		if ((err = LIDIA_GROW(ac->specs, ac->nspecs + 1, ac->cap_specs)))
			return err;
		ac->specs[ac->nspecs++] = sp;
	}
	a->nspecs = (uint32_t)(ac->nspecs - a->first_spec);
	return 0;
}

/* Read the table at t->offset into c->abbrevs; t->ok when it is well-formed. */
static int read_table(struct abbrev_cache *c, const struct dwarf_sections *s,
		      struct abbrev_table *t)
{
	struct cursor cur = { s->abbrev + t->offset, s->abbrev + s->abbrev_size, false };
	uint64_t tag, children, last = 0;
	bool strict = true, in_order = true;
	int err;

	t->first = c->nabbrevs;
	for (;;) {
		struct abbrev a = { .code = cursor_uleb10(&cur) };

		if (cur.bad || !a.code)
			break;
		tag = cursor_uleb10(&cur);
		children = cursor_u(&cur, 1);
		/* What libdw would read otherwise is not for our readers to guess. */
		if (tag > DW_TAG_hi_user || children > DW_CHILDREN_yes)
			strict = false;
		a.tag = (unsigned)tag;
		a.children = children == DW_CHILDREN_yes;
		if ((err = decode_specs(c, s, &cur, &a, &strict)))
			return err;
		if (cur.bad)
			break;
		if ((err = LIDIA_GROW(c->abbrevs, c->nabbrevs + 1, c->cap_abbrevs)))
			return err;
		c->abbrevs[c->nabbrevs++] = a;
		in_order &= a.code > last;
		last = a.code;
	}
	t->n = c->nabbrevs - t->first;
	t->ok = !cur.bad && strict;
	/* Compilers number a table 1, 2, 3...: sorted as it was read, most often. */
	if (t->n && !in_order) /* c->abbrevs is NULL until a table has an entry */
		sort_array(c->abbrevs + t->first, t->n, sizeof(*c->abbrevs), cmp_code);
	/* A code defined twice: libdw takes the first, a sort either. */
	for (size_t i = 1; i < t->n; i++)
		if (c->abbrevs[t->first + i].code == c->abbrevs[t->first + i - 1].code)
			t->ok = false;
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

static void forget_tables(struct abbrev_cache *c)
{
	c->nabbrevs = c->nspecs = c->ntables = 0;
	memset(c->slots, 0, c->cap_slots * sizeof(*c->slots));
}

const struct abbrev_table *abbrev_table_at(struct abbrev_cache *c, const struct dwarf_sections *s,
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
	if (c->nabbrevs > (c->kept ? c->kept : ABBREVS_KEPT)) {
		forget_tables(c);
		i = slot_of(offset, c->cap_slots);
	}
	if (LIDIA_GROW(c->tables, c->ntables + 1, c->cap_tables))
		return NULL;
	t = &c->tables[c->ntables];
	*t = (struct abbrev_table){ .offset = offset };
	if (read_table(c, s, t))
		return NULL; /* out of memory: not kept, libdw reads the unit */
	c->slots[i] = (uint32_t)++c->ntables;
	return t;
}

struct abbrev *abbrev_find(struct abbrev_cache *c, const struct abbrev_table *t, uint64_t code)
{
	struct abbrev *v;
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

bool unit_hdr_read(const struct dwarf_sections *s, uint64_t offset, struct unit_hdr *h)
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

bool skip_value(struct cursor *c, const struct unit_hdr *h, uint64_t form)
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
		cursor_leb_skip10(c);
		break;
	case DW_FORM_udata:
	case DW_FORM_ref_udata:
	case DW_FORM_strx:
	case DW_FORM_addrx:
	case DW_FORM_loclistx:
	case DW_FORM_rnglistx:
	case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index:
		cursor_leb_skip10(c);
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
		cursor_skip(c, cursor_uleb10(c));
		break;
	default:
		return false;
	}
	return !c->bad;
}

void abbrev_cache_release(struct abbrev_cache *c)
{
	free(c->abbrevs);
	free(c->specs);
	free(c->tables);
	free(c->slots);
	memset(c, 0, sizeof(*c));
}
