/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: reading Go's pclntab, the one table a Go program keeps even when
 * stripped (Go's debug/gosym, runtime/symtab.go): the header, the function
 * table and _func records, pc-value tables, file names and inline trees.
 * Finding the table in an ELF image is pclntab_find.c; turning it into
 * ranges, go_extract.c.
 *
 * Layouts (Go's runtime/symtab.go and cmd/internal/objfile), by header magic:
 *   0xfffffffb  Go 1.2-1.15: one blob; names, files and pc tables at offsets
 *               from its start; functab of (entry, funcoff) words; the
 *               release, which places the inline tree, from the binary
 *               (gotab_set_release)
 *   0xfffffffa  Go 1.16-1.17: header lists the offsets of funcnametab, cutab,
 *               filetab, pctab and the function table; files per compile unit
 *   0xfffffff0  Go 1.18-1.19: as 1.16 plus runtime.text in the header;
 *               functab of u32 (entryoff, funcoff); funcdata are u32 offsets
 *               from go:func.*
 *   0xfffffff1  Go 1.20+: _func gains startLine; inline entries lose their
 *               parent, file and line (a call site is found at parentPc)
 * Every offset read from the table is checked against the blob before use.
 */
#include "pclntab.h"

static inline uint64_t ld(const struct gotab *t, const unsigned char *p, unsigned n)
{
	return load_endian(p, n, t->big_endian);
}

/* n bytes at offset off of the blob, or NULL when they are not all inside. */
static inline const unsigned char *at(const struct gotab *t, uint64_t off, uint64_t n)
{
	if (off > t->size || n > t->size - off)
		return NULL;
	return t->base + off;
}

int gotab_parse(struct gotab *t, const unsigned char *buf, uint64_t size, uint64_t va,
		bool big_endian)
{
	uint32_t magic;
	unsigned p;

	memset(t, 0, offsetof(struct gotab, read_va));
	t->base = buf;
	t->size = size;
	t->va = va;
	t->big_endian = big_endian;
	if (size < 16)
		return LIDIA_E_GO;
	magic = (uint32_t)ld(t, buf, 4);
	if (buf[4] || buf[5] || (buf[6] != 1 && buf[6] != 2 && buf[6] != 4) ||
	    (buf[7] != 4 && buf[7] != 8))
		return LIDIA_E_GO;
	t->quantum = buf[6];
	t->ptr_size = p = buf[7];
	switch (magic) {
	case 0xfffffffb:
		t->version = GO_1_2;
		if (size < 8 + 2 * (uint64_t)p)
			return LIDIA_E_GO;
		t->nfunc = ld(t, buf + 8, p);
		/* Everything is at offsets from the blob's start. */
		t->funcnames_off = t->pctab_off = 0;
		t->pcln_off = 8 + p; /* the functab */
		if (t->nfunc > size / (2 * p) || !at(t, t->pcln_off, (2 * t->nfunc + 1) * p + 4))
			return LIDIA_E_GO;
		t->filetab_off = ld(t, buf + t->pcln_off + (2 * t->nfunc + 1) * p, 4);
		if (!at(t, t->filetab_off, 4))
			return LIDIA_E_GO;
		t->nfiles = ld(t, buf + t->filetab_off, 4);
		return 0;
	case 0xfffffffa:
		t->version = GO_1_16;
		break;
	case 0xfffffff0:
		t->version = GO_1_18;
		break;
	case 0xfffffff1:
		t->version = GO_1_20;
		break;
	default:
		return LIDIA_E_GO;
	}
	/* PCDATA_InlTreeIndex and FUNCDATA_InlTree, Go 1.16+ (cmd/internal/objabi/funcdata.go). */
	t->inl_pcdata = 2;
	t->inl_funcdata = 3;
	{
		unsigned nw = t->version >= GO_1_18 ? 8 : 7;
		uint64_t w[8];

		if (size < 8 + (uint64_t)nw * p)
			return LIDIA_E_GO;
		for (unsigned i = 0; i < nw; i++)
			w[i] = ld(t, buf + 8 + i * p, p);
		t->nfunc = w[0];
		t->nfiles = w[1];
		if (t->version >= GO_1_18)
			t->text_start = w[2];
		t->funcnames_off = w[nw - 5];
		t->cutab_off = w[nw - 4];
		t->filetab_off = w[nw - 3];
		t->pctab_off = w[nw - 2];
		t->pcln_off = w[nw - 1];
	}
	if (t->funcnames_off > size || t->cutab_off > size || t->filetab_off > size ||
	    t->pctab_off > size || t->pcln_off > size)
		return LIDIA_E_GO;
	{
		uint64_t entry = t->version >= GO_1_18 ? 8 : 2 * (uint64_t)p;
		uint64_t last = t->version >= GO_1_18 ? 4 : p;

		if (t->nfunc > size / entry || !at(t, t->pcln_off, t->nfunc * entry + last))
			return LIDIA_E_GO;
	}
	return 0;
}

/*
 * The inline slots of the 1.2 header by release (runtime/symtab.go of each):
 * Go 1.9-1.11 wrote 16-byte entries with the parent's index and no
 * parentPc, which this code does not read; 1.12 put the tree in pcdata 1
 * and funcdata 2, 1.13-1.15 in pcdata 2 and funcdata 4 (register maps took
 * slots 0 and 2), all with 20-byte entries and parentPc as 1.16-1.19 have.
 */
void gotab_set_release(struct gotab *t, unsigned minor)
{
	if (t->version != GO_1_2)
		return;
	t->inl_pcdata = t->inl_funcdata = 0;
	if (minor == 12) {
		t->inl_pcdata = 1;
		t->inl_funcdata = 2;
	} else if (minor >= 13 && minor <= 15) {
		t->inl_pcdata = 2;
		t->inl_funcdata = 4;
	}
}

unsigned gotab_release_minor(const char *s, size_t n)
{
	unsigned minor = 0;
	size_t i = 4;

	if (n < 5 || memcmp(s, "go1.", 4))
		return 0;
	for (; i < n && i < 7 && s[i] >= '0' && s[i] <= '9'; i++)
		minor = minor * 10 + (unsigned)(s[i] - '0');
	/* "go1.13", "go1.13.8", "go1.13beta1", "go1.13rc2": the number ends there. */
	if (i == 4 || (i < n && s[i] >= '0' && s[i] <= '9'))
		return 0;
	return minor;
}

/* ---- The function table ---------------------------------------------------- */

/* Entry address of function i (i == nfunc: the end of the last one). */
static bool ftab_entry(const struct gotab *t, uint64_t i, uint64_t *entry, uint64_t *funcoff)
{
	const unsigned char *e;

	if (t->version >= GO_1_18) {
		e = at(t, t->pcln_off + i * 8, i < t->nfunc ? 8 : 4);
		if (!e)
			return false;
		*entry = t->text_start + ld(t, e, 4);
		if (funcoff)
			*funcoff = i < t->nfunc ? ld(t, e + 4, 4) : 0;
		return true;
	}
	e = at(t, t->pcln_off + i * 2 * t->ptr_size, i < t->nfunc ? 2 * t->ptr_size : t->ptr_size);
	if (!e)
		return false;
	*entry = ld(t, e, t->ptr_size);
	if (funcoff)
		*funcoff = i < t->nfunc ? ld(t, e + t->ptr_size, t->ptr_size) : 0;
	return true;
}

/* A NUL-terminated string at off in the blob, or NULL. */
static const char *cstr(const struct gotab *t, uint64_t off)
{
	const unsigned char *p = at(t, off, 1);

	if (!p || !memchr(p, 0, t->size - off))
		return NULL;
	return (const char *)p;
}

bool gotab_func(const struct gotab *t, uint64_t i, struct gofunc *f)
{
	unsigned p = t->ptr_size;
	unsigned e0 = t->version >= GO_1_18 ? 4 : p; /* size of the entry field */
	unsigned fixed =
		e0 + 28 + (t->version >= GO_1_16 ? 4 : 0) + (t->version >= GO_1_20 ? 4 : 0) + 4;
	uint64_t funcoff, base = t->version == GO_1_2 ? 0 : t->pcln_off;
	const unsigned char *r;
	int64_t nameoff;

	if (!ftab_entry(t, i, &f->entry, &funcoff) || !ftab_entry(t, i + 1, &f->end, NULL) ||
	    f->end < f->entry || f->end - f->entry > UINT32_MAX || funcoff > t->size)
		return false; /* line offsets are 32-bit: no function is larger than that */
	f->off = base + funcoff;
	r = at(t, f->off, fixed);
	if (!r)
		return false;
	nameoff = (int32_t)ld(t, r + e0, 4);
	f->pcfile = (uint32_t)ld(t, r + e0 + 16, 4);
	f->pcln = (uint32_t)ld(t, r + e0 + 20, 4);
	f->npcdata = (uint32_t)ld(t, r + e0 + 24, 4);
	f->cu_offset = t->version >= GO_1_16 ? (uint32_t)ld(t, r + e0 + 28, 4) : 0;
	f->nfuncdata = r[fixed - 1];
	f->pcdata_off = f->off + fixed;
	if (f->npcdata > t->size / 4 || !at(t, f->pcdata_off, (uint64_t)f->npcdata * 4))
		return false;
	f->funcdata_off = f->pcdata_off + (uint64_t)f->npcdata * 4;
	if (t->version < GO_1_18) /* pointers, aligned within the (aligned) table */
		f->funcdata_off = (f->funcdata_off + p - 1) & ~(uint64_t)(p - 1);
	if (nameoff < 0)
		return false;
	f->name = cstr(t, t->funcnames_off + (uint64_t)nameoff);
	return f->name != NULL;
}

/* ---- pc-value tables ------------------------------------------------------- */

static bool uvarint(const unsigned char **pp, const unsigned char *lim, uint32_t *out)
{
	const unsigned char *p = *pp;
	uint32_t v = 0;

	for (unsigned shift = 0; p < lim && shift < 35; shift += 7) {
		unsigned char b = *p++;

		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*out = v;
			return true;
		}
	}
	return false;
}

/*
 * Decode the pc-value table at off (in the pctab) for a function at entry
 * ending at end: value starts at -1, and each step adds a zig-zag delta and
 * advances the pc by delta * quantum. Runs past end are cut. Each step is
 * taken from *budget: functions may share a table (the linker dedups them),
 * so a corrupt pclntab could otherwise make every function decode the whole
 * table, in time quadratic in its size.
 */
int gotab_pcvalue(const struct gotab *t, uint32_t off, uint64_t entry, uint64_t end,
		  struct pc_runs *out, uint64_t *budget)
{
	const unsigned char *p, *lim = t->base + t->size;
	uint64_t pc = entry;
	int32_t val = -1;
	bool first = true;

	out->n = 0;
	if (off == 0)
		return 0; /* no table: the value is unknown throughout */
	p = at(t, t->pctab_off + off, 1);
	if (!p)
		return LIDIA_E_GO;
	while (pc < end) {
		uint32_t uv, pcd;
		int err;

		/* As the runtime: a single zero byte (not any encoding of 0) ends the table. */
		if (p < lim && *p == 0 && !first)
			break;
		if (!uvarint(&p, lim, &uv) || !*budget)
			return LIDIA_E_GO;
		--*budget;
		first = false;
		/* Zig-zag, wrapping as Go's int32 arithmetic does. */
		val = (int32_t)((uint32_t)val + (-(uv & 1) ^ (uv >> 1)));
		if (!uvarint(&p, lim, &pcd))
			return LIDIA_E_GO;
		pc += (uint64_t)pcd * t->quantum;
		if ((err = LIDIA_GROW(out->v, out->n + 1, out->cap)))
			return err;
		out->v[out->n++] = (struct pc_run){ pc < end ? pc : end, val };
	}
	return 0;
}

int32_t pc_runs_value(const struct pc_runs *r, uint64_t pc)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].end > pc)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < r->n ? r->v[lo].val : -1;
}

