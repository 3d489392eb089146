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
	/*
	 * The directory libdw looks for .dwo files in first: dwp_unpack.c's
	 * private one, for the copy it makes; NULL for images begun from memory.
	 */
	const char *debugdir;
};

/*
 * As lidia_elf_open() and lidia_elf_open_mem(), and with any_type also
 * relocatable files: a dwz supplementary file is ET_REL.
 */
int elf_image_open(struct lidia_elf **out, const char *path, bool any_type);
int elf_image_open_mem(struct lidia_elf **out, void *buf, size_t size, const char *name,
		       bool any_type);

#endif
