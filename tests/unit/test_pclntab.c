/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Go pclntab reader (lib/go/pclntab.c, go_extract.c) on synthetic tables.
 *
 * No toolchain at hand makes the old layouts, so this test writes them
 * itself from the documented formats (Go's runtime/symtab.go, runtime2.go
 * and debug/gosym/pclntab.go of each release):
 *
 *   0xfffffffb (1.2-1.15)  header word nfunc; functab of (entry, funcoff) words
 *                          right after it, then the end pc and a u32 filetab
 *                          offset; names, files, pc tables and funcoff at
 *                          offsets from the blob's start; filetab[0] = count
 *   0xfffffffa (1.16-1.17) header words nfunc nfiles funcnametab cutab filetab
 *                          pctab pclntab; functab of words in the pclntab;
 *                          files through the compile unit's cutab slice
 *   0xfffffff0 (1.18-1.19) as 1.16 with runtime.text after nfiles; functab of
 *                          u32 (entryoff, funcoff)
 *   0xfffffff1 (1.20+)     as 1.18; _func gains startLine
 *
 * _func: entry (uintptr; u32 entryoff since 1.18), nameoff, args,
 * deferreturn, pcsp, pcfile, pcln, npcdata (i32 each), cuOffset (1.16+),
 * startLine (1.20+), funcID, flag/pad, pad, nfuncdata (u8 each), then
 * npcdata u32 pc-table offsets and nfuncdata funcdata: pointers aligned to
 * the pointer size before 1.18, u32 offsets from go:func.* (~0: none) since.
 * pcdata[2] is the inline-tree index table and funcdata[3] the inline tree:
 * 20-byte {parent i16, funcID u8, pad, file i32, line i32, func_ i32,
 * parentPc i32} before 1.20, 16-byte {funcID u8, pad[3], nameOff i32,
 * parentPc i32, startLine i32} since; the tree lives outside the blob and is
 * served by the read_va/read_word callbacks. A pc-value table is a list of
 * (zig-zag varint value delta, varint pc delta / quantum) pairs from value -1
 * at the entry, ended by a 0 byte.
 *
 * The 0xfffffffb header does not say which release wrote it, and the inline
 * slots moved within its span: Go 1.12 used pcdata[1]/funcdata[2], Go
 * 1.13-1.15 pcdata[2]/funcdata[4], both with the 20-byte entries above (Go
 * 1.9-1.11: 16-byte entries without parentPc, not read). Its images are laid
 * out for a release (layout.release: 12 or 13; 0 and 11 with 1.13's slots)
 * and the reader is told a release with gotab_set_release, as
 * pclntab_find.c does from runtime.buildVersion: inline frames for 12 and
 * 13-15, none for any other release or when the image and the release told
 * disagree (the slots then hold no tree), never wrong ones.
 *
 * One small program (three functions, one with a two-deep inline chain, one
 * with a second file mid-function, two compile units) is laid out for every
 * version x pointer size x byte order, extracted, written and read back:
 * names, extents, lines, files and inline chains are checked by lookup.
 * Then malformed tables: truncations at every length, out-of-range header
 * offsets, huge counts, bad name offsets, pc tables off the end, overlong
 * varints, inline-tree cycles and indices past the tree, random byte flips.
 *
 * With PCLNTAB_CORPUS_DIR set, the program also writes the images (with the
 * inline tree inside the blob, at the addresses tests/fuzz/fuzz_pclntab.c
 * serves) into that directory: see tests/fuzz/corpus/pclntab/README.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "builder.h"
#include "go_extract.h"
#include "intervals.h"
#include "lidia.h"
#include "unit.h"

#define TEXT 0x401000u	  /* entry of the first function */
#define BLOB_VA 0x4c0000u /* the pclntab */
#define TREE_VA 0x520000u /* the inline trees (go:func.* for 1.18+) */
#define FUZZ_VA 0x10000u  /* where fuzz_pclntab.c maps its input */

/* ---- A growable byte buffer with the image's byte order ---- */

struct bb {
	unsigned char *p;
	size_t n, cap;
	bool be;
};

static void bb_reserve(struct bb *b, size_t more)
{
	if (b->n + more <= b->cap)
		return;
	while (b->n + more > b->cap)
		b->cap = b->cap ? b->cap * 2 : 256;
	b->p = realloc(b->p, b->cap);
	if (!b->p) {
		perror("realloc");
		exit(2);
	}
}

static void bb_set(struct bb *b, size_t off, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		b->p[off + (b->be ? n - 1 - i : i)] = (unsigned char)(v >> (8 * i));
}

static size_t bb_put(struct bb *b, uint64_t v, unsigned n)
{
	size_t off = b->n;

	bb_reserve(b, n);
	b->n += n;
	bb_set(b, off, v, n);
	return off;
}

static size_t bb_bytes(struct bb *b, const void *p, size_t n)
{
	size_t off = b->n;

	bb_reserve(b, n);
	memcpy(b->p + b->n, p, n);
	b->n += n;
	return off;
}

static size_t bb_str(struct bb *b, const char *s)
{
	return bb_bytes(b, s, strlen(s) + 1);
}

static void bb_align(struct bb *b, unsigned a)
{
	while (b->n % a)
		bb_put(b, 0, 1);
}

static void bb_uvarint(struct bb *b, uint32_t v)
{
	while (v >= 0x80) {
		bb_put(b, (v & 0x7f) | 0x80, 1);
		v >>= 7;
	}
	bb_put(b, v, 1);
}

static uint64_t get(bool be, const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[be ? n - 1 - i : i] << (8 * i);
	return v;
}

/* ---- The program: functions, their rows and inline trees ---- */

/* Files, by global number; compile unit 0 has the first three, unit 1 the last two. */
static const char *const files[] = { "/src/main.go", "/src/util.go", "/go/src/strings/inner.go",
				     "/src/leaf.go", "/gen/gen.go" };
#define NFILES 5

/* One run of a function: up to end (offset from entry), in file, at line, inline index inl. */
struct row {
	uint32_t end;
	int32_t file, line, inl;
};

struct node {
	const char *name;
	int32_t parent; /* pre-1.20 only; the reader derives it from parent_pc */
	uint32_t parent_pc;
	int32_t call_file, call_line;
};

#define MAXROWS 12
#define MAXNODES 4

struct func {
	const char *name;
	uint32_t off, size; /* from TEXT */
	int cu;
	bool inl_slots; /* npcdata 3, nfuncdata 4 (else 2 and 2) */
	size_t nrows, nnodes;
	struct row rows[MAXROWS];
	struct node nodes[MAXNODES];
};

#define NF 3
#define TEXT_SIZE 0xc0u

struct program {
	struct func f[NF];
};

static const struct program base_program = { {
	{ "main.main",
	  0x00,
	  0x40,
	  0,
	  false,
	  3,
	  0,
	  { { 0x10, 0, 10, -1 }, { 0x20, 0, 11, -1 }, { 0x40, 0, 12, -1 } },
	  { { 0 } } },
	{ "main.outer",
	  0x40,
	  0x60,
	  0,
	  true,
	  8,
	  2,
	  { { 0x08, 0, 20, -1 },
	    { 0x10, 0, 21, -1 }, /* main.mid is called here */
	    { 0x18, 1, 30, 0 },
	    { 0x20, 1, 31, 0 }, /* strings.inner is called here */
	    { 0x30, 2, 40, 1 },
	    { 0x38, 2, 41, 1 },
	    { 0x40, 1, 32, 0 },
	    { 0x60, 0, 22, -1 } },
	  { { "main.mid", -1, 0x08, 0, 21 }, { "strings.inner", 0, 0x18, 1, 31 } } },
	{ "main.leaf",
	  0xa0,
	  0x20,
	  1,
	  true,
	  2,
	  0,
	  { { 0x10, 3, 50, -1 }, { 0x20, 4, 7, -1 } },
	  { { 0 } } },
} };

/* The file number a pcfile table holds for global file g. */
static int32_t file_index(int version, int cu, int32_t g)
{
	if (g < 0)
		return g;
	if (version == GO_1_2)
		return g + 1; /* 1-based: filetab[0] is the count */
	return cu == 0 ? g : g - 3;
}

/* ---- The layout writer ---- */

struct layout;

/* The inline slots: pcdata (index table) and funcdata (tree) of l's release. */
static void inl_slots(const struct layout *l, unsigned *sp, unsigned *sf);

struct layout {
	int version;
	unsigned release; /* 0xfffffffb: the Go release (minor) it is laid out for */
	unsigned ptr, quantum;
	bool be;
	uint64_t va;	   /* of the blob */
	bool tree_in_blob; /* the fuzz corpus: inline trees appended to the blob */
};

struct image {
	struct layout l;
	struct bb blob, tree;
	uint64_t tree_va;
	size_t func_rec[NF];	/* blob offset of each _func */
	size_t fld_nameoff[NF]; /* blob offsets of fields */
	size_t fld_pcfile[NF], fld_pcln[NF], fld_pcinl[NF], fld_npcdata[NF];
	size_t fld_funcoff[NF], fld_entry[NF + 1];
	size_t pctab_base;		/* pc-table offsets are from here */
	size_t names_base;		/* name offsets are from here */
	size_t hdr_words;		/* blob offset of the first header word */
	size_t tree_node_off[MAXNODES]; /* in tree, of F1's nodes */
};

static void inl_slots(const struct layout *l, unsigned *sp, unsigned *sf)
{
	*sp = l->version == GO_1_2 && l->release == 12 ? 1 : 2;
	*sf = l->version != GO_1_2 ? 3 : l->release == 12 ? 2 : 4;
}

static uint32_t zigzag(int32_t d)
{
	return ((uint32_t)d << 1) ^ (uint32_t)(d >> 31);
}

/*
 * Encode the value column sel (0 file, 1 line, 2 inl) of f's rows; the offset
 * from base, or 0 for no table. Equal neighbours merge, as Go's linker does.
 */
static uint32_t put_table(struct bb *b, size_t base, const struct layout *l, const struct func *f,
			  int sel)
{
	size_t off = b->n - base;
	int32_t prev = -1;
	uint32_t pc = 0;

	for (size_t i = 0; i < f->nrows;) {
		int32_t v = sel == 0   ? file_index(l->version, f->cu, f->rows[i].file)
			    : sel == 1 ? f->rows[i].line
				       : f->rows[i].inl;
		size_t j = i;

		while (j + 1 < f->nrows &&
		       (sel == 0   ? file_index(l->version, f->cu, f->rows[j + 1].file)
			: sel == 1 ? f->rows[j + 1].line
				   : f->rows[j + 1].inl) == v)
			j++;
		bb_uvarint(b, zigzag((int32_t)((uint32_t)v -
					       (uint32_t)prev))); /* wraps, as Go's int32 does */
		bb_uvarint(b, (f->rows[j].end - pc) / l->quantum);
		pc = f->rows[j].end;
		prev = v;
		i = j + 1;
	}
	bb_put(b, 0, 1);
	return (uint32_t)off;
}

static void free_image(struct image *im)
{
	free(im->blob.p);
	free(im->tree.p);
	memset(im, 0, sizeof(*im));
}

/*
 * Lay prog out per l. nameoffs of nodes are needed before the tree is
 * written, so names come first; the tree's address is patched in last.
 */
static void build(struct image *im, const struct layout *l, const struct program *prog)
{
	struct bb *b = &im->blob;
	int v = l->version;
	unsigned p = l->ptr;
	bool v116 = v >= GO_1_16, v118 = v >= GO_1_18, v120 = v >= GO_1_20;
	unsigned nw = v118 ? 8 : v116 ? 7 : 1;
	uint32_t nameoff[NF], node_nameoff[NF][MAXNODES], fileoff[NFILES];
	uint32_t tpcfile[NF], tpcln[NF], tpcinl[NF];
	size_t funcdata_fld[NF] = { 0 }, cutab_off = 0, filetab_off = 0, pctab_off = 0,
	       funcnames_off = 0, pcln_off = 0, filetab_fld = 0;

	memset(im, 0, sizeof(*im));
	im->l = *l;
	b->be = im->tree.be = l->be;

	/* Header. */
	bb_put(b,
	       v == GO_1_2    ? 0xfffffffb
	       : v == GO_1_16 ? 0xfffffffa
	       : v == GO_1_18 ? 0xfffffff0
			      : 0xfffffff1,
	       4);
	bb_put(b, 0, 1);
	bb_put(b, 0, 1);
	bb_put(b, l->quantum, 1);
	bb_put(b, p, 1);
	im->hdr_words = b->n;
	for (unsigned i = 0; i < nw; i++)
		bb_put(b, 0, p);
	bb_set(b, im->hdr_words, NF, p);

	if (v == GO_1_2) {
		/* functab right after the header, then end pc and the filetab offset. */
		for (int i = 0; i < NF; i++) {
			im->fld_entry[i] = bb_put(b, TEXT + prog->f[i].off, p);
			im->fld_funcoff[i] = bb_put(b, 0, p);
		}
		im->fld_entry[NF] = bb_put(b, TEXT + TEXT_SIZE, p);
		filetab_fld = bb_put(b, 0, 4);
	} else {
		/* funcnametab, cutab, filetab, pctab, then the pcln table. */
		funcnames_off = b->n;
	}

	/* Names (1.2: anywhere in the blob; 1.16+: the funcnametab). */
	im->names_base = v == GO_1_2 ? 0 : funcnames_off;
	for (int i = 0; i < NF; i++) {
		nameoff[i] = (uint32_t)(bb_str(b, prog->f[i].name) - im->names_base);
		for (size_t k = 0; k < prog->f[i].nnodes; k++)
			node_nameoff[i][k] =
				(uint32_t)(bb_str(b, prog->f[i].nodes[k].name) - im->names_base);
	}

	/* Files. */
	if (v == GO_1_2) {
		size_t names[NFILES];

		bb_align(b, 4);
		filetab_off = b->n;
		bb_put(b, NFILES + 1, 4);
		for (int i = 0; i < NFILES; i++)
			names[i] = bb_put(b, 0, 4);
		for (int i = 0; i < NFILES; i++)
			bb_set(b, names[i], bb_str(b, files[i]), 4);
		bb_set(b, filetab_fld, filetab_off, 4);
	} else {
		size_t ft;

		bb_align(b, 4);
		cutab_off = b->n;
		/* Unit 0: files 0, 1, 2 and a missing one; unit 1: files 3, 4. */
		size_t slot[6];

		for (int i = 0; i < 6; i++)
			slot[i] = bb_put(b, 0xffffffff, 4);
		filetab_off = ft = b->n;
		for (int i = 0; i < NFILES; i++)
			fileoff[i] = (uint32_t)(bb_str(b, files[i]) - ft);
		bb_set(b, slot[0], fileoff[0], 4);
		bb_set(b, slot[1], fileoff[1], 4);
		bb_set(b, slot[2], fileoff[2], 4);
		bb_set(b, slot[4], fileoff[3], 4);
		bb_set(b, slot[5], fileoff[4], 4);
	}

	/* pc tables. 1.16+: the pctab begins with a 0 byte, offset 0 meaning "none". */
	pctab_off = b->n;
	im->pctab_base = v == GO_1_2 ? 0 : pctab_off;
	if (v != GO_1_2)
		bb_put(b, 0, 1);
	for (int i = 0; i < NF; i++) {
		const struct func *f = &prog->f[i];

		tpcfile[i] = put_table(b, im->pctab_base, l, f, 0);
		tpcln[i] = put_table(b, im->pctab_base, l, f, 1);
		tpcinl[i] = f->nnodes ? put_table(b, im->pctab_base, l, f, 2) : 0;
	}

	/* The pcln table: functab (1.16+), then the _func records. */
	bb_align(b, p);
	pcln_off = b->n;
	if (v != GO_1_2) {
		for (int i = 0; i < NF; i++) {
			im->fld_entry[i] = v118 ? bb_put(b, prog->f[i].off, 4)
						: bb_put(b, TEXT + prog->f[i].off, p);
			im->fld_funcoff[i] = bb_put(b, 0, v118 ? 4 : p);
		}
		im->fld_entry[NF] = v118 ? bb_put(b, TEXT_SIZE, 4) : bb_put(b, TEXT + TEXT_SIZE, p);
	}
	for (int i = 0; i < NF; i++) {
		const struct func *f = &prog->f[i];
		unsigned sp, sf, npcdata, nfuncdata;

		inl_slots(l, &sp, &sf);
		npcdata = f->inl_slots ? sp + 1 : 2;
		nfuncdata = f->inl_slots ? sf + 1 : 2;

		bb_align(b, v118 ? 4 : p);
		im->func_rec[i] = b->n;
		bb_set(b, im->fld_funcoff[i], b->n - (v == GO_1_2 ? 0 : pcln_off), v118 ? 4 : p);
		if (v118)
			bb_put(b, f->off, 4);
		else
			bb_put(b, TEXT + f->off, p);
		im->fld_nameoff[i] = bb_put(b, nameoff[i], 4);
		bb_put(b, 0, 4); /* args */
		bb_put(b, 0, 4); /* deferreturn (1.2: frame) */
		bb_put(b, 0, 4); /* pcsp */
		im->fld_pcfile[i] = bb_put(b, tpcfile[i], 4);
		im->fld_pcln[i] = bb_put(b, tpcln[i], 4);
		im->fld_npcdata[i] = bb_put(b, npcdata, 4);
		if (v116)
			bb_put(b, f->cu ? 4 : 0, 4); /* cuOffset: unit 1 starts at slot 4 */
		if (v120)
			bb_put(b, 1, 4); /* startLine */
		bb_put(b, 0, 1);	 /* funcID */
		bb_put(b, 0, 1);	 /* 1.18+: flag; else pad */
		bb_put(b, 0, 1);	 /* pad */
		bb_put(b, nfuncdata, 1);
		for (unsigned k = 0; k < npcdata; k++) {
			size_t at = bb_put(b, f->inl_slots && k == sp ? tpcinl[i] : 0, 4);

			if (f->inl_slots && k == sp)
				im->fld_pcinl[i] = at;
		}
		if (!v118)
			bb_align(b, p); /* the blob's address is pointer-aligned */
		for (unsigned k = 0; k < nfuncdata; k++) {
			size_t at = v118 ? bb_put(b, 0xffffffff, 4) : bb_put(b, 0, p);

			if (f->inl_slots && k == sf)
				funcdata_fld[i] = at;
		}
	}
	if (v != GO_1_2) {
		uint64_t w[8] = { NF, 6 }, *o = w + (v118 ? 3 : 2);

		if (v118)
			w[2] = TEXT;
		o[0] = funcnames_off;
		o[1] = cutab_off;
		o[2] = filetab_off;
		o[3] = pctab_off;
		o[4] = pcln_off;
		for (unsigned i = 0; i < nw; i++)
			bb_set(b, im->hdr_words + i * p, w[i], p);
	}

	/*
	 * The inline trees: F1's nodes (others have none), in their own buffer
	 * at TREE_VA, or (the fuzz corpus) appended to the blob. go:func.* is
	 * the start of that buffer, or the blob itself.
	 */
	if (l->tree_in_blob)
		bb_align(b, 8);
	im->tree_va = l->tree_in_blob ? l->va : TREE_VA; /* go:func.* */
	for (int i = 0; i < NF; i++) {
		const struct func *f = &prog->f[i];
		struct bb *t = l->tree_in_blob ? b : &im->tree;
		uint64_t node_va = im->tree_va + t->n;

		if (!f->nnodes)
			continue;
		for (size_t k = 0; k < f->nnodes; k++) {
			const struct node *nd = &f->nodes[k];

			im->tree_node_off[k] = t->n;
			if (v120) {
				bb_put(t, 0, 1);
				bb_put(t, 0, 3);
				bb_put(t, node_nameoff[i][k], 4);
				bb_put(t, nd->parent_pc, 4);
				bb_put(t, 1, 4);
			} else {
				bb_put(t, (uint16_t)nd->parent, 2);
				bb_put(t, 0, 1);
				bb_put(t, 0, 1);
				bb_put(t, (uint32_t)file_index(v, f->cu, nd->call_file), 4);
				bb_put(t, (uint32_t)nd->call_line, 4);
				bb_put(t, node_nameoff[i][k], 4);
				bb_put(t, nd->parent_pc, 4);
			}
		}
		if (v118)
			bb_set(b, funcdata_fld[i], node_va - im->tree_va, 4);
		else
			bb_set(b, funcdata_fld[i], node_va, p);
	}
}

/* ---- Reading it back ---- */

struct mem {
	const unsigned char *blob, *tree;
	uint64_t blob_va, tree_va, blob_size, tree_size;
	unsigned ptr;
	bool be;
};

static const unsigned char *mem_read_va(void *ctx, uint64_t va, uint64_t size)
{
	const struct mem *m = ctx;

	if (m->tree && va >= m->tree_va && va - m->tree_va <= m->tree_size &&
	    size <= m->tree_size - (va - m->tree_va))
		return m->tree + (va - m->tree_va);
	if (va >= m->blob_va && va - m->blob_va <= m->blob_size &&
	    size <= m->blob_size - (va - m->blob_va))
		return m->blob + (va - m->blob_va);
	return NULL;
}

static bool mem_read_word(void *ctx, uint64_t va, uint64_t *value)
{
	const struct mem *m = ctx;
	const unsigned char *p = mem_read_va(ctx, va, m->ptr);

	if (!p)
		return false;
	*value = get(m->be, p, m->ptr);
	return true;
}

/* What to extract: an extraction's options. */
struct want {
	bool inlines, lines, files;
};

struct result {
	int parse_err, extract_err;
	struct gotab t;
	struct lidia_extract_stats stats;
	struct intervals covered;
	struct lidia_reader *r;
	void *file;
	size_t file_size;
};

static void free_result(struct result *res)
{
	lidia_reader_close(res->r);
	free(res->file);
	free(res->covered.v);
	memset(res, 0, sizeof(*res));
}

/* The release the reader is told for 1.2-header tables (gotab_set_release); set per layout. */
static unsigned the_release;

/*
 * Parse blob[0..size) and extract it; with a reader on the result when
 * everything succeeded. The reader is opened with the CRC check.
 */
static void run_blob(struct result *res, const unsigned char *blob, size_t size, uint64_t va,
		     const unsigned char *tree, size_t tree_size, uint64_t tree_va, bool be,
		     const struct want *opts, struct mem *m)
{
	struct extract_ctx x = { .inlines = opts->inlines,
				 .lines = opts->lines,
				 .files = opts->files };
	struct lidia_builder *b = NULL;
	struct lidia_reader_opts ro = LIDIA_READER_OPTS(.check_crc = true);
	int err;

	memset(res, 0, sizeof(*res));
	res->parse_err = gotab_parse(&res->t, blob, size, va, be);
	if (res->parse_err)
		return;
	*m = (struct mem){ blob, tree, va, tree_va, size, tree_size, res->t.ptr_size, be };
	res->t.read_va = mem_read_va;
	res->t.read_word = mem_read_word;
	res->t.ctx = m;
	res->t.gofunc = tree_va;
	res->t.have_gofunc = true;
	gotab_set_release(&res->t, the_release);
	if ((err = lidia_builder_new(&b))) {
		res->extract_err = err;
		return;
	}
	x.b = b;
	res->extract_err = gotab_extract(&x, &res->t);
	res->stats = x.st;
	res->covered = x.covered; /* the result's, now */
	x.covered = (struct intervals){ 0 };
	extract_ctx_release(&x);
	if (!res->extract_err && !(err = lidia_builder_finalize(b)) &&
	    !(err = lidia_builder_write_mem(b, &res->file, &res->file_size)))
		err = lidia_reader_open_mem(&res->r, res->file, res->file_size, &ro);
	if (!res->extract_err && err)
		res->extract_err = err;
	lidia_builder_free(b);
}

static const struct want all_opts = { .inlines = true, .lines = true, .files = true };

static struct mem the_mem;

static void run_image(struct result *res, const struct image *im, const struct want *opts)
{
	run_blob(res, im->blob.p, im->blob.n, im->l.va, im->tree.p, im->tree.n, im->tree_va,
		 im->l.be, opts, &the_mem);
}

/* The frames at addr as "func file:line | outer file:line", or "-" for none, "ERR n" on error. */
static const char *frames_at(const struct lidia_reader *r, uint64_t addr)
{
	static char out[1024];
	struct lidia_frame fr[8];
	int n;
	size_t len = 0;

	if (!r)
		return "NO READER";
	n = lidia_reader_lookup(r, addr, fr, 8);
	if (n < 0) {
		snprintf(out, sizeof(out), "ERR %d", n);
		return out;
	}
	if (n == 0)
		return "-";
	out[0] = 0;
	for (int i = 0; i < n && i < 8; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%.*s %.*s:%" PRIu32,
					i ? " | " : "", (int)fr[i].function.len, fr[i].function.ptr,
					(int)fr[i].file.len, fr[i].file.ptr, fr[i].line);
	return out;
}

static const char *label(const struct layout *l)
{
	static char s[64];
	char rel[16] = "";

	if (l->version == GO_1_2)
		snprintf(rel, sizeof(rel), "(go1.%u)", l->release);
	snprintf(s, sizeof(s), "go%s%s/%u-bit %s/q%u",
		 l->version == GO_1_2	 ? "1.2"
		 : l->version == GO_1_16 ? "1.16"
		 : l->version == GO_1_18 ? "1.18"
					 : "1.20",
		 rel, l->ptr * 8, l->be ? "BE" : "LE", l->quantum);
	return s;
}

#define CHECK_FRAMES(res, addr, want, ...)                                                         \
	do {                                                                                       \
		const char *got_ = frames_at((res)->r, (addr));                                    \
		CHECK(!strcmp(got_, (want)), __VA_ARGS__);                                         \
		if (strcmp(got_, (want)))                                                          \
			printf("#   at %#" PRIx64 ": got  \"%s\"\n#   want \"%s\"\n",              \
			       (uint64_t)(addr), got_, (want));                                    \
	} while (0)

/* ---- The well-formed images ---- */

static const struct {
	uint32_t off;
	const char *want;
} expect[] = {
	{ 0x00, "main.main /src/main.go:10" },
	{ 0x18, "main.main /src/main.go:11" },
	{ 0x3f, "main.main /src/main.go:12" },
	{ 0x40, "main.outer /src/main.go:20" },
	{ 0x4c, "main.outer /src/main.go:21" },
	{ 0x50, "main.mid /src/util.go:30 | main.outer /src/main.go:21" },
	{ 0x5c, "main.mid /src/util.go:31 | main.outer /src/main.go:21" },
	{ 0x60, "strings.inner /go/src/strings/inner.go:40 | main.mid /src/util.go:31 | main.outer "
		"/src/main.go:21" },
	{ 0x77, "strings.inner /go/src/strings/inner.go:41 | main.mid /src/util.go:31 | main.outer "
		"/src/main.go:21" },
	{ 0x78, "main.mid /src/util.go:32 | main.outer /src/main.go:21" },
	{ 0x80, "main.outer /src/main.go:22" },
	{ 0x9f, "main.outer /src/main.go:22" },
	{ 0xa0, "main.leaf /src/leaf.go:50" },
	{ 0xb0, "main.leaf /gen/gen.go:7" },
	{ 0xbf, "main.leaf /gen/gen.go:7" },
	{ 0xc0, "-" },
};

static bool str_is(struct lidia_str s, const char *want)
{
	return s.len == strlen(want) && !memcmp(s.ptr, want, s.len);
}

static void test_good(const struct layout *l)
{
	const char *name = label(l);
	struct image im;
	struct result res;
	size_t n, depth1 = 0, depth2 = 0;
	bool ranges_ok = true;

	build(&im, l, &base_program);
	run_image(&res, &im, &all_opts);
	CHECK(res.parse_err == 0, "%s: gotab_parse accepts the table (%d)", name, res.parse_err);
	CHECK(res.t.version == (enum go_version)l->version && res.t.ptr_size == l->ptr &&
		      res.t.quantum == l->quantum && res.t.nfunc == NF,
	      "%s: header read: version %d, ptr %u, quantum %u, nfunc %" PRIu64, name,
	      res.t.version, res.t.ptr_size, res.t.quantum, res.t.nfunc);
	CHECK(res.extract_err == 0 && res.r, "%s: extracted and read back (%d)", name,
	      res.extract_err);
	CHECK(res.stats.functions == NF && res.stats.bad_functions == 0 &&
		      res.stats.inline_ranges == 2,
	      "%s: stats: %zu functions, %zu bad, %zu inline ranges", name, res.stats.functions,
	      res.stats.bad_functions, res.stats.inline_ranges);
	intervals_normalize(&res.covered);
	CHECK(res.covered.n == 1 && res.covered.v[0].lo == TEXT &&
		      res.covered.v[0].hi == TEXT + TEXT_SIZE,
	      "%s: covered is the text, [%#x, %#x)", name, TEXT, TEXT + TEXT_SIZE);
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
		CHECK_FRAMES(&res, TEXT + expect[i].off, expect[i].want, "%s: frames at text+%#x",
			     name, expect[i].off);
	CHECK_FRAMES(&res, TEXT - 1, "-", "%s: nothing before the text", name);

	/* The inline ranges themselves: extents, call sites. */
	n = res.r ? lidia_reader_count(res.r) : 0;
	for (size_t i = 0; i < n; i++) {
		struct lidia_range_info ri;

		if (lidia_reader_range(res.r, i, &ri)) {
			ranges_ok = false;
			continue;
		}
		if (ri.depth == 1) {
			depth1++;
			ranges_ok &= ri.va == TEXT + 0x50 && ri.length == 0x30 &&
				     str_is(ri.func, "main.mid") &&
				     str_is(ri.file, "/src/util.go") &&
				     str_is(ri.call_file, "/src/main.go") && ri.call_line == 21;
		} else if (ri.depth == 2) {
			depth2++;
			ranges_ok &= ri.va == TEXT + 0x60 && ri.length == 0x18 &&
				     str_is(ri.func, "strings.inner") &&
				     str_is(ri.file, "/go/src/strings/inner.go") &&
				     str_is(ri.call_file, "/src/util.go") && ri.call_line == 31;
		} else if (ri.depth == 0) {
			ranges_ok &= ri.va >= TEXT && ri.va + ri.length <= TEXT + TEXT_SIZE;
		} else {
			ranges_ok = false;
		}
	}
	CHECK(ranges_ok && depth1 == 1 && depth2 == 1,
	      "%s: one depth-1 range main.mid called at main.go:21, one depth-2 strings.inner at "
	      "util.go:31",
	      name);
	free_result(&res);

	/* Options: no inlines, no lines, no files. */
	{
		struct want o = { .inlines = false, .lines = true, .files = true };

		run_image(&res, &im, &o);
		CHECK(res.extract_err == 0 && res.stats.inline_ranges == 0,
		      "%s: inlines off: no inline range", name);
		CHECK_FRAMES(&res, TEXT + 0x64, "main.outer /go/src/strings/inner.go:40",
			     "%s: inlines off: the function alone, at the innermost position",
			     name);
		CHECK_FRAMES(&res, TEXT + 0x84, "main.outer /src/main.go:22",
			     "%s: inlines off: main.outer", name);
		free_result(&res);
	}
	{
		struct want o = { .inlines = true, .lines = false, .files = false };

		run_image(&res, &im, &o);
		CHECK(res.extract_err == 0 && res.stats.inline_ranges == 2 &&
			      res.stats.line_rows == 0,
		      "%s: lines and files off: inline ranges, no rows", name);
		CHECK_FRAMES(&res, TEXT + 0x64, "strings.inner :0 | main.mid :31 | main.outer :21",
			     "%s: lines and files off: the chain with call lines only", name);
		free_result(&res);
	}
	free_image(&im);
}

/* ---- Malformed tables ---- */

static void set_field(struct image *im, size_t off, uint64_t v, unsigned n)
{
	bb_set(&im->blob, off, v, n);
}

/* Append raw bytes to the blob; their offset in the pc-table space. */
static uint32_t append_raw(struct image *im, const void *p, size_t n)
{
	size_t off = bb_bytes(&im->blob, p, n);

	return (uint32_t)(off - im->pctab_base);
}

/*
 * The counts extraction reports are those of the file written: they feed
 * the keep decision, so a function taken back must take its counts back.
 */
static void check_counts(struct result *res, const char *name, const char *what)
{
	struct lidia_file_info info;
	size_t inlined = 0, n = lidia_reader_count(res->r);

	for (size_t i = 0; i < n; i++) {
		struct lidia_range_info ri;

		if (!lidia_reader_range(res->r, i, &ri) && ri.depth > 0)
			inlined++;
	}
	CHECK(!lidia_reader_info(res->r, &info) && res->stats.inline_ranges == inlined &&
		      res->stats.line_rows == info.lines.count,
	      "%s: %s: the counts reported are the file's (%zu/%zu inline ranges, %zu/%llu "
	      "line rows)",
	      name, what, res->stats.inline_ranges, inlined, res->stats.line_rows,
	      (unsigned long long)info.lines.count);
}

/* Extraction survived with every function but F1 intact, F1 bare (its name only). */
static void check_f1_bare(struct result *res, const char *name, const char *what)
{
	CHECK(res->parse_err == 0 && res->extract_err == 0 && res->r,
	      "%s: %s: extraction goes on (%d, %d)", name, what, res->parse_err, res->extract_err);
	if (!res->r)
		return; /* the rest would only repeat it */
	check_counts(res, name, what);
	CHECK(res->stats.bad_functions == 1 && res->stats.functions == NF,
	      "%s: %s: one bad function, kept (%zu bad, %zu functions)", name, what,
	      res->stats.bad_functions, res->stats.functions);
	CHECK_FRAMES(res, TEXT + 0x64, "main.outer :0",
		     "%s: %s: main.outer keeps its name and extent", name, what);
	CHECK_FRAMES(res, TEXT + 0x18, "main.main /src/main.go:11", "%s: %s: main.main intact",
		     name, what);
	CHECK_FRAMES(res, TEXT + 0xb0, "main.leaf /gen/gen.go:7", "%s: %s: main.leaf intact", name,
		     what);
}

/* F0 rejected by gotab_func: skipped, counted bad, the others intact. */
static void check_f0_skipped(struct result *res, const char *name, const char *what)
{
	CHECK(res->parse_err == 0 && res->extract_err == 0 && res->r,
	      "%s: %s: extraction goes on (%d, %d)", name, what, res->parse_err, res->extract_err);
	if (!res->r)
		return;
	CHECK(res->stats.bad_functions == 1 && res->stats.functions == NF - 1,
	      "%s: %s: main.main skipped (%zu bad, %zu functions)", name, what,
	      res->stats.bad_functions, res->stats.functions);
	CHECK_FRAMES(res, TEXT + 0x18, "-", "%s: %s: nothing at main.main", name, what);
	CHECK_FRAMES(res, TEXT + 0x64,
		     "strings.inner /go/src/strings/inner.go:40 | main.mid /src/util.go:31 | "
		     "main.outer /src/main.go:21",
		     "%s: %s: main.outer intact", name, what);
}

static void mutate_program(struct image *im, const struct layout *l, void (*fn)(struct program *))
{
	struct program p = base_program;

	fn(&p);
	build(im, l, &p);
}

static void prog_cycle(struct program *p)
{
	/* mid's call site is inside inner, inner's inside mid. */
	p->f[1].nodes[0].parent_pc = 0x24;
	p->f[1].nodes[0].parent = 1;
	p->f[1].nodes[1].parent_pc = 0x18;
}

static void prog_self(struct program *p)
{
	p->f[1].nodes[0].parent_pc = 0x14; /* inside mid itself */
	p->f[1].nodes[0].parent = 0;
}

/*
 * Issue 14's shape (Go 1.22-1.25, a frameless leaf whose inline marks all
 * folded away): no parentPc set, so every node's is 0, and the function's
 * first pc is inlined code (strings.inner's, node 1).
 */
static void prog_unset_parentpc(struct program *p)
{
	p->f[1].rows[0] = (struct row){ 0x08, 2, 39, 1 };
	p->f[1].nodes[0].parent_pc = 0;
	p->f[1].nodes[1].parent_pc = 0;
}

static void prog_past_tree(struct program *p)
{
	p->f[1].rows[5].inl = 5; /* the tree has 2 nodes */
}

static void prog_huge_index(struct program *p)
{
	p->f[1].rows[5].inl = 0x7fffffff;
}

static void prog_negative_index(struct program *p)
{
	p->f[1].rows[5].inl = -7; /* below -1: not inlined */
}

static void prog_negative_line(struct program *p)
{
	p->f[1].rows[0].line = -5;
	p->f[0].rows[1].file = -1; /* no file */
}

static void prog_line_wrap(struct program *p)
{
	/* 10, then a delta that takes the int32 line past INT32_MAX: Go wraps it. */
	p->f[0].rows[1].line = INT32_MIN + 5;
}

static void prog_huge_parentpc(struct program *p)
{
	p->f[1].nodes[1].parent_pc = 0xfffffff0; /* past the function: no call site known */
}

static void huge_index_case(const struct layout *l, const char *name)
{
	struct image im;
	struct result res;

	mutate_program(&im, l, prog_huge_index);
	run_image(&res, &im, &all_opts);
	check_f1_bare(&res, name, "inline index 0x7fffffff");
	free_result(&res);
	free_image(&im);
}

static void line_wrap_case(const struct layout *l, const char *name)
{
	struct image im;
	struct result res;

	mutate_program(&im, l, prog_line_wrap);
	run_image(&res, &im, &all_opts);
	CHECK(res.parse_err == 0 && res.extract_err == 0 && res.stats.bad_functions == 0,
	      "%s: a line delta past INT32_MAX: accepted (%d)", name, res.extract_err);
	CHECK_FRAMES(&res, TEXT + 0x18, "main.main /src/main.go:0",
		     "%s: a wrapped (negative) line reads as 0", name);
	free_result(&res);
	free_image(&im);
}

/* Run fn in a child process; a crash is one failed check, the child's own checks count as printed. */
static void in_child(const char *name, const char *what, const struct layout *l,
		     void (*fn)(const struct layout *, const char *))
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		CHECK(false, "%s: %s: fork: %s", name, what, strerror(errno));
		return;
	}
	if (pid == 0) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		fn(l, name);
		fflush(stdout);
		_exit(unit_failed ? 3 : 0); /* sanitizers exit with 1 */
	}
	if (waitpid(pid, &status, 0) < 0) {
		CHECK(false, "%s: %s: waitpid: %s", name, what, strerror(errno));
		return;
	}
	if (WIFSIGNALED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3))
		CHECK(false, "%s: %s: the extraction crashed (%s %d)", name, what,
		      WIFSIGNALED(status) ? "signal" : "status",
		      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	else if (WEXITSTATUS(status))
		unit_failed++; /* its "not ok" lines are printed already */
}

