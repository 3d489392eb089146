/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: Go's pclntab, the one table a Go program keeps even when
 * stripped. Every function with its name and extent, its inline tree as
 * depth > 0 ranges and its pc→file and pc→line tables as line tables.
 *
 * Layouts (Go's runtime/symtab.go and cmd/internal/objfile), by header magic:
 *   0xfffffffb  Go 1.2-1.15: one blob; names, files and pc tables at offsets
 *               from its start; functab of (entry, funcoff) words
 *   0xfffffffa  Go 1.16-1.17: header lists the offsets of funcnametab, cutab,
 *               filetab, pctab and the function table; files per compile unit
 *   0xfffffff0  Go 1.18-1.19: as 1.16 plus runtime.text in the header;
 *               functab of u32 (entryoff, funcoff); funcdata are u32 offsets
 *               from go:func.*
 *   0xfffffff1  Go 1.20+: _func gains startLine; inline entries lose their
 *               parent, file and line (a call site is found at parentPc)
 * Every offset read from the table is checked against the blob before use.
 */
#include <stdio.h>

#include "builder.h"
#include "elf_mem.h"
#include "frames.h"
#include "gopclntab.h"
#include "internal.h"
#include "name_blocks.h"

#define PCDATA_INLTREEINDEX 2
#define FUNCDATA_INLTREE 3

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

/* One _func record, decoded. */
struct gofunc {
	uint64_t entry, end;
	uint64_t off; /* of the record in the blob */
	const char *name;
	uint32_t pcfile, pcln, npcdata, cu_offset;
	unsigned nfuncdata;
	uint64_t pcdata_off; /* in the blob */
	uint64_t funcdata_off;
};

/* A NUL-terminated string at off in the blob, or NULL. */
static const char *cstr(const struct gotab *t, uint64_t off)
{
	const unsigned char *p = at(t, off, 1);

	if (!p || !memchr(p, 0, t->size - off))
		return NULL;
	return (const char *)p;
}

static bool read_func(const struct gotab *t, uint64_t i, struct gofunc *f)
{
	unsigned p = t->ptr_size;
	unsigned e0 = t->version >= GO_1_18 ? 4 : p; /* size of the entry field */
	unsigned fixed = e0 + 28 + (t->version >= GO_1_16 ? 4 : 0) + (t->version >= GO_1_20 ? 4 : 0) + 4;
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

/*
 * A function name as the runtime prints it (funcNameForPrint, Go 1.21+):
 * instantiation shapes between the first '[' and the last ']' become
 * "[...]". Go 1.18-1.20 linkers already wrote names so; this makes every
 * version's names agree with the runtime's frames and pprof's profiles.
 */
static const char *print_name(struct name_block **blocks, const char *name)
{
	const char *open = strchr(name, '['), *close;
	char buf[512];

	if (!open || !(close = strrchr(name, ']')) || close < open ||
	    (close - open == 4 && !strncmp(open, "[...]", 5)))
		return name;
	if ((size_t)(open - name) + 5 + strlen(close + 1) + 1 > sizeof(buf))
		return name;
	snprintf(buf, sizeof(buf), "%.*s[...]%s", (int)(open - name), name, close + 1);
	return name_blocks_str(blocks, buf, NULL) ?: name;
}

/* ---- pc-value tables ------------------------------------------------------- */

/* A run of a pc-value table: value applies up to (not including) end. */
struct run {
	uint64_t end;
	int32_t val;
};

struct runs {
	struct run *v;
	size_t n, cap;
};

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
static int decode_pcvalue(const struct gotab *t, uint32_t off, uint64_t entry, uint64_t end,
			  struct runs *out, uint64_t *budget)
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
		void *vp;
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
		vp = out->v;
		if ((err = lidia_grow(&vp, &out->cap, out->n + 1, sizeof(*out->v))))
			return err;
		out->v = vp;
		out->v[out->n++] = (struct run){ pc < end ? pc : end, val };
	}
	return 0;
}

/* The value of a decoded table at pc (-1 past its end). */
static int32_t run_value(const struct runs *r, uint64_t pc)
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

/* ---- Files and the inline tree ----------------------------------------------- */

