/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_FUNCTIONS_H
#define LIDIA_FUNCTIONS_H

#include "extract.h"

/*
 * The last source of an extraction: turn x's resolved function symbols into
 * depth-0 ranges that Pyroscope's lookup walk can use (spec section 4),
 * names demangled, a local symbol's file from its STT_FILE when x->files is
 * set (or, with x's orphan rows, the file and lines of the rows in its
 * range), with no overlaps: where a symbol starts inside another, it owns
 * its bytes and the outer one resumes after it. Addresses in x->covered
 * (sorted, merged: a better source described them) are left out. The
 * ranges added are counted in x->st.functions.
 */
int functions_add_symbols(struct extract_ctx *x);

#endif