static void test_malformed(const struct layout *l)
{
	const char *name0 = label(l);
	char name[80];
	struct image im;
	struct result res;
	unsigned p = l->ptr;
	bool v118 = l->version >= GO_1_18;
	size_t hdr_size;

	snprintf(name, sizeof(name), "%s", name0);
	build(&im, l, &base_program);
	hdr_size = im.hdr_words + (l->version == GO_1_2 ? 1 : v118 ? 8 : 7) * p;

	/* Every truncation: parse fails below the header, nothing crashes anywhere. */
	{
		bool ok = true, below = true;

		for (size_t n = 0; n <= im.blob.n; n++) {
			unsigned char *copy = malloc(n ? n : 1);

			memcpy(copy, im.blob.p, n);
			run_blob(&res, copy, n, l->va, im.tree.p, im.tree.n, im.tree_va, l->be,
				 &all_opts, &the_mem);
			if (n < hdr_size && res.parse_err != LIDIA_E_GO)
				below = false;
			if (!res.parse_err && res.extract_err && res.extract_err != LIDIA_E_GO)
				ok = false;
			free_result(&res);
			free(copy);
		}
		CHECK(below, "%s: every truncation inside the header is LIDIA_E_GO", name);
		CHECK(ok, "%s: every truncation of the blob parses or fails cleanly", name);
	}
	/* And the tree truncated: the inline frames go, the function stays. */
	{
		bool ok = true;
		size_t full = im.tree.n;

		for (size_t n = 0; n < full; n++) {
			im.tree.n = n;
			run_image(&res, &im, &all_opts);
			ok &= res.extract_err == 0 && res.stats.bad_functions == 1 &&
			      res.stats.functions == NF;
			free_result(&res);
		}
		im.tree.n = full;
		CHECK(ok, "%s: a truncated inline tree costs main.outer its inline frames only",
		      name);
	}

	/* Header offsets out of range. */
	if (l->version == GO_1_2) {
		size_t fld = im.fld_entry[NF] + p;
		uint32_t saved = (uint32_t)get(l->be, im.blob.p + fld, 4);

		set_field(&im, fld, im.blob.n, 4);
		run_image(&res, &im, &all_opts);
		CHECK(res.parse_err == LIDIA_E_GO, "%s: filetab offset at the end: LIDIA_E_GO",
		      name);
		free_result(&res);
		set_field(&im, fld, im.blob.n - 3, 4);
		run_image(&res, &im, &all_opts);
		CHECK(res.parse_err == LIDIA_E_GO,
		      "%s: filetab offset 3 bytes from the end: LIDIA_E_GO", name);
		free_result(&res);
		set_field(&im, fld, 0xffffffff, 4);
		run_image(&res, &im, &all_opts);
		CHECK(res.parse_err == LIDIA_E_GO, "%s: filetab offset ~0: LIDIA_E_GO", name);
		free_result(&res);
		set_field(&im, fld, saved, 4);
	} else {
		static const char *const what[] = { "funcnametab", "cutab", "filetab", "pctab",
						    "pcln table" };
		unsigned first = v118 ? 3 : 2;

		for (unsigned w = 0; w < 5; w++) {
			size_t fld = im.hdr_words + (first + w) * p;
			uint64_t saved = get(l->be, im.blob.p + fld, p);

			set_field(&im, fld, im.blob.n + 1, p);
			run_image(&res, &im, &all_opts);
			CHECK(res.parse_err == LIDIA_E_GO, "%s: %s offset past the end: LIDIA_E_GO",
			      name, what[w]);
			free_result(&res);
			set_field(&im, fld, p == 8 ? UINT64_MAX : UINT32_MAX, p);
			run_image(&res, &im, &all_opts);
			CHECK(res.parse_err == LIDIA_E_GO, "%s: %s offset ~0: LIDIA_E_GO", name,
			      what[w]);
			free_result(&res);
			set_field(&im, fld, saved, p);
		}
		/* The pcln table where its functab would run off the end. */
		{
			size_t fld = im.hdr_words + (first + 4) * p;
			uint64_t saved = get(l->be, im.blob.p + fld, p);

			set_field(&im, fld, im.blob.n - 4, p);
			run_image(&res, &im, &all_opts);
			CHECK(res.parse_err == LIDIA_E_GO,
			      "%s: functab running off the end: LIDIA_E_GO", name);
			free_result(&res);
			set_field(&im, fld, saved, p);
		}
	}

	/* nfunc huge, or just too big for the blob. */
	{
		static const uint64_t bad[] = { UINT64_MAX, 1ull << 62, 1ull << 32,
						UINT32_MAX, 0x80000000, 0x10000000 };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			uint64_t v = p == 4 ? (uint32_t)bad[i] : bad[i];

			if (v == 0 || (i && v == (p == 4 ? (uint32_t)bad[i - 1] : bad[i - 1])))
				continue; /* 32-bit: the same as another case */
			set_field(&im, im.hdr_words, v, p);
			run_image(&res, &im, &all_opts);
			CHECK(res.parse_err == LIDIA_E_GO, "%s: nfunc %#" PRIx64 ": LIDIA_E_GO",
			      name, v);
			free_result(&res);
		}
		set_field(&im, im.hdr_words, im.blob.n, p);
		run_image(&res, &im, &all_opts);
		CHECK(res.parse_err == LIDIA_E_GO, "%s: nfunc = blob size: LIDIA_E_GO", name);
		free_result(&res);
		/* One more than there are: the extra "function" reads garbage, and nothing breaks. */
		set_field(&im, im.hdr_words, NF + 1, p);
		run_image(&res, &im, &all_opts);
		CHECK(res.parse_err != 0 || res.extract_err == 0,
		      "%s: nfunc one too many: no failure (%d, %d)", name, res.parse_err,
		      res.extract_err);
		free_result(&res);
		set_field(&im, im.hdr_words, 0, p);
		run_image(&res, &im, &all_opts);
		CHECK(res.parse_err != 0 || (res.extract_err == 0 && res.stats.functions == 0),
		      "%s: nfunc 0: an empty table or LIDIA_E_GO (%d)", name, res.parse_err);
		free_result(&res);
		set_field(&im, im.hdr_words, NF, p);
	}

	/* Name offsets: negative, past the end, on an unterminated string. */
	{
		static const struct {
			int64_t v;
			const char *what;
		} cases[] = { { -1, "nameoff -1" },
			      { INT32_MIN, "nameoff INT32_MIN" },
			      { 0, "nameoff past the end" },
			      { 1, "nameoff at the last byte, unterminated" } };

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			uint32_t v = (uint32_t)cases[i].v;

			if (i >= 2) {
				struct image im2;

				build(&im2, l, &base_program);
				if (i == 3)
					bb_put(&im2.blob, 'x', 1);
				v = (uint32_t)(im2.blob.n - (i == 3) - im2.names_base);
				set_field(&im2, im2.fld_nameoff[0], v, 4);
				run_image(&res, &im2, &all_opts);
				check_f0_skipped(&res, name, cases[i].what);
				free_result(&res);
				free_image(&im2);
				continue;
			}
			set_field(&im, im.fld_nameoff[0], v, 4);
			run_image(&res, &im, &all_opts);
			check_f0_skipped(&res, name, cases[i].what);
			free_result(&res);
		}
		set_field(&im, im.fld_nameoff[0], 0, 4);
		free_image(&im);
		build(&im, l, &base_program);
	}

	/* The function record: funcoff past the end, npcdata huge, entries descending. */
	{
		size_t fo = im.fld_funcoff[0];
		unsigned w = v118 ? 4 : p;
		uint64_t saved = get(l->be, im.blob.p + fo, w);

		set_field(&im, fo, im.blob.n, w);
		run_image(&res, &im, &all_opts);
		check_f0_skipped(&res, name, "funcoff past the end");
		free_result(&res);
		set_field(&im, fo, w == 8 ? UINT64_MAX : UINT32_MAX, w);
		run_image(&res, &im, &all_opts);
		check_f0_skipped(&res, name, "funcoff ~0");
		free_result(&res);
		set_field(&im, fo, saved, w);

		set_field(&im, im.fld_npcdata[0], 0xffffffff, 4);
		run_image(&res, &im, &all_opts);
		check_f0_skipped(&res, name, "npcdata ~0");
		free_result(&res);
		set_field(&im, im.fld_npcdata[0], 0x40000000, 4);
		run_image(&res, &im, &all_opts);
		check_f0_skipped(&res, name, "npcdata 2^30");
		free_result(&res);
		set_field(&im, im.fld_npcdata[0], 2, 4);

		/* main.main ends before it starts. */
		set_field(&im, im.fld_entry[1], v118 ? 0 : TEXT, w);
		set_field(&im, im.fld_entry[0], v118 ? 0x10 : TEXT + 0x10, w);
		run_image(&res, &im, &all_opts);
		CHECK(res.extract_err == 0 && res.stats.bad_functions >= 1,
		      "%s: descending entries: skipped (%zu bad)", name, res.stats.bad_functions);
		free_result(&res);
		free_image(&im);
		build(&im, l, &base_program);
	}

	/* pc-value tables: off the end, overlong varints, offsets past the end. */
	{
		static const unsigned char off_end[] = { 0x02, 0x90 }; /* pc delta unfinished */
		static const unsigned char off_end2[] = { 0x02, 0x08, 0x02 }; /* no terminator */
		static const unsigned char long6[] = { 0x80, 0x80, 0x80, 0x80,
						       0x80, 0x01, 0x08, 0x00 };
		static const unsigned char long_pc[] = { 0x02, 0xff, 0xff, 0xff,
							 0xff, 0xff, 0x01, 0x00 };
		static const struct {
			const unsigned char *bytes;
			size_t n;
			const char *what;
		} tabs[] = {
			{ off_end, sizeof(off_end), "a varint running off the end" },
			{ off_end2, sizeof(off_end2), "a table running off the end" },
			{ long6, sizeof(long6), "a 6-byte value varint" },
			{ long_pc, sizeof(long_pc), "a 6-byte pc varint" },
		};
		static const char *const fields[] = { "pcfile", "pcln", "inline index" };

		for (size_t t = 0; t < sizeof(tabs) / sizeof(tabs[0]); t++) {
			for (int fi = 0; fi < 3; fi++) {
				char what[128];
				struct image im2;
				uint32_t off;
				size_t fld;

				build(&im2, l, &base_program);
				off = append_raw(&im2, tabs[t].bytes, tabs[t].n);
				fld = fi == 0	? im2.fld_pcfile[1]
				      : fi == 1 ? im2.fld_pcln[1]
						: im2.fld_pcinl[1];
				set_field(&im2, fld, off, 4);
				snprintf(what, sizeof(what), "%s as %s", tabs[t].what, fields[fi]);
				run_image(&res, &im2, &all_opts);
				check_f1_bare(&res, name, what);
				free_result(&res);
				free_image(&im2);
			}
		}
		for (int fi = 0; fi < 3; fi++) {
			char what[64];
			size_t fld = fi == 0   ? im.fld_pcfile[1]
				     : fi == 1 ? im.fld_pcln[1]
					       : im.fld_pcinl[1];
			uint32_t saved = (uint32_t)get(l->be, im.blob.p + fld, 4);

			set_field(&im, fld, (uint32_t)(im.blob.n - im.pctab_base), 4);
			snprintf(what, sizeof(what), "%s offset at the end", fields[fi]);
			run_image(&res, &im, &all_opts);
			check_f1_bare(&res, name, what);
			free_result(&res);
			set_field(&im, fld, 0xfffffff0, 4);
			snprintf(what, sizeof(what), "%s offset 0xfffffff0", fields[fi]);
			run_image(&res, &im, &all_opts);
			check_f1_bare(&res, name, what);
			free_result(&res);
			set_field(&im, fld, saved, 4);
		}
	}

	/*
	 * Inline trees: parents that loop (the runtime's unwinder would go round
	 * them for ever; each node on such a chain is called from the function,
	 * at line 0), indices past the tree, bad names.
	 */
	{
		struct image im2;
		static const struct {
			void (*mut)(struct program *);
			const char *what;
		} loops[] = {
			{ prog_cycle, "inline tree with a parent cycle" },
			{ prog_self, "inline node its own parent" },
			{ prog_unset_parentpc,
			  "no parentPc set, inlined code at the entry (issue 14)" },
		};

		for (size_t k = 0; k < sizeof(loops) / sizeof(loops[0]); k++) {
			mutate_program(&im2, l, loops[k].mut);
			run_image(&res, &im2, &all_opts);
			CHECK(res.extract_err == 0 && res.stats.bad_functions == 0 &&
				      res.stats.inline_ranges >= 2,
			      "%s: %s: not malformed (%d, %zu bad, %zu inline ranges)", name,
			      loops[k].what, res.extract_err, res.stats.bad_functions,
			      res.stats.inline_ranges);
			CHECK_FRAMES(&res, TEXT + 0x64,
				     "strings.inner /go/src/strings/inner.go:40 | main.outer "
				     "/src/main.go:0",
				     "%s: %s: the callee, then the function at line 0", name,
				     loops[k].what);
			CHECK_FRAMES(&res, TEXT + 0x54,
				     "main.mid /src/util.go:30 | main.outer /src/main.go:0",
				     "%s: %s: main.mid, then the function at line 0", name,
				     loops[k].what);
			CHECK_FRAMES(&res, TEXT + 0x18, "main.main /src/main.go:11",
				     "%s: %s: main.main intact", name, loops[k].what);
			free_result(&res);
			free_image(&im2);
		}
		mutate_program(&im2, l, prog_unset_parentpc);
		run_image(&res, &im2, &all_opts);
		CHECK_FRAMES(
			&res, TEXT + 0x40,
			"strings.inner /go/src/strings/inner.go:39 | main.outer /src/main.go:0",
			"%s: issue 14: the entry's inlined code, then the function at line 0",
			name);
		free_result(&res);
		free_image(&im2);

		mutate_program(&im2, l, prog_past_tree);
		run_image(&res, &im2, &all_opts);
		check_f1_bare(&res, name, "inline index past the tree");
		free_result(&res);
		free_image(&im2);

		/* In a child: an allocation sized by the index may kill the process (ASan). */
		in_child(name, "inline index 0x7fffffff", l, huge_index_case);
		/* In a child: a signed overflow would stop the process (UBSan). */
		in_child(name, "line delta past INT32_MAX", l, line_wrap_case);

		mutate_program(&im2, l, prog_negative_index);
		run_image(&res, &im2, &all_opts);
		CHECK(res.extract_err == 0 && res.stats.bad_functions == 0,
		      "%s: inline index -7 means not inlined", name);
		CHECK_FRAMES(&res, TEXT + 0x74, "main.outer /go/src/strings/inner.go:41",
			     "%s: inline index -7: the function's own frame", name);
		free_result(&res);
		free_image(&im2);

		mutate_program(&im2, l, prog_negative_line);
		run_image(&res, &im2, &all_opts);
		CHECK(res.extract_err == 0 && res.stats.bad_functions == 0,
		      "%s: negative line, no file: accepted", name);
		CHECK_FRAMES(&res, TEXT + 0x40, "main.outer /src/main.go:0",
			     "%s: negative line reads as 0", name);
		free_result(&res);
		free_image(&im2);

		mutate_program(&im2, l, prog_huge_parentpc);
		run_image(&res, &im2, &all_opts);
		CHECK(res.extract_err == 0 && res.stats.bad_functions == 0,
		      "%s: parentPc past the function: accepted", name);
		CHECK_FRAMES(
			&res, TEXT + 0x64,
			"strings.inner /go/src/strings/inner.go:40 | main.outer /src/main.go:0",
			"%s: parentPc past the function: parent the function, call line unknown "
			"(0)",
			name);
		free_result(&res);
		free_image(&im2);

		/* Node names. */
		{
			unsigned noff = l->version >= GO_1_20 ? 4 : 12;
			size_t at = im.tree_node_off[1] + noff;
			uint32_t saved = (uint32_t)get(l->be, im.tree.p + at, 4);
			static const uint32_t bad[] = { 0xffffffff, 0x80000000, 0x7fffffff };

			for (size_t i = 0; i < 3; i++) {
				char what[64];

				bb_set(&im.tree, at, bad[i], 4);
				snprintf(what, sizeof(what), "inline name offset %#x", bad[i]);
				run_image(&res, &im, &all_opts);
				check_f1_bare(&res, name, what);
				free_result(&res);
			}
			bb_set(&im.tree, at, saved, 4);
		}
		/* The tree's address unreadable. */
		{
			struct mem m;

			run_blob(&res, im.blob.p, im.blob.n, l->va, NULL, 0, TREE_VA, l->be,
				 &all_opts, &m);
			check_f1_bare(&res, name, "inline tree address unreadable");
			free_result(&res);
		}
	}

	/* A file index out of every table: no file, no failure. */
	{
		struct program pr = base_program;
		struct image im2;

		for (int i = 0; i < 3; i++)
			pr.f[0].rows[i].file = 1000;
		build(&im2, l, &pr);
		run_image(&res, &im2, &all_opts);
		CHECK(res.extract_err == 0 && res.stats.bad_functions == 0,
		      "%s: file index out of range: accepted", name);
		CHECK_FRAMES(&res, TEXT + 0x4, "main.main :10",
			     "%s: file index out of range: no file", name);
		free_result(&res);
		free_image(&im2);
	}
	free_image(&im);
}

