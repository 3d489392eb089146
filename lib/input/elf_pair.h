/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_ELF_PAIR_H
#define LIDIA_ELF_PAIR_H

#include <stdint.h>

#include "elf_image.h"

/*
 * How far dbg's addresses are from bin's, two images of one build (a binary
 * and its debug file): prelink(8) moves a library's load address after its
 * debug file was split off, keeping the build ID, and the debug file's
 * symbols and DWARF are then at the addresses of the link. As libdwfl, the
 * difference of their first PT_LOAD segments, in *bias, to add to dbg's
 * addresses (0 when they are the same, or when either has no PT_LOAD: then
 * .text's addresses are compared). LIDIA_E_ELF_ADDRESSES when the two are
 * not one layout moved whole (their segments differ otherwise): the pair
 * cannot be read together.
 */
int elf_pair_bias(const struct lidia_elf *bin, const struct lidia_elf *dbg, uint64_t *bias);

#endif
