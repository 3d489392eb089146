/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DEMANGLE_H
#define LIDIA_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Demangling of C++ (Itanium ABI), Rust and D names, as llvm-symbolizer
 * prints them. buf holds the last result.
 */
struct demangler {
	char *buf;
	bool enabled;
};

/*
 * name demangled, or name itself when it is not mangled or demangling is off.
 * A demangled name lives until the next call.
 */
const char *demangle(struct demangler *d, const char *name);

void demangler_release(struct demangler *d);

#endif
