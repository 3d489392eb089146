/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_OPD_H
#define LIDIA_OPD_H

#include <stdbool.h>
#include <stdint.h>

#include "elf_image.h"

/*
 * A 64-bit PowerPC ELFv1 file's function descriptors (.opd): there a
 * function symbol's value is its descriptor's address, whose first
 * doubleword is the entry point (ELFv1 ABI section 3.2.5), the address
 * code and DWARF use.
 */
struct opd {
	uint64_t addr, size;	   /* .opd's addresses */
	size_t shndx;		   /* its section index in the file whose symbols are read */
	const unsigned char *data; /* its bytes, from this file or its pair; NULL: none */
	bool be;
};

/* Whether e is a ppc64 ELFv1 file with an .opd section: *o then says where it is. */
bool opd_find(struct opd *o, const struct lidia_elf *e);

/*
 * Fill o->data from the first of imgs (one build's images: a debug file's
 * .opd is NOBITS, its stripped binary has the bytes) with .opd's bytes.
 */
void opd_data(struct opd *o, const struct lidia_elf *const *imgs, size_t n);

/* The entry point of the descriptor at addr; false when .opd's bytes do not hold it. */
bool opd_entry(const struct opd *o, uint64_t addr, uint64_t *entry);

#endif
