/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_LINE_TABLE_H
#define LIDIA_LINE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "dwarf_sections.h"
#include "line_rows.h"
#include "name_blocks.h"

/*
 * One decoded line program: every unit that names it reads it (dwz's partial
 * units name their compile unit's). Reused, program after program.
 */
struct line_table {
	struct line_row *rows; /* in address order, each sequence ended by a row with no file */
	size_t nrows, cap_rows;
	const char **files; /* by DWARF file index (DW_AT_call_file too); NULL: none */
	size_t nfiles, cap_files;
	struct name_block *names; /* the joined paths, which the rows' files point into */
};

/* Empty lt for another program, keeping its buffers. */
void line_table_reset(struct line_table *lt);

/*
 * Decode the line program at offset in .debug_line for a unit whose
 * compilation directory is comp_dir (may be NULL), replacing lt's rows and
 * files. LIDIA_E_DWARF_LINES when it is malformed or of a form not handled
 * (the caller then asks libdw).
 */
int line_table_decode(struct line_table *lt, const struct dwarf_sections *s, uint64_t offset,
		      const char *comp_dir, unsigned address_size);

void line_table_release(struct line_table *lt);

#endif
