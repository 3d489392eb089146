/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_GOPCLNTAB_H
#define LIDIA_GOPCLNTAB_H

#include <stdbool.h>
#include <stdint.h>

#include "elf_image.h"
#include "intervals.h"

/* Header magics: the Go release that introduced each layout. */
enum go_version { GO_1_2 = 12, GO_1_16 = 116, GO_1_18 = 118, GO_1_20 = 120 };

/*
 * A Go pclntab, located and validated. The tables are views into one blob;
 * each is bounded by the blob's end.
 */
struct gotab {
	const unsigned char *base; /* the pclntab (its header first) */
	uint64_t size;
	uint64_t va;		   /* address of base in the program */
	enum go_version version;
	unsigned ptr_size, quantum;
	bool big_endian;
	uint64_t nfunc, nfiles, text_start;
	uint64_t funcnames_off, cutab_off, filetab_off, pctab_off, pcln_off;
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
 * Find the pclntab of a Go ELF image, wherever it is: the .gopclntab or
 * .data.rel.ro.gopclntab section, the runtime.pclntab symbols, or (stripped
 * PIE, external linking) the module data that points at a valid header.
 * Returns 1 when found, 0 when the image has none, or a negative error.
 */
int gotab_find(struct gotab *t, const struct lidia_elf *e);

struct go_extract_opts {
	bool inlines, lines, files;
};

struct go_extract_stats {
	size_t functions, inline_ranges, line_rows, bad_functions;
};

/*
 * Add every function of t to b: a depth-0 range per function, a range per
 * inlined call (depth > 0, with its call file and line), and line tables.
 * The functions' extents are added to covered. A malformed function is
 * skipped (counted in bad_functions), not fatal.
 */
int gotab_extract(struct lidia_builder *b, const struct gotab *t,
		  const struct go_extract_opts *opts, struct intervals *covered,
		  struct go_extract_stats *stats);

#endif
