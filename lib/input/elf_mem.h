/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_ELF_MEM_H
#define LIDIA_ELF_MEM_H

#include <stdbool.h>
#include <stdint.h>

#include "elf_image.h"
#include "internal.h"

/*
 * Reading an ELF image by virtual address, the way the program sees its
 * memory: through the file-backed part of its PT_LOAD segments.
 */

/* Pointer to size bytes at va, or NULL when they are not all in the file. */
const unsigned char *elf_va_ptr(const struct lidia_elf *e, uint64_t va, uint64_t size);

/* The section named name, with its header in *sh; NULL when there is none. */
Elf_Scn *elf_section_named(const struct lidia_elf *e, const char *name, GElf_Shdr *sh);

/* The file data of the section named name, with its address; false if absent or NOBITS. */
bool elf_section_data(const struct lidia_elf *e, const char *name, uint64_t *addr,
		      const unsigned char **data, uint64_t *size);

/* The size of the section named name (even NOBITS or compressed); false if absent. */
bool elf_section_size(const struct lidia_elf *e, const char *name, uint64_t *size);

/*
 * The values of the first symbols named names[0..n) (each at least three
 * bytes long) in .symtab, else .dynsym, found[k] telling which were: one
 * pass over the tables for all of them.
 */
void elf_symbol_values(const struct lidia_elf *e, const char *const *names, uint64_t *values,
		       bool *found, size_t n);

/* A pointer-sized word at va in the image's byte order. */
bool elf_read_word(const struct lidia_elf *e, uint64_t va, unsigned ptr_size, uint64_t *value);

/*
 * The addend of a RELATIVE dynamic relocation at va: where a linker leaves
 * a pointer to the dynamic loader rather than writing it in place.
 */
bool elf_relative_reloc(const struct lidia_elf *e, uint64_t va, uint64_t *value);

/* Load helpers in the image's byte order. */
static inline bool elf_big_endian(const struct lidia_elf *e)
{
	return e->ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
}

static inline uint64_t elf_load(const struct lidia_elf *e, const unsigned char *p, unsigned n)
{
	return load_endian(p, n, elf_big_endian(e));
}

/*
 * Up to max addresses of RELATIVE relocations whose addend is target (the
 * places a pointer to target sits when the linker did not write it in place).
 */
size_t elf_relative_sites(const struct lidia_elf *e, uint64_t target, uint64_t *out, size_t max);

#endif
