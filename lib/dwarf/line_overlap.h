/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_LINE_OVERLAP_H
#define LIDIA_LINE_OVERLAP_H

#include <stddef.h>

#include "line_rows.h"

/* A sequence of a line program: rows[first..first + n), the last one with no file. */
struct line_seq {
	size_t first, n;
};

/*
 * Merge k sequences of rows that overlap (sorted by first address, each
 * starting before the end of one before it) into one sequence, appended to
 * out at *n: at every address the row in effect is the one that started
 * last among the sequences covering it (libdw's merge of rows; an earlier
 * sequence wins a tie, as llvm-symbolizer keeps the first of identical ones,
 * so identical code folded by the linker keeps the rows of its first copy),
 * and a sequence's end ends only that sequence. out has room for the rows
 * of the k sequences. 0, -ENOMEM, or 1 when a sequence's addresses go back
 * (nothing appended: the caller keeps its old way).
 */
int line_overlap_merge(struct line_row *out, size_t *n, const struct line_row *rows,
		       const struct line_seq *seqs, size_t k);

#endif
