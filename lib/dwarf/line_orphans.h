/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_LINE_ORPHANS_H
#define LIDIA_LINE_ORPHANS_H

#include <stddef.h>
#include <stdint.h>

#include "dwarf_sections.h"
#include "extract.h"

/*
 * The line programs of .debug_line (s, little-endian images: dwarf.c's
 * find_sections()) at none of the nnamed offsets named_at (every unit's
 * DW_AT_stmt_list, listed with the units; sorted here): a
 * hand-built object's, some GPU code's, an object whose .debug_info was
 * stripped. Their rows join x->orphans (for the symbols that name that code)
 * where no function already described (x->covered) is, moved by x->bias; address_size is the
 * image's. Unreadable programs are passed over. 0 or -ENOMEM.
 */
int line_orphans_add(struct extract_ctx *x, uint64_t *named_at, size_t nnamed,
		     const struct dwarf_sections *s, unsigned address_size);

#endif