/* Random byte flips, a fixed seed per layout: only a crash (or a sanitizer report) fails. */
static void test_flips(const struct layout *l)
{
	struct image im;
	uint64_t s = 0x9e3779b97f4a7c15ull ^ ((uint64_t)l->version << 8 | l->ptr << 4 | l->be << 1);
	bool ok = true;
	int runs = 3000;

	build(&im, l, &base_program);
	for (int i = 0; i < runs; i++) {
		unsigned char *blob = malloc(im.blob.n), *tree = malloc(im.tree.n);
		struct result res;
		struct mem m;
		int nflips = 1 + i % 4;

		memcpy(blob, im.blob.p, im.blob.n);
		memcpy(tree, im.tree.p, im.tree.n);
		for (int k = 0; k < nflips; k++) {
			s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
			uint64_t r = s * 0x2545f4914f6cdd1dull;
			size_t at = (size_t)(r >> 16) % (im.blob.n + im.tree.n);
			unsigned char *pb = at < im.blob.n ? blob + at : tree + (at - im.blob.n);

			*pb = (r & 0x100) ? (unsigned char)r
					  : *pb ^ (unsigned char)(1u << (r >> 9 & 7));
		}
		run_blob(&res, blob, im.blob.n, l->va, tree, im.tree.n, im.tree_va, l->be,
			 &all_opts, &m);
		if (!res.parse_err && res.extract_err && res.extract_err != LIDIA_E_GO)
			ok = false;
		if (res.r && lidia_reader_check(res.r, NULL))
			ok = false;
		free_result(&res);
		free(blob);
		free(tree);
	}
	CHECK(ok, "%s: %d randomly damaged copies extract cleanly into valid files", label(l),
	      runs);
	free_image(&im);
}

