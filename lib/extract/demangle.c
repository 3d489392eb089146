/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: demangling, through LLVM's demangler (demangle_llvm.cc): the names then
 * read exactly as llvm-symbolizer, the reference symbolizer, prints them.
 */
#include <stdlib.h>

#include "demangle.h"

char *lidia_llvm_demangle(const char *name);

const char *demangle(struct demangler *d, const char *name)
{
	char *out;

	/* Itanium (_Z, also Rust's legacy scheme), Rust v0 (_R) and D (_D). */
	if (!d->enabled || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R' && name[1] != 'D'))
		return name;
	out = lidia_llvm_demangle(name);
	if (!out)
		return name;
	free(d->buf);
	d->buf = out;
	return out;
}

void demangler_release(struct demangler *d)
{
	free(d->buf);
	d->buf = NULL;
}
