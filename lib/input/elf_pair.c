/* SPDX-License-Identifier: Apache-2.0 */
/* Identify: a binary and its debug file in one address space, or not (elf_pair.h). */
#include "elf_mem.h"
#include "elf_pair.h"
#include "internal.h"

/* e's PT_LOAD segments, up to max, in *n; false when it has none. */
static bool loads(const struct lidia_elf *e, GElf_Phdr *out, size_t max, size_t *n)
{
	size_t count;

	*n = 0;
	if (elf_getphdrnum(e->elf, &count))
		return false;
	for (size_t i = 0; i < count && *n < max; i++)
		if (gelf_getphdr(e->elf, (int)i, &out[*n]) && out[*n].p_type == PT_LOAD)
			(*n)++;
	return *n > 0;
}

/*
 * Whether dbg's segments are bin's moved by bias: as many, each at the same
 * distance and of the same size in memory (a debug file's are as the
 * binary's, but for their file sizes).
 */
static bool moved_whole(const GElf_Phdr *b, size_t nb, const GElf_Phdr *d, size_t nd, uint64_t bias)
{
	if (nb != nd)
		return false;
	for (size_t i = 0; i < nb; i++)
		if (b[i].p_vaddr != d[i].p_vaddr + bias || b[i].p_memsz != d[i].p_memsz)
			return false;
	return true;
}

/* The address of e's .text (even NOBITS, as in a debug file); false when it has none. */
static bool text_address(const struct lidia_elf *e, uint64_t *va)
{
	GElf_Shdr sh;

	if (!elf_section_named(e, ".text", &sh))
		return false;
	*va = sh.sh_addr;
	return true;
}

int elf_pair_bias(const struct lidia_elf *bin, const struct lidia_elf *dbg, uint64_t *bias)
{
	GElf_Phdr b[16], d[16];
	size_t nb, nd;
	uint64_t x, y;

	*bias = 0;
	if (loads(bin, b, 16, &nb) && loads(dbg, d, 16, &nd)) {
		*bias = b[0].p_vaddr - d[0].p_vaddr;
		return moved_whole(b, nb, d, nd, *bias) ? 0 : LIDIA_E_ELF_ADDRESSES;
	}
	if (text_address(bin, &x) && text_address(dbg, &y) && x != y)
		return LIDIA_E_ELF_ADDRESSES; /* moved, but by how much cannot be told */
	return 0;
}