/* A function longer than 4 GiB (64-bit 1.2 and 1.16 entries are words): no fatal error. */
static void test_long_function(const struct layout *l)
{
	struct image im;
	struct result res;

	if (l->ptr != 8 || l->version >= GO_1_18)
		return;
	build(&im, l, &base_program);
	/* main.leaf ends 8 GiB after it starts; its line table steps past 4 GiB. */
	set_field(&im, im.fld_entry[NF], TEXT + 0xa0 + (8ull << 30), 8);
	{
		struct bb t = { .be = l->be };
		uint32_t off;

		bb_uvarint(&t, zigzag(50 - -1));
		bb_uvarint(&t, 0x10 / l->quantum);
		bb_uvarint(&t, zigzag(1));
		bb_uvarint(&t, (uint32_t)(0xfffffff0u / l->quantum));
		bb_uvarint(&t, zigzag(1));
		bb_uvarint(&t, 0x20 / l->quantum);
		bb_put(&t, 0, 1);
		off = append_raw(&im, t.p, t.n);
		set_field(&im, im.fld_pcln[2], off, 4);
		free(t.p);
	}
	run_image(&res, &im, &all_opts);
	CHECK(res.extract_err == 0,
	      "%s: a function longer than 4 GiB does not stop the extraction (%d: %s)", label(l),
	      res.extract_err, lidia_strerror(res.extract_err));
	if (res.r)
		CHECK_FRAMES(&res, TEXT + 0x18, "main.main /src/main.go:11",
			     "%s: >4 GiB function: main.main intact", label(l));
	free_result(&res);
	free_image(&im);
}

