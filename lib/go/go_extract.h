/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_GO_EXTRACT_H
#define LIDIA_GO_EXTRACT_H

#include "extract.h"
#include "pclntab.h"

/*
 * The first source of an extraction: add every function of t to x->b, a
 * depth-0 range per function, a range per inlined call (depth > 0, with its
 * call file and line) and line tables, as x's options say. The functions'
 * extents are added to x->covered and counted in x->st (functions,
 * go_functions). A malformed function keeps its name and extent only, and
 * is counted in x->st.bad_functions: not fatal.
 */
int gotab_extract(struct extract_ctx *x, const struct gotab *t);

#endif