uint32_t gotab_pcdata(const struct gotab *t, const struct gofunc *f, unsigned k)
{
	const unsigned char *p = k < f->npcdata ? at(t, f->pcdata_off + 4 * (uint64_t)k, 4) : NULL;

	return p ? (uint32_t)ld(t, p, 4) : 0;
}

/* ---- Files and the inline tree ----------------------------------------------- */

const char *gotab_file(const struct gotab *t, const struct gofunc *f, int32_t idx)
{
	const unsigned char *p;
	uint64_t off;

	if (idx < 0)
		return NULL;
	if (t->version == GO_1_2) {
		if ((uint64_t)idx >= t->nfiles ||
		    !(p = at(t, t->filetab_off + 4 * (uint64_t)idx, 4)))
			return NULL;
		return cstr(t, ld(t, p, 4));
	}
	p = at(t, t->cutab_off + 4 * ((uint64_t)f->cu_offset + (uint64_t)idx), 4);
	if (!p)
		return NULL;
	off = ld(t, p, 4);
	if (off == 0xffffffff)
		return NULL;
	return cstr(t, t->filetab_off + off);
}

bool gotab_inltree(const struct gotab *t, const struct gofunc *f, uint64_t *va)
{
	const unsigned char *p;
	uint64_t off;

	/* A 1.2 header of a release not known has no slots: no frames rather than wrong ones. */
	if (!t->inl_funcdata || f->nfuncdata <= t->inl_funcdata || f->npcdata <= t->inl_pcdata)
		return false;
	if (t->version >= GO_1_18) {
		p = at(t, f->funcdata_off + 4 * (uint64_t)t->inl_funcdata, 4);
		if (!p || !t->have_gofunc)
			return false;
		off = ld(t, p, 4);
		if (off == 0xffffffff)
			return false;
		*va = t->gofunc + off;
		return true;
	}
	off = f->funcdata_off + (uint64_t)t->ptr_size * t->inl_funcdata;
	if (!at(t, off, t->ptr_size) || !t->read_word)
		return false;
	return t->read_word(t->ctx, t->va + off, va) && *va != 0;
}

/* Its parent, file and line are found at parentPc (Go 1.20 keeps no others). */
bool gotab_inl(const struct gotab *t, uint64_t tree, int32_t i, const char **name,
	       uint32_t *parent_pc)
{
	unsigned size = gotab_inl_size(t);
	const unsigned char *p =
		t->read_va ? t->read_va(t->ctx, tree + (uint64_t)i * size, size) : NULL;
	uint64_t name_base = t->version == GO_1_2 ? 0 : t->funcnames_off;
	int64_t nameoff;

	if (!p)
		return false;
	if (t->version >= GO_1_20) {
		nameoff = (int32_t)ld(t, p + 4, 4);
		*parent_pc = (uint32_t)ld(t, p + 8, 4);
	} else {
		nameoff = (int32_t)ld(t, p + 12, 4);
		*parent_pc = (uint32_t)ld(t, p + 16, 4);
	}
	if (nameoff < 0)
		return false;
	*name = cstr(t, name_base + (uint64_t)nameoff);
	return *name != NULL;
}