/* A table with no function: nothing to add, and the empty builder still writes a valid file. */
static void empty_case(const struct layout *l, const char *name)
{
	struct image im;
	struct lidia_builder *b = NULL;
	struct lidia_reader *r = NULL;
	struct gotab t;
	struct extract_ctx x = { .inlines = true, .lines = true, .files = true };
	void *file = NULL;
	size_t size = 0;
	int err;

	build(&im, l, &base_program);
	set_field(&im, im.hdr_words, 0, l->ptr);
	err = gotab_parse(&t, im.blob.p, im.blob.n, l->va, l->be);
	if (!err && !(err = lidia_builder_new(&b)) && !(x.b = b, err = gotab_extract(&x, &t)) &&
	    !(err = lidia_builder_finalize(b)) && !(err = lidia_builder_write_mem(b, &file, &size)))
		err = lidia_reader_open_mem(&r, file, size, NULL);
	CHECK(err == 0 && r && lidia_reader_count(r) == 0,
	      "%s: nfunc 0: an empty table makes an empty, valid file (%d)", name, err);
	lidia_reader_close(r);
	free(file);
	lidia_builder_free(b);
	extract_ctx_release(&x);
	free_image(&im);
}

static void test_empty(const struct layout *l)
{
	/* In a child: this path once passed NULL to qsort() (UBSan). */
	in_child(label(l), "an empty table", l, empty_case);
}

