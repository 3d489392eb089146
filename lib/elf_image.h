/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_ELF_IMAGE_H
#define LIDIA_ELF_IMAGE_H

#include <gelf.h>

#include "lidia.h"

/* An opened ELF image: libelf's handle over bytes we mapped or were given. */
struct lidia_elf {
	Elf *elf;
	GElf_Ehdr ehdr;
	void *map;   /* our mapping, or NULL for caller memory */
	void *owned; /* a heap copy we made (inflated sections), or NULL */
	size_t size;
	char *name;
};

#endif
