/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_FUNCTIONS_H
#define LIDIA_FUNCTIONS_H

#include "intervals.h"
#include "symbols.h"

/*
 * Turn function symbols into depth-0 ranges that Pyroscope's lookup walk
 * can use (spec section 4): one symbol per start address (the aliases'
 * winner: largest size, then .symtab over .dynsym, then the later entry in
 * its table, as llvm-symbolizer picks, then the name), and no overlaps: where
 * a symbol starts inside another, it owns its bytes and the outer one resumes
 * after it. Addresses in covered (sorted, merged: a better source described
 * them) are left out. Sorts syms in place. *nfuncs gets the number of ranges
 * added.
 */
int functions_add_symbols(struct lidia_builder *b, struct sym_vec *syms,
			  const struct intervals *covered, size_t *nfuncs);

#endif