/* ---- The fuzz corpus ---- */

static void write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(2);
	}
}

static void dump_corpus(const char *dir, const struct layout *layouts, size_t n)
{
	static void (*const muts[])(struct program *) = {
		prog_cycle,	     prog_self,	      prog_past_tree, prog_huge_parentpc,
		prog_negative_index, prog_huge_index, prog_line_wrap, prog_unset_parentpc
	};
	static const char *const mut_names[] = { "cycle",	  "self-parent",    "past-tree",
						 "huge-parentpc", "negative-index", "huge-index",
						 "line-wrap",	  "unset-parentpc" };

	for (size_t i = 0; i < n; i++) {
		struct layout l = layouts[i];
		struct image im;
		char fname[128], tag[64];

		l.va = FUZZ_VA;
		l.tree_in_blob = true;
		if (l.version == GO_1_2 && l.release)
			continue; /* the fuzz target cannot be told a release: the same bytes as r0 */
		snprintf(tag, sizeof(tag), "go%s-%u%s-q%u",
			 l.version == GO_1_2	? "12"
			 : l.version == GO_1_16 ? "116"
			 : l.version == GO_1_18 ? "118"
						: "120",
			 l.ptr * 8, l.be ? "be" : "le", l.quantum);
		build(&im, &l, &base_program);
		snprintf(fname, sizeof(fname), "synth-%s.bin", tag);
		write_file(dir, fname, im.blob.p, im.blob.n);
		free_image(&im);
		/* The malformed variants, for the little-endian 64-bit and big-endian 32-bit images. */
		if (!((l.ptr == 8 && !l.be) || (l.ptr == 4 && l.be)))
			continue;
		for (size_t k = 0; k < sizeof(muts) / sizeof(muts[0]); k++) {
			mutate_program(&im, &l, muts[k]);
			snprintf(fname, sizeof(fname), "synth-%s-%s.bin", tag, mut_names[k]);
			write_file(dir, fname, im.blob.p, im.blob.n);
			free_image(&im);
		}
		/* No function at all: an empty builder to finalize. */
		build(&im, &l, &base_program);
		bb_set(&im.blob, im.hdr_words, 0, l.ptr);
		snprintf(fname, sizeof(fname), "synth-%s-nfunc0.bin", tag);
		write_file(dir, fname, im.blob.p, im.blob.n);
		free_image(&im);
	}
}

