/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: demangling, through LLVM's demangler (demangle_llvm.cc): the names then
 * read exactly as llvm-symbolizer, the reference symbolizer, prints them.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "demangle.h"

char *lidia_llvm_demangle(const char *name, char *buf, size_t *cap);

/*
 * Whether LLVM's nonMicrosoftDemangle() may take name: Itanium's prefix is
 * one to four underscores then 'Z' (_Z, also Rust's legacy scheme; ___Z of
 * Clang's blocks, "invocation function for block in f()"), Rust v0's _R,
 * D's _D. Anything else is passed over without a call.
 */
static bool maybe_mangled(const char *name)
{
	size_t under = 0;

	/* A loop, not strspn(): its set-up for "_" cost more than the names it looked at. */
	while (under < 5 && name[under] == '_')
		under++;
	if (under >= 1 && under <= 4 && name[under] == 'Z')
		return true;
	return name[0] == '_' && (name[1] == 'R' || name[1] == 'D');
}

const char *demangle(struct demangler *d, const char *name)
{
	char *out;

	if (!d->enabled || !maybe_mangled(name))
		return name;
	/*
	 * The pieces of one symbol, a function's ranges: the same name, asked
	 * for again. By address: comparing and copying every name cost more
	 * than the repeats it saved.
	 */
	if (name == d->last)
		return d->same ? name : d->buf;
	out = lidia_llvm_demangle(name, d->buf, &d->cap);
	if (out)
		d->buf = out;
	d->last = name;
	d->same = !out;
	return out ? out : name;
}

void demangler_release(struct demangler *d)
{
	free(d->buf);
	d->buf = NULL;
	d->last = NULL;
	d->cap = 0;
}
