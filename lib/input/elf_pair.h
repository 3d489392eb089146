/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_ELF_PAIR_H
#define LIDIA_ELF_PAIR_H

#include <stdbool.h>

#include "elf_image.h"

/*
 * Whether two images of one build (a binary and its debug file) put their
 * code at the same addresses. prelink(8) moves a library's load address
 * after its debug file was split off, keeping the build ID: the debug file's
 * addresses are then not the binary's (libdwfl applies the difference of
 * their first PT_LOAD segments). True when either gives no address to
 * compare (no PT_LOAD and no .text).
 */
bool elf_pair_same_addresses(const struct lidia_elf *a, const struct lidia_elf *b);

#endif