/*
 * Go 1.2-1.15 tables of a release whose inline slots are not read (or not
 * known): every function with its extent and lines, no inline frames.
 */
static void test_go12(const struct layout *l)
{
	const char *name = label(l);
	struct image im;
	struct result res;
	size_t inl = 0;

	build(&im, l, &base_program);
	run_image(&res, &im, &all_opts);
	CHECK(res.parse_err == 0 && res.extract_err == 0 && res.r,
	      "%s: parsed and extracted (%d, %d)", name, res.parse_err, res.extract_err);
	CHECK(res.stats.functions == NF && res.stats.bad_functions == 0 &&
		      res.stats.inline_ranges == 0,
	      "%s: %zu functions, %zu bad, %zu inline ranges (none: release not read)", name,
	      res.stats.functions, res.stats.bad_functions, res.stats.inline_ranges);
	for (size_t i = 0; res.r && i < lidia_reader_count(res.r); i++) {
		struct lidia_range_info ri;

		if (!lidia_reader_range(res.r, i, &ri) && ri.depth)
			inl++;
	}
	CHECK(inl == 0, "%s: no depth > 0 range in the file", name);
	CHECK(res.stats.line_rows > 0, "%s: line rows read (%zu)", name, res.stats.line_rows);
	free_result(&res);
	free_image(&im);
}

