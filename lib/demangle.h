/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DEMANGLE_H
#define LIDIA_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Demangling of C++ (Itanium ABI) and Rust legacy names, which is what
 * llvm-symbolizer prints. The buffer is reused from call to call.
 */
struct demangler {
	char *buf;
	size_t cap;
	bool enabled;
};

/* name demangled, or name itself when it is not mangled or demangling is off. */
const char *demangle(struct demangler *d, const char *name);

void demangler_release(struct demangler *d);

#endif
