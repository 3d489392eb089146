/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DEBUG_SECTIONS_H
#define LIDIA_DEBUG_SECTIONS_H

#include "elf_image.h"

/*
 * libdw in Debian 12 (elfutils 0.188) inflates zlib-compressed debug
 * sections but not zstd ones (ELFCOMPRESS_ZSTD, binutils 2.40 and LLVM 16
 * write them). When e has any, *out is a new image for libdw to read: e's
 * debug sections, the zstd ones inflated (with libzstd), and no other
 * contents. Otherwise *out is NULL. Close *out with lidia_elf_close().
 */
int debug_sections_inflate(const struct lidia_elf *e, struct lidia_elf **out);

#endif
