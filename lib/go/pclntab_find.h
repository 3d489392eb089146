/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_PCLNTAB_FIND_H
#define LIDIA_PCLNTAB_FIND_H

#include "elf_image.h"
#include "pclntab.h"

/*
 * Find the pclntab of a Go ELF image, wherever it is: the .gopclntab or
 * .data.rel.ro.gopclntab section, the runtime.pclntab symbols, or (stripped
 * PIE, external linking) the module data that points at a valid header.
 * t reads the program through e, which must outlive it. Returns 1 when
 * found, 0 when the image has none, or a negative error.
 */
int gotab_find(struct gotab *t, const struct lidia_elf *e);

#endif
