/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DEMANGLE_H
#define LIDIA_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Demangling of C++ (Itanium ABI), Rust and D names, as llvm-symbolizer
 * prints them. buf (cap bytes) holds the result for the name at last
 * (same: it did not demangle).
 */
struct demangler {
	char *buf;
	const char *last;
	size_t cap;
	bool enabled, same;
};

/*
 * name demangled, or name itself when it is not mangled or demangling is off.
 * A demangled name lives until the next call. The name last given is known
 * again by its address alone: it must not change while the demangler lives
 * (the names of a symbol table, of libdw or of name blocks do not).
 */
const char *demangle(struct demangler *d, const char *name);

void demangler_release(struct demangler *d);

#endif