static const char *file_name(const struct gotab *t, const struct gofunc *f, int32_t idx)
{
	const unsigned char *p;
	uint64_t off;

	if (idx < 0)
		return NULL;
	if (t->version == GO_1_2) {
		if ((uint64_t)idx >= t->nfiles || !(p = at(t, t->filetab_off + 4 * (uint64_t)idx, 4)))
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

/* Where function f's inline tree is in the program, or false when it has none. */
static bool inltree_va(const struct gotab *t, const struct gofunc *f, uint64_t *va)
{
	const unsigned char *p;

	/*
	 * The 1.2 header (Go 1.2 to 1.15) does not say which release wrote it,
	 * and the inline tree's slots and layout changed within that span (1.9,
	 * 1.12, 1.13): no inline frames from it rather than wrong ones.
	 */
	if (t->version == GO_1_2 || f->nfuncdata <= FUNCDATA_INLTREE ||
	    f->npcdata <= PCDATA_INLTREEINDEX)
		return false;
	if (t->version >= GO_1_18) {
		uint64_t off;

		p = at(t, f->funcdata_off + 4 * FUNCDATA_INLTREE, 4);
		if (!p || !t->have_gofunc)
			return false;
		off = ld(t, p, 4);
		if (off == 0xffffffff)
			return false;
		*va = t->gofunc + off;
		return true;
	}
	if (!at(t, f->funcdata_off + (uint64_t)t->ptr_size * FUNCDATA_INLTREE, t->ptr_size) ||
	    !t->read_word)
		return false;
	return t->read_word(t->ctx, t->va + f->funcdata_off + (uint64_t)t->ptr_size * FUNCDATA_INLTREE,
			    va) &&
	       *va != 0;
}

/* Read inline-tree entry i: its name and parentPc (its parent is found there). */
static bool read_inl(const struct gotab *t, uint64_t tree, int32_t i, struct frame_node *out,
		     uint32_t *parent_pc)
{
	unsigned size = t->version >= GO_1_20 ? 16 : 20;
	const unsigned char *p = t->read_va ? t->read_va(t->ctx, tree + (uint64_t)i * size, size) : NULL;
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
	out->name = cstr(t, name_base + (uint64_t)nameoff);
	return out->name != NULL;
}

struct scratch {
	struct runs file, line, inl;
	uint64_t budget; /* pc-value steps and inline nodes left to decode (see decode_pcvalue) */
	struct frame_node *nodes;
	size_t cap_nodes;
	struct frames fr;
	struct name_block *names; /* names as printed, for the current function */
};

/*
 * The inline nodes of f: names from the tree, and parent, call file and call
 * line from the tables at parentPc, as the runtime's inline unwinder finds them.
 */
static int read_nodes(const struct gotab *t, const struct gofunc *f, struct scratch *s,
		      size_t *nnodes)
{
	const unsigned char *pd;
	int32_t max = -1;
	uint64_t tree;
	void *p;
	int err;

	*nnodes = 0;
	s->inl.n = 0;
	if (!inltree_va(t, f, &tree))
		return 0;
	pd = at(t, f->pcdata_off + 4 * PCDATA_INLTREEINDEX, 4);
	if ((err = decode_pcvalue(t, pd ? (uint32_t)ld(t, pd, 4) : 0, f->entry, f->end, &s->inl,
				  &s->budget)))
		return err;
	for (size_t i = 0; i < s->inl.n; i++)
		if (s->inl.v[i].val > max)
			max = s->inl.v[i].val;
	if (max < 0)
		return 0;
	/* Each inlined call covers at least one pc: more of them than bytes is a bad table. */
	if ((uint64_t)max >= f->end - f->entry || (uint64_t)max >= s->budget)
		return LIDIA_E_GO;
	s->budget -= (uint64_t)max + 1;
	/* The last entry must be readable before room is made for all of them. */
	if (!t->read_va ||
	    !t->read_va(t->ctx, tree + (uint64_t)max * (t->version >= GO_1_20 ? 16 : 20),
			t->version >= GO_1_20 ? 16 : 20))
		return LIDIA_E_GO;
	p = s->nodes;
	if ((err = lidia_grow(&p, &s->cap_nodes, (size_t)max + 1, sizeof(*s->nodes))))
		return err;
	s->nodes = p;
	for (int32_t i = 0; i <= max; i++) {
		struct frame_node *n = &s->nodes[i];
		uint32_t parent_pc;
		uint64_t pc;
		int32_t ln;

		if (!read_inl(t, tree, i, n, &parent_pc))
			return LIDIA_E_GO;
		n->name = print_name(&s->names, n->name);
		pc = f->entry + parent_pc;
		n->parent = run_value(&s->inl, pc);
		if (n->parent < -1)
			return LIDIA_E_GO;
		ln = run_value(&s->line, pc);
		n->call_line = ln > 0 ? (uint32_t)ln : 0;
		n->call_file = file_name(t, f, run_value(&s->file, pc));
	}
	if (!frames_set_depths(s->nodes, (size_t)max + 1))
		return LIDIA_E_GO;
	*nnodes = (size_t)max + 1;
	return 0;
}

/* Emit one function: its depth-0 range, its inlined calls, their lines. */
static int extract_func(const struct gotab *t, const struct gofunc *f,
			const struct go_extract_opts *opts, struct scratch *s)
{
	size_t ifile = 0, iline = 0, iinl = 0, nnodes = 0;
	uint64_t pc = f->entry;
	int err;

	/* Lines and files are needed for call sites even when not kept. */
	if ((err = decode_pcvalue(t, opts->files || opts->inlines ? f->pcfile : 0, f->entry, f->end,
				  &s->file, &s->budget)) ||
	    (err = decode_pcvalue(t, opts->lines || opts->inlines ? f->pcln : 0, f->entry, f->end,
				  &s->line, &s->budget)))
		return err;
	s->inl.n = 0;
	if (opts->inlines && (err = read_nodes(t, f, s, &nnodes)))
		return err;
	if ((err = frames_begin(&s->fr, print_name(&s->names, f->name), s->nodes, nnodes, f->entry)))
		return err;
	/* Sweep the three tables together, one elementary run at a time. */
	while (pc < f->end) {
		uint64_t end = f->end;
		int32_t file = -1, line = -1, inl = -1;

		while (ifile < s->file.n && s->file.v[ifile].end <= pc)
			ifile++;
		while (iline < s->line.n && s->line.v[iline].end <= pc)
			iline++;
		while (iinl < s->inl.n && s->inl.v[iinl].end <= pc)
			iinl++;
		if (ifile < s->file.n) {
			file = s->file.v[ifile].val;
			end = s->file.v[ifile].end < end ? s->file.v[ifile].end : end;
		}
		if (iline < s->line.n) {
			line = s->line.v[iline].val;
			end = s->line.v[iline].end < end ? s->line.v[iline].end : end;
		}
		if (iinl < s->inl.n) {
			inl = s->inl.v[iinl].val;
			end = s->inl.v[iinl].end < end ? s->inl.v[iinl].end : end;
		}
		err = frames_segment(&s->fr, pc, inl, opts->files ? file_name(t, f, file) : NULL, line);
		if (err)
			return err;
		pc = end;
	}
	return frames_end(&s->fr, f->end);
}

int gotab_extract(struct lidia_builder *b, const struct gotab *t,
		  const struct go_extract_opts *opts, struct intervals *covered,
		  struct go_extract_stats *stats)
{
	struct scratch s = { 0 };
	int err = 0;

	/*
	 * A real table decodes in about one step per two bytes of it (each
	 * function its own tables, or identical ones); many times that is a
	 * corrupt one, whose later functions keep their names and extents only.
	 */
	s.budget = 16 * t->size + (1u << 20);
	frames_init(&s.fr, b, opts->lines, opts->files);
	for (uint64_t i = 0; i < t->nfunc && !err; i++) {
		size_t before = lidia_builder_count(b);
		struct gofunc f;

		if (!read_func(t, i, &f)) {
			stats->bad_functions++;
			continue;
		}
		if (f.end == f.entry)
			continue;
		name_blocks_reset(&s.names, false);
		err = extract_func(t, &f, opts, &s);
		if (err == LIDIA_E_GO) {
			/*
			 * A malformed function costs its inline frames and lines only:
			 * take back what it added and keep its name and extent.
			 */
			struct lidia_range_desc r = { .va = f.entry, .length = f.end - f.entry,
						      .func = print_name(&s.names, f.name) };

			builder_truncate(b, before);
			stats->bad_functions++;
			err = lidia_builder_add(b, &r);
		}
		if (!err)
			err = intervals_add(covered, f.entry, f.end);
		if (!err)
			stats->functions++;
	}
	stats->inline_ranges += s.fr.inline_ranges;
	stats->line_rows += s.fr.line_rows;
	free(s.file.v);
	free(s.line.v);
	free(s.inl.v);
	free(s.nodes);
	name_blocks_reset(&s.names, true);
	frames_release(&s.fr);
	return err;
}

/* ---- Finding the table in an ELF image -------------------------------------------- */

static const unsigned char *elf_read_va_cb(void *ctx, uint64_t va, uint64_t size)
{
	return elf_va_ptr(ctx, va, size);
}

static bool elf_read_word_cb(void *ctx, uint64_t va, uint64_t *value)
{
	const struct lidia_elf *e = ctx;

	return elf_read_word(e, va, e->ehdr.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4, value);
}

/*
 * A parsed header is believed only when its first functions read back:
 * entries ascending, records and names inside the table.
 */
static bool plausible(const struct gotab *t)
{
	uint64_t prev = 0, n = t->nfunc < 16 ? t->nfunc : 16;

	if (t->nfunc == 0)
		return false;
	for (uint64_t i = 0; i < n; i++) {
		struct gofunc f;

		if (!read_func(t, i, &f) || f.entry < prev)
			return false;
		prev = f.entry;
	}
	return true;
}

/*
 * runtime.text in a 1.18+ header is a pointer: where the linker left it to
 * a RELATIVE relocation (lld does, GNU ld and Go's linker write it in place
 * as well), the relocation's addend is the value.
 */
static void text_start_relocated(const struct lidia_elf *e, struct gotab *t)
{
	uint64_t v;

	if (t->version >= GO_1_18 && !t->text_start &&
	    elf_read_word(e, t->va + 8 + 2 * (uint64_t)t->ptr_size, t->ptr_size, &v) && v)
		t->text_start = v;
}

/* Word k (pointer-sized) of the module data at md. */
static bool md_word(const struct lidia_elf *e, const struct gotab *t, uint64_t md, unsigned k,
		    uint64_t *v)
{
	return elf_read_word(e, md + (uint64_t)k * t->ptr_size, t->ptr_size, v);
}

/*
 * Check that md is runtime.firstmoduledata for t: its slices point at t's
 * tables. Fills the blob's size and, for 1.18+, go:func.* from it.
 */
static bool check_moduledata(const struct lidia_elf *e, struct gotab *t, uint64_t md,
			     uint64_t *blob_size)
{
	uint64_t w;

	if (!md_word(e, t, md, 0, &w) || w != t->va)
		return false;
	if (t->version == GO_1_2) {
		/* pclntable []byte, ftab []functab, ... */
		uint64_t len;

		if (!md_word(e, t, md, 1, &len) || !md_word(e, t, md, 3, &w) ||
		    w != t->va + t->pcln_off)
			return false;
		*blob_size = len;
		return true;
	}
	/* pcHeader, funcnametab, cutab, filetab, pctab, pclntable, ftab, ... */
	if (!md_word(e, t, md, 1, &w) || w != t->va + t->funcnames_off ||
	    !md_word(e, t, md, 4, &w) || w != t->va + t->cutab_off ||
	    !md_word(e, t, md, 7, &w) || w != t->va + t->filetab_off ||
	    !md_word(e, t, md, 10, &w) || w != t->va + t->pctab_off ||
	    !md_word(e, t, md, 13, &w) || w != t->va + t->pcln_off || !md_word(e, t, md, 14, &w))
		return false;
	*blob_size = t->pcln_off + w;
	if (t->version >= GO_1_18) {
		/* minpc..., text at word 22; go:func.* after covctrs (1.20+), end, gcdata, gcbss, types, etypes, rodata */
		unsigned k = t->version >= GO_1_20 ? 40 : 38;

		if (!md_word(e, t, md, 22, &w) || w != t->text_start || !md_word(e, t, md, k, &w))
			return false;
		t->gofunc = w;
		t->have_gofunc = true;
	}
	return true;
}

/* Search the writable segments (and RELATIVE relocations) for the module data. */
static bool find_moduledata(const struct lidia_elf *e, struct gotab *t, uint64_t *blob_size)
{
	uint64_t md, sites[8], scanned = 0;
	size_t n;

	if (elf_symbol_value(e, "runtime.firstmoduledata", &md) &&
	    check_moduledata(e, t, md, blob_size))
		return true;
	if (elf_getphdrnum(e->elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		const unsigned char *p;

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_W))
			continue;
		/* Segments overlap only in corrupt files: never scan more than the file. */
		if (ph.p_filesz > e->size)
			continue; /* cannot be in the file */
		if ((scanned += ph.p_filesz) > e->size)
			break;
		p = elf_va_ptr(e, ph.p_vaddr, ph.p_filesz);
		if (!p)
			continue;
		for (uint64_t off = (t->ptr_size - ph.p_vaddr % t->ptr_size) % t->ptr_size;
		     off + t->ptr_size <= ph.p_filesz; off += t->ptr_size)
			if (elf_load(e, p + off, t->ptr_size) == t->va &&
			    check_moduledata(e, t, ph.p_vaddr + off, blob_size))
				return true;
	}
	n = elf_relative_sites(e, t->va, sites, ARRAY_SIZE(sites));
	for (size_t i = 0; i < n; i++)
		if (check_moduledata(e, t, sites[i], blob_size))
			return true;
	return false;
}

/*
 * Scan the loaded segments for a header that some module data points at.
 * Each candidate that reads back costs a scan of the writable segments: a
 * few are tried (a Go program has one table), not every one a corrupt or
 * hostile file might hold.
 */
static bool scan_for_table(const struct lidia_elf *e, struct gotab *t)
{
	unsigned ptr = e->ehdr.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4, tries = 0;
	bool be = elf_big_endian(e);
	uint64_t scanned = 0;
	size_t n;

	if (elf_getphdrnum(e->elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		const unsigned char *p;

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD || ph.p_filesz > e->size)
			continue;
		if ((scanned += ph.p_filesz) > e->size)
			break; /* segments that overlap: a corrupt file, scanned once */
		p = elf_va_ptr(e, ph.p_vaddr, ph.p_filesz);
		if (!p)
			continue;
		for (uint64_t off = (ptr - ph.p_vaddr % ptr) % ptr; off + 16 <= ph.p_filesz; off += ptr) {
			uint64_t blob;

			/* Cheap filter: the magic's top bytes are 0xff ff ff and bytes 4-5 zero. */
			if (p[off + 4] || p[off + 5] || p[off + 7] != ptr ||
			    (be ? p[off] != 0xff || p[off + 1] != 0xff || p[off + 2] != 0xff
				: p[off + 3] != 0xff || p[off + 2] != 0xff || p[off + 1] != 0xff))
				continue;
			if (gotab_parse(t, p + off, ph.p_filesz - off, ph.p_vaddr + off, be))
				continue;
			text_start_relocated(e, t);
			if (!plausible(t))
				continue;
			if (++tries > 16)
				return false;
			t->read_va = elf_read_va_cb;
			t->read_word = elf_read_word_cb;
			t->ctx = (void *)e;
			if (find_moduledata(e, t, &blob) && blob <= t->size) {
				t->size = blob;
				return true;
			}
		}
	}
	return false;
}

/* Go's linker always writes its build ID note (owner "Go", type 4), stripped or not. */
static bool has_go_note(const struct lidia_elf *e)
{
	const unsigned char *raw = (const unsigned char *)elf_rawfile(e->elf, NULL);
	uint64_t size, scanned = 0;
	size_t n;

	if (elf_section_size(e, ".note.go.buildid", &size))
		return true;
	if (!raw || elf_getphdrnum(e->elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		uint64_t off;

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
		    ph.p_offset > e->size || ph.p_filesz > e->size - ph.p_offset)
			continue;
		if ((scanned += ph.p_filesz) > e->size)
			break; /* notes that overlap: a corrupt file */
		/* Notes: namesz, descsz, type (4 bytes each), then name and desc, 4-aligned. */
		for (off = 0; off + 12 <= ph.p_filesz;) {
			const unsigned char *p = raw + ph.p_offset + off;
			uint64_t namesz = elf_load(e, p, 4), descsz = elf_load(e, p + 4, 4);

			if (elf_load(e, p + 8, 4) == 4 && namesz == 3 && off + 15 <= ph.p_filesz &&
			    !memcmp(p + 12, "Go", 3))
				return true;
			off += 12 + ((namesz + 3) & ~3ull) + ((descsz + 3) & ~3ull);
		}
	}
	return false;
}

int gotab_find(struct gotab *t, const struct lidia_elf *e)
{
	static const char *const sections[] = { ".gopclntab", ".data.rel.ro.gopclntab" };
	bool be = elf_big_endian(e), found = false;
	const unsigned char *data;
	uint64_t va, size, end, blob;

	for (size_t i = 0; i < ARRAY_SIZE(sections) && !found; i++)
		found = elf_section_data(e, sections[i], &va, &data, &size) &&
			!gotab_parse(t, data, size, va, be);
	/* Symbol look-ups and scans are for what Go's linker wrote, not every ELF. */
	if (!found && !has_go_note(e))
		return 0;
	if (!found && elf_symbol_value(e, "runtime.pclntab", &va) &&
	    elf_symbol_value(e, "runtime.epclntab", &end) && end > va &&
	    (data = elf_va_ptr(e, va, end - va)))
		found = !gotab_parse(t, data, end - va, va, be);
	if (found) {
		t->read_va = elf_read_va_cb;
		t->read_word = elf_read_word_cb;
		t->ctx = (void *)e;
		text_start_relocated(e, t);
		if (!plausible(t))
			return LIDIA_E_GO;
		if (t->version >= GO_1_18) {
			/* Where the inline trees are: the symbol, or the module data's word. */
			if (elf_symbol_value(e, "go:func.*", &t->gofunc) ||
			    elf_symbol_value(e, "go.func.*", &t->gofunc))
				t->have_gofunc = true;
			else
				find_moduledata(e, t, &blob);
		}
		return 1;
	}
	return scan_for_table(e, t) ? 1 : 0;
}
