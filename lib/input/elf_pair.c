/* SPDX-License-Identifier: Apache-2.0 */
/* Identify: a binary and its debug file in one address space, or not (elf_pair.h). */
#include "elf_mem.h"
#include "elf_pair.h"
#include "internal.h"

/* The address of e's first PT_LOAD segment; false when it has none. */
static bool first_load(const struct lidia_elf *e, uint64_t *va)
{
	size_t n;

	if (elf_getphdrnum(e->elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e->elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			*va = ph.p_vaddr;
			return true;
		}
	}
	return false;
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

bool elf_pair_same_addresses(const struct lidia_elf *a, const struct lidia_elf *b)
{
	uint64_t x, y;

	if (first_load(a, &x) && first_load(b, &y))
		return x == y;
	if (text_address(a, &x) && text_address(b, &y))
		return x == y;
	return true;
}
