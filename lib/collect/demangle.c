/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: demangling, through LLVM's demangler (demangle_llvm.cc): the names then
 * read exactly as llvm-symbolizer, the reference symbolizer, prints them.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

char *lidia_llvm_demangle(const char *name);

/*
 * Whether LLVM's nonMicrosoftDemangle() may take name: Itanium's prefix is
 * one to four underscores then 'Z' (_Z, also Rust's legacy scheme; ___Z of
 * Clang's blocks, "invocation function for block in f()"), Rust v0's _R,
 * D's _D. Anything else is passed over without a call.
 */
static bool maybe_mangled(const char *name)
{
	size_t under = strspn(name, "_");

	if (under >= 1 && under <= 4 && name[under] == 'Z')
		return true;
	return name[0] == '_' && (name[1] == 'R' || name[1] == 'D');
}

const char *demangle(struct demangler *d, const char *name)
{
	char *out;

	if (!d->enabled || !maybe_mangled(name))
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
