/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DWARF_EXTRACT_H
#define LIDIA_DWARF_EXTRACT_H

#include <elfutils/libdw.h>
#include <stdbool.h>

#include "elf_image.h"
#include "functions.h"
#include "intervals.h"
#include "symbols.h"

struct demangler;

struct dwarf_extract_opts {
	bool inlines, lines, files;
	bool skip_go; /* leave Go units to the pclntab */
};

struct dwarf_extract_stats {
	size_t units, functions, inline_ranges, line_rows;
	size_t overlapping;    /* subprogram ranges dropped: another function had the address */
	size_t unnamed;	       /* frames with no name in DWARF */
	size_t bad_file_index; /* call files that name no file */
	size_t lines_by_libdw; /* units whose line program lidiagen could not decode */
};

/*
 * Add the functions that e's DWARF describes to b (see dwarf.c), with alt
 * as its dwz supplementary file (may be NULL). Depth-0 frames take the name
 * of the symbol in syms (resolved, may be NULL) that covers them, as
 * llvm-symbolizer does; the extents written are added to covered, and the
 * line rows of code no subprogram describes to orphans (for the symbols that
 * will name it). An image without DWARF adds nothing. e's location and
 * macro sections are made to look empty to libdw (it never needs them).
 */
int extract_dwarf(struct lidia_builder *b, struct lidia_elf *e, Dwarf *alt,
		  const struct dwarf_extract_opts *opts, const struct sym_vec *syms,
		  struct demangler *dm, struct intervals *covered, struct line_rows *orphans,
		  struct dwarf_extract_stats *st);

#endif
