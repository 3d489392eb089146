/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_EXTRACT_H
#define LIDIA_EXTRACT_H

#include <stdbool.h>

#include "aside.h"
#include "demangle.h"
#include "intervals.h"
#include "lidia.h"
#include "line_rows.h"
#include "symbols.h"

/*
 * One extraction (lidia_extract, extract.c): what its three extractors
 * share. The Go pclntab (gotab_extract), then DWARF (extract_dwarf), then
 * symbols (functions_add_symbols) each add to b the functions they describe,
 * best source first, leaving out what an earlier one covered; all of them
 * count in st. The images read belong to the caller and are never written:
 * what an extractor makes of them (inflated sections, say) is its own.
 */
struct extract_ctx {
	struct lidia_builder *b;
	bool inlines, lines, files; /* the options: inline frames, line tables, file names */
	struct intervals covered;   /* what the sources before the current one described */
	struct line_rows orphans;   /* DWARF's line rows of code no DWARF function describes */
	struct sym_vec syms;	    /* resolved: depth-0 names, and the last source */
	/*
	 * Added to the DWARF image's addresses: those of a debug file split off
	 * before its binary was prelinked are not the binary's (elf_pair.h).
	 */
	uint64_t bias;
	struct demangler dm;
	struct lidia_extract_stats st;
	bool no_debug_search; /* no file an input names is opened: no debug link, dwz, .dwo */
	/* lidia_extract_opts' threads and thread_guard: what one big input may use. */
	unsigned threads;
	int (*guard)(void (*fn)(void *arg), void *arg);
	/* The DWARF's images (inflated copies, the dwz file), closed beside what follows. */
	struct lidia_elf *to_close[3];
	struct aside closing;
};

/* Free what x holds (its images closed, once any closing beside is done); x->b is the caller's. */
void extract_ctx_release(struct extract_ctx *x);

#endif
