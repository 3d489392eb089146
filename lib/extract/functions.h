/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_FUNCTIONS_H
#define LIDIA_FUNCTIONS_H

#include "intervals.h"
#include "symbols.h"

struct demangler;
struct name_block;

/*
 * Line rows that no DWARF function claims (units built with
 * -gline-tables-only, skeletons whose .dwo is gone): symbols take them.
 * Sorted by address; a row with no file ends a sequence.
 */
struct line_row {
	uint64_t addr;
	const char *file;
	int32_t line;
};

struct line_rows {
	struct line_row *v;
	size_t n, cap;
	struct name_block *names; /* the files' names */
};

void line_rows_release(struct line_rows *r);

/*
 * Sort syms and keep one symbol per start address: the aliases' winner
 * (largest size, then .symtab over .dynsym, then the later entry in its
 * table, as llvm-symbolizer picks, then the name).
 */
void symbols_resolve(struct sym_vec *syms);

/* The innermost resolved symbol that covers addr, or NULL. */
const struct sym *symbols_find(const struct sym_vec *syms, uint64_t addr);

/*
 * Turn resolved function symbols into depth-0 ranges that Pyroscope's lookup
 * walk can use (spec section 4), names demangled through dm, a local symbol's
 * file from its STT_FILE when files is set (or, with rows, the file and lines
 * of the rows in its range), with no overlaps: where
 * a symbol starts inside another, it owns its bytes and the outer one resumes
 * after it. Addresses in covered (sorted, merged: a better source described
 * them) are left out. *nfuncs gets the number of ranges added.
 */
int functions_add_symbols(struct lidia_builder *b, const struct sym_vec *syms,
			  const struct intervals *covered, struct demangler *dm, bool files,
			  const struct line_rows *rows, size_t *nfuncs);

#endif
