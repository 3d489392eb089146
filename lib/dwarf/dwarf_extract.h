/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DWARF_EXTRACT_H
#define LIDIA_DWARF_EXTRACT_H

#include <elfutils/libdw.h>

#include "elf_image.h"
#include "extract.h"

/*
 * The second source of an extraction: add the functions that e's DWARF
 * describes to x->b (see dwarf.c), with alt as its dwz supplementary file
 * (may be NULL), leaving Go units out when the pclntab gave functions.
 * Depth-0 frames take the name of the resolved symbol in x->syms that covers
 * them, as llvm-symbolizer does; the extents written are added to
 * x->covered, and the line rows of code no subprogram describes to
 * x->orphans (for the symbols that will name it), unsorted. An image
 * without DWARF adds nothing. libdw reads e as it is: it must have no
 * compressed section that is not the extraction's own to inflate
 * (debug_sections_inflate).
 */
int extract_dwarf(struct extract_ctx *x, const struct lidia_elf *e, Dwarf *alt);

/*
 * x->orphans sorted by address, the same order on any number of threads:
 * once extract_dwarf() is done with every image (which may then be closed
 * meanwhile, on another thread).
 */
void extract_dwarf_sort_orphans(struct extract_ctx *x);

#endif
