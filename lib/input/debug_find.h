/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DEBUG_FIND_H
#define LIDIA_DEBUG_FIND_H

#include "elf_image.h"

/*
 * Identify: where the rest of an image's debug information lives.
 * dirs is a NULL-terminated list of debug roots (like /usr/lib/debug).
 * Each returns 1 and *out (close it) when found, 0 when not, or an error.
 */

/*
 * The separate debug file of e: <dir>/.build-id/xx/yyyy.debug under each
 * root, else the file .gnu_debuglink names (beside e, in .debug/ beside it,
 * or under each root by e's directory), its CRC checked. Its build ID must
 * be e's.
 */
int debug_find_file(const struct lidia_elf *e, const char *const *dirs, struct lidia_elf **out);

/*
 * The dwz supplementary file that e's .gnu_debugaltlink names: by build ID
 * under the root given (gathered: NULL for none), then, when dirs is not
 * NULL (a search), by build ID under each of its roots, by its path,
 * relative to e's directory, or under the root of the tree e was unpacked
 * into (e in <root>/usr/lib/debug/...). Not found: a warning. *named says
 * whether e names one at all (a .gnu_debugaltlink with contents).
 */
int debug_find_alt(const struct lidia_elf *e, const char *gathered, const char *const *dirs,
		   struct lidia_elf **out, bool *named);

/* The MiniDebugInfo of e (.gnu_debugdata: an xz-compressed ELF with a .symtab). */
int debug_minidebuginfo(const struct lidia_elf *e, struct lidia_elf **out);

#endif
