/* SPDX-License-Identifier: Apache-2.0 */
/* Identify: an ELF image's memory by virtual address, its sections and symbols by name. */
#include "elf_mem.h"
#include "internal.h"

const unsigned char *elf_va_ptr(const struct lidia_elf *e, uint64_t va, uint64_t size)
{
	size_t n;

	if (elf_getphdrnum(e->elf, &n))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		uint64_t rel;

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (va < ph.p_vaddr || va - ph.p_vaddr >= ph.p_filesz)
			continue;
		rel = va - ph.p_vaddr;
		if (size > ph.p_filesz - rel || ph.p_offset > e->size ||
		    ph.p_offset + rel > e->size || size > e->size - ph.p_offset - rel)
			return NULL;
		return (const unsigned char *)elf_rawfile(e->elf, NULL) + ph.p_offset + rel;
	}
	return NULL;
}

Elf_Scn *elf_section_named(const struct lidia_elf *e, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(e->elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

bool elf_section_data(const struct lidia_elf *e, const char *name, uint64_t *addr,
		      const unsigned char **data, uint64_t *size)
{
	const unsigned char *raw = (const unsigned char *)elf_rawfile(e->elf, NULL);
	GElf_Shdr sh;

	if (!raw || !elf_section_named(e, name, &sh))
		return false;
	if (sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED) || sh.sh_offset > e->size ||
	    sh.sh_size > e->size - sh.sh_offset)
		return false;
	*addr = sh.sh_addr;
	*data = raw + sh.sh_offset;
	*size = sh.sh_size;
	return true;
}

bool elf_section_size(const struct lidia_elf *e, const char *name, uint64_t *size)
{
	GElf_Shdr sh;

	if (!elf_section_named(e, name, &sh) || sh.sh_type == SHT_NOBITS)
		return false;
	*size = sh.sh_size;
	return true;
}

/* Whether sn is names[k], unless found already: its first three bytes first, cheaply. */
static bool wanted(const char *sn, const char *const *names, size_t k, const bool *found)
{
	const char *n = names[k];

	return !found[k] && sn[0] == n[0] && sn[1] == n[1] && sn[2] == n[2] && !strcmp(sn, n);
}

/* Look for names[0..n) among the defined symbols of the tables of type want. */
static size_t scan_symbols(const struct lidia_elf *e, Elf64_Word want, const char *const *names,
			   uint64_t *values, bool *found, size_t n, size_t left)
{
	Elf_Scn *scn = NULL;

	while (left && (scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != want || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		count = data->d_size / gelf_fsize(e->elf, ELF_T_SYM, 1, EV_CURRENT);
		for (size_t i = 1; i < count && left; i++) {
			GElf_Sym s;
			const char *sn;

			if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
			    !(sn = elf_strptr(e->elf, sh.sh_link, s.st_name)) || !sn[0] || !sn[1])
				continue;
			for (size_t k = 0; k < n; k++) {
				if (wanted(sn, names, k, found)) {
					values[k] = s.st_value;
					found[k] = true;
					left--;
				}
			}
		}
	}
	return left;
}

void elf_symbol_values(const struct lidia_elf *e, const char *const *names, uint64_t *values,
		       bool *found, size_t n)
{
	size_t left = n;

	memset(found, 0, n * sizeof(*found));
	left = scan_symbols(e, SHT_SYMTAB, names, values, found, n, left);
	scan_symbols(e, SHT_DYNSYM, names, values, found, n, left);
}

static bool is_relative(const struct lidia_elf *e, unsigned type)
{
	switch (e->ehdr.e_machine) {
	case EM_X86_64:
		return type == R_X86_64_RELATIVE;
	case EM_386:
		return type == R_386_RELATIVE;
	case EM_AARCH64:
		return type == R_AARCH64_RELATIVE;
	case EM_ARM:
		return type == R_ARM_RELATIVE;
	case EM_PPC64:
		return type == R_PPC64_RELATIVE;
	case EM_S390:
		return type == R_390_RELATIVE;
	case EM_RISCV:
		return type == R_RISCV_RELATIVE;
	default:
		return false;
	}
}

bool elf_relative_reloc(const struct lidia_elf *e, uint64_t va, uint64_t *value)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) ||
		    !sh.sh_entsize || !(sh.sh_flags & SHF_ALLOC))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			if (sh.sh_type == SHT_RELA) {
				GElf_Rela r;

				if (gelf_getrela(data, (int)i, &r) && r.r_offset == va &&
				    is_relative(e, (unsigned)GELF_R_TYPE(r.r_info))) {
					*value = (uint64_t)r.r_addend;
					return true;
				}
			} else {
				GElf_Rel r;

				if (gelf_getrel(data, (int)i, &r) && r.r_offset == va &&
				    is_relative(e, (unsigned)GELF_R_TYPE(r.r_info)))
					return false; /* REL keeps the addend in place: it was 0 */
			}
		}
	}
	return false;
}

size_t elf_relative_sites(const struct lidia_elf *e, uint64_t target, uint64_t *out, size_t max)
{
	Elf_Scn *scn = NULL;
	size_t found = 0;

	while (found < max && (scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    !(sh.sh_flags & SHF_ALLOC) || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && found < max; i++) {
			GElf_Rela r;

			if (gelf_getrela(data, (int)i, &r) && (uint64_t)r.r_addend == target &&
			    is_relative(e, (unsigned)GELF_R_TYPE(r.r_info)))
				out[found++] = r.r_offset;
		}
	}
	return found;
}

bool elf_read_word(const struct lidia_elf *e, uint64_t va, unsigned ptr_size, uint64_t *value)
{
	const unsigned char *p = elf_va_ptr(e, va, ptr_size);

	if (!p)
		return false;
	*value = elf_load(e, p, ptr_size);
	if (*value == 0)
		elf_relative_reloc(e, va, value);
	return true;
}