/*
 * A 1.2-header image of release l->release read as another release: the
 * slots then hold no tree (or none this code reads), so no inline frame,
 * and the functions and lines intact; read as a release of the same slots
 * (13 as 15), the same frames as test_good.
 */
static void test_release_told(const struct layout *l)
{
	static const unsigned told[] = { 0, 9, 11, 12, 13, 15, 16, 20 };
	const char *name = label(l);
	struct image im;

	build(&im, l, &base_program);
	for (size_t i = 0; i < sizeof(told) / sizeof(told[0]); i++) {
		bool same = told[i] == l->release ||
			    (l->release >= 13 && told[i] >= 13 && told[i] <= 15);
		struct result res;

		the_release = told[i];
		run_image(&res, &im, &all_opts);
		CHECK(res.extract_err == 0 && res.stats.bad_functions == 0 &&
			      res.stats.inline_ranges == (same ? 2u : 0u),
		      "%s: told go1.%u: %zu inline ranges, %zu bad (want %u, 0)", name, told[i],
		      res.stats.inline_ranges, res.stats.bad_functions, same ? 2 : 0);
		CHECK_FRAMES(&res, TEXT + 0x64,
			     same ? "strings.inner /go/src/strings/inner.go:40 | main.mid "
				    "/src/util.go:31 | main.outer /src/main.go:21"
				  : "main.outer /go/src/strings/inner.go:40",
			     "%s: told go1.%u: the frames at an inlined pc", name, told[i]);
		CHECK_FRAMES(&res, TEXT + 0x18, "main.main /src/main.go:11",
			     "%s: told go1.%u: main.main", name, told[i]);
		free_result(&res);
	}
	the_release = l->release;
	free_image(&im);
}

static void test_release_minor(void)
{
	static const struct {
		const char *s;
		size_t n;
		unsigned want;
	} c[] = {
		{ "go1.13.8", 8, 13 }, { "go1.12", 6, 12 },	  { "go1.15rc2", 9, 15 },
		{ "go1.9", 5, 9 },     { "go1.13", 5, 1 },	  { "go1.", 4, 0 },
		{ "go2.0", 5, 0 },     { "go1.1234", 8, 0 },	  { "devel +abc", 10, 0 },
		{ "go1.x", 5, 0 },     { "go1.14beta1", 11, 14 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		CHECK(gotab_release_minor(c[i].s, c[i].n) == c[i].want,
		      "gotab_release_minor(\"%.*s\") is %u", (int)c[i].n, c[i].s, c[i].want);
}

int main(void)
{
	static const int versions[] = { GO_1_2, GO_1_16, GO_1_18, GO_1_20 };
	static const unsigned releases[] = { 0, 12, 13 }; /* of the 1.2 header */
	struct layout layouts[32];
	size_t n = 0;
	const char *dir = getenv("PCLNTAB_CORPUS_DIR");

	for (size_t v = 0; v < 4; v++)
		for (size_t r = 0; r < (versions[v] == GO_1_2 ? 3u : 1u); r++)
			for (unsigned ptr = 4; ptr <= 8; ptr += 4)
				for (int be = 0; be < 2; be++)
					layouts[n++] = (struct layout){ .version = versions[v],
									.release = releases[r],
									.ptr = ptr,
									.quantum = be ? 4 : 1,
									.be = be,
									.va = BLOB_VA };
	if (dir && *dir) {
		dump_corpus(dir, layouts, n);
		printf("ok - corpus written to %s\n", dir);
	}
	test_release_minor();
	/*
	 * The 1.2 header (Go 1.2 to 1.15) does not say which release wrote it,
	 * and the inline tree moved within that span: told 1.12 or 1.13-1.15,
	 * the library reads its inline frames as test_good checks; told none,
	 * its functions and lines but no inline frames (test_go12).
	 */
	for (size_t i = 0; i < n; i++) {
		the_release = layouts[i].release;
		if (layouts[i].version != GO_1_2 || layouts[i].release)
			test_good(&layouts[i]);
		else
			test_go12(&layouts[i]);
		if (layouts[i].version == GO_1_2 && layouts[i].release)
			test_release_told(&layouts[i]);
	}
	for (size_t i = 0; i < n; i++) {
		the_release = layouts[i].release;
		if (layouts[i].version != GO_1_2 || layouts[i].release)
			test_malformed(&layouts[i]);
	}
	for (size_t i = 0; i < n; i++) {
		the_release = layouts[i].release;
		test_long_function(&layouts[i]);
	}
	for (size_t i = 0; i < n; i++)
		if (layouts[i].version == GO_1_18 && layouts[i].ptr == 4 && !layouts[i].be) {
			the_release = 0;
			test_empty(&layouts[i]); /* 1.18, 32-bit LE */
		}
	for (size_t i = 0; i < n; i++) {
		the_release = layouts[i].release;
		test_flips(&layouts[i]);
	}
	return unit_exit();
}
