/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DEMANGLE_H
#define LIDIA_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Demangling of C++ (Itanium ABI), Rust and D names, as llvm-symbolizer
 * prints them. buf (cap bytes) holds the last result, that of the name in
 * key (have_last; same: it did not demangle).
 */
struct demangler {
	char *buf, *key;
	size_t cap, key_cap;
	bool enabled, have_last, same;
};

/*
 * name demangled, or name itself when it is not mangled or demangling is off.
 * A demangled name lives until the next call.
 */
const char *demangle(struct demangler *d, const char *name);

void demangler_release(struct demangler *d);

#endif
