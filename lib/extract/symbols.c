/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: function symbols from an ELF image's .symtab and .dynsym (libelf). */
#include "internal.h"
#include "symbols.h"

/* True when section shndx holds code. */
static bool in_code(const struct lidia_elf *e, unsigned shndx)
{
	Elf_Scn *scn = elf_getscn(e->elf, shndx);
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/* Where the section a symbol is defined in ends (0 when unknown). */
static uint64_t section_end(const struct lidia_elf *e, unsigned shndx)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE || !(scn = elf_getscn(e->elf, shndx)) ||
	    !gelf_getshdr(scn, &sh))
		return 0;
	return sh.sh_addr + sh.sh_size;
}

static int collect_table(struct sym_vec *out, const struct lidia_elf *e, Elf_Scn *scn,
			 const GElf_Shdr *sh, enum sym_table table)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const char *file = NULL;
	size_t n;

	if (!data || sh->sh_entsize == 0)
		return 0;
	n = data->d_size / gelf_fsize(e->elf, ELF_T_SYM, 1, EV_CURRENT);
	for (size_t i = 1; i < n; i++) { /* entry 0 is the null symbol */
		GElf_Sym s;
		const char *name;
		int type;
		void *p;
		int err;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if (type == STT_FILE) {
			/* Local symbols after an STT_FILE come from that file (ELF gABI). */
			file = s.st_name ? elf_strptr(e->elf, sh->sh_link, s.st_name) : NULL;
			continue;
		}
		if ((type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) ||
		    s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE || s.st_name == 0)
			continue;
		name = elf_strptr(e->elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		/*
		 * Untyped symbols in code are assembly functions without .type (as
		 * llvm-symbolizer takes them), but not local labels (.L) or ARM's
		 * mapping symbols ($a, $t, $x, $d).
		 */
		if (type == STT_NOTYPE &&
		    (name[0] == '$' || !strncmp(name, ".L", 2) || !in_code(e, s.st_shndx)))
			continue;
		if (e->ehdr.e_machine == EM_ARM)
			s.st_value &= ~(GElf_Addr)1; /* the Thumb bit is not part of the address */
		if (s.st_value + s.st_size < s.st_value)
			continue;

		p = out->v;
		err = lidia_grow(&p, &out->cap, out->n + 1, sizeof(*out->v));
		if (err)
			return err;
		out->v = p;
		out->v[out->n++] = (struct sym){
			.addr = s.st_value,
			.size = s.st_size,
			.sec_end = section_end(e, s.st_shndx),
			.name = name,
			.file = GELF_ST_BIND(s.st_info) == STB_LOCAL ? file : NULL,
			.index = (uint32_t)i,
			.table = (uint8_t)table,
			.bind = (uint8_t)GELF_ST_BIND(s.st_info),
		};
	}
	return 0;
}

int symbols_collect(struct sym_vec *out, const struct lidia_elf *e, bool symtab, bool dynsym)
{
	Elf_Scn *scn = NULL;
	size_t total = out->n;
	void *p = out->v;
	int err = 0;

	/* Room for every entry at once: no doubling, no slack (libLLVM has 45k). */
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_entsize &&
		    ((sh.sh_type == SHT_SYMTAB && symtab) || (sh.sh_type == SHT_DYNSYM && dynsym)))
			total += sh.sh_size / sh.sh_entsize;
	}
	if (total > out->cap) {
		p = realloc(out->v, total * sizeof(*out->v));
		if (!p)
			return -ENOMEM;
		out->v = p;
		out->cap = total;
	}
	scn = NULL;

	while (!err && (scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && symtab)
			err = collect_table(out, e, scn, &sh, SYM_SYMTAB);
		else if (sh.sh_type == SHT_DYNSYM && dynsym)
			err = collect_table(out, e, scn, &sh, SYM_DYNSYM);
	}
	return err;
}
