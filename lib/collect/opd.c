/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: ppc64 ELFv1 function descriptors followed to the code (opd.h). */
#include "elf_mem.h"
#include "internal.h"
#include "opd.h"

/* e's .opd section, with its header, when e is ppc64 ELFv1; NULL otherwise. */
static Elf_Scn *opd_section(const struct lidia_elf *e, GElf_Shdr *sh)
{
	if (e->ehdr.e_machine != EM_PPC64 || (e->ehdr.e_flags & EF_PPC64_ABI) == 2)
		return NULL;
	return elf_section_named(e, ".opd", sh);
}

bool opd_find(struct opd *o, const struct lidia_elf *e)
{
	GElf_Shdr sh;
	Elf_Scn *scn = opd_section(e, &sh);

	memset(o, 0, sizeof(*o));
	if (!scn)
		return false;
	o->addr = sh.sh_addr;
	o->size = sh.sh_size;
	o->shndx = elf_ndxscn(scn);
	o->be = e->ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
	return true;
}

void opd_data(struct opd *o, const struct lidia_elf *const *imgs, size_t n)
{
	for (size_t i = 0; i < n && !o->data; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = opd_section(imgs[i], &sh);
		Elf_Data *d;

		/* The same .opd: the same place and size, with its bytes. */
		if (scn && sh.sh_type == SHT_PROGBITS && sh.sh_addr == o->addr &&
		    sh.sh_size == o->size && (d = elf_rawdata(scn, NULL)) && d->d_buf &&
		    d->d_size == sh.sh_size)
			o->data = d->d_buf;
	}
}

bool opd_entry(const struct opd *o, uint64_t addr, uint64_t *entry)
{
	uint64_t off = addr - o->addr;

	if (!o->data || addr < o->addr || off > o->size || o->size - off < 8)
		return false;
	*entry = load_endian(o->data + off, 8, o->be);
	return true;
}
