/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_LINE_ROWS_H
#define LIDIA_LINE_ROWS_H

#include <stddef.h>
#include <stdint.h>

struct name_block;

/*
 * A line row: line applies from addr up to the next row's address; a row
 * with no file ends a sequence (and its line is 0). What a line program
 * decodes to (line_table.c, or libdw), and what symbols take of it.
 */
struct line_row {
	uint64_t addr;
	const char *file;
	int32_t line;
};

/*
 * The line of an orphan row with no file that ends the row before it where
 * its program stops describing the code (orphan_spans.h): another program's
 * row at its address, before or after it, holds.
 */
#define LINE_ROW_SPAN_END (-1)

/* The index of the first of the n rows v (sorted by address) past addr (n: none). */
static inline size_t line_rows_after(const struct line_row *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * Line rows that no DWARF function claims (units built with
 * -gline-tables-only, skeletons whose .dwo is gone): symbols take them.
 * Sorted by address; names holds the files' names, which outlive the units.
 */
struct line_rows {
	struct line_row *v;
	size_t n, cap;
	struct name_block *names;
};

#endif
