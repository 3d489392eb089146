/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_ELF_DYNSYM_H
#define LIDIA_ELF_DYNSYM_H

#include <stdbool.h>
#include <stdint.h>

#include "elf_image.h"

/*
 * The dynamic symbol table of an image without section headers (stripped
 * with objcopy --strip-sections, or never given any), as the dynamic loader
 * finds it: PT_DYNAMIC's DT_SYMTAB, DT_STRTAB and DT_STRSZ, its size from
 * DT_GNU_HASH or DT_HASH (ELF gABI "Dynamic Section"; libdwfl does the same).
 */
struct elf_dynsym {
	const unsigned char *syms, *strs; /* in the image's bytes */
	uint64_t count, strsz;
	unsigned syment;
};

/* Whether e has no section headers and a dynamic symbol table there: *t then says where. */
bool elf_dynsym_find(struct elf_dynsym *t, const struct lidia_elf *e);

/* Symbol i of t, with its name ("" when out of the strings); false when out of the table. */
bool elf_dynsym_get(const struct elf_dynsym *t, const struct lidia_elf *e, uint64_t i, GElf_Sym *s,
		    const char **name);

/* The end of the executable PT_LOAD segment holding addr; 0 when none holds it. */
uint64_t elf_code_segment_end(const struct lidia_elf *e, uint64_t addr);

#endif
