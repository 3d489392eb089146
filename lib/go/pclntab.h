/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_PCLNTAB_H
#define LIDIA_PCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/*
 * Reading a Go pclntab (pclntab.c), as Go's debug/gosym reads it: the
 * header, the function table, _func records, pc-value tables, file names
 * and inline tree entries. Every offset read from the table is checked
 * against the blob before use.
 */

/* Header magics: the Go release that introduced each layout. */
enum go_version { GO_1_2 = 12, GO_1_16 = 116, GO_1_18 = 118, GO_1_20 = 120 };

/*
 * A Go pclntab, located and validated. The tables are views into one blob;
 * each is bounded by the blob's end.
 */
struct gotab {
	const unsigned char *base; /* the pclntab (its header first) */
	uint64_t size;
	uint64_t va; /* address of base in the program */
	enum go_version version;
	unsigned ptr_size, quantum;
	bool big_endian;
	uint64_t nfunc, nfiles, text_start;
	uint64_t funcnames_off, cutab_off, filetab_off, pctab_off, pcln_off;
	/*
	 * The pcdata slot that maps each pc to its inline tree entry and the
	 * funcdata slot of the tree; 0: no inline trees read (see
	 * gotab_set_release).
	 */
	unsigned inl_pcdata, inl_funcdata;
	/* 1.18+: funcdata are offsets from go:func.*; have_gofunc says we know where it is. */
	uint64_t gofunc;
	bool have_gofunc;
	/* Reads size bytes at a program address (the inline trees live outside the blob). */
	const unsigned char *(*read_va)(void *ctx, uint64_t va, uint64_t size);
	/* A pointer-sized word at a program address, relocations applied. */
	bool (*read_word)(void *ctx, uint64_t va, uint64_t *value);
	void *ctx;
};

/*
 * Validate a pclntab header at buf (size bytes, at program address va) and
 * fill t's table layout. LIDIA_E_GO when it is not a pclntab this code knows.
 */
int gotab_parse(struct gotab *t, const unsigned char *buf, uint64_t size, uint64_t va,
		bool big_endian);

/*
 * The 1.2 header serves Go 1.2 to 1.15 and does not say which; the inline
 * tree's slots moved within that span. Told the release that wrote it (the
 * minor number: 13 for go1.13.8), a 1.2-header table reads its inline trees
 * where that release's layout is the one this code reads: 20-byte entries
 * with parentPc, Go 1.12 to 1.15. Other headers know their slots already.
 */
void gotab_set_release(struct gotab *t, unsigned minor);

/* The minor number of a Go release string: 13 for "go1.13.8", 0 when it is not one. */
unsigned gotab_release_minor(const char *s, size_t n);

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

/*
 * Function i of the table: its extent (no larger than 4 GiB: line offsets
 * are 32-bit), record and name; false when any of it is out of bounds.
 */
bool gotab_func(const struct gotab *t, uint64_t i, struct gofunc *f);

/* A run of a pc-value table: val applies up to (not including) end. */
struct pc_run {
	uint64_t end;
	int32_t val;
};

struct pc_runs {
	struct pc_run *v;
	size_t n, cap;
};

/*
 * Decode the pc-value table at off (in the pctab; 0: none, the value is
 * unknown throughout) for a function from entry to end into out. Each step
 * is taken from *budget (see pclntab.c). 0, LIDIA_E_GO or -ENOMEM.
 */
int gotab_pcvalue(const struct gotab *t, uint32_t off, uint64_t entry, uint64_t end,
		  struct pc_runs *out, uint64_t *budget);

/* The value of a decoded table at pc (-1 past its end). */
int32_t pc_runs_value(const struct pc_runs *r, uint64_t pc);

/* The offset of f's pc-value table in pcdata slot k, 0 when it has none. */
uint32_t gotab_pcdata(const struct gotab *t, const struct gofunc *f, unsigned k);

/* The name of file idx (a pcfile value) of f, or NULL. */
const char *gotab_file(const struct gotab *t, const struct gofunc *f, int32_t idx);

/* Where f's inline tree is in the program, or false when it has none this code reads. */
bool gotab_inltree(const struct gotab *t, const struct gofunc *f, uint64_t *va);

/* The size of an inline tree entry. */
static inline unsigned gotab_inl_size(const struct gotab *t)
{
	return t->version >= GO_1_20 ? 16 : 20;
}

/* Inline tree entry i of the tree at va: its name and parentPc; false when unreadable. */
bool gotab_inl(const struct gotab *t, uint64_t tree, int32_t i, const char **name,
	       uint32_t *parent_pc);

#endif
