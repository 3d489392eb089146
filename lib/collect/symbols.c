/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: function symbols from an ELF image's .symtab and .dynsym (libelf),
 * and one symbol per address, as llvm-symbolizer resolves aliases.
 */
#include "elf_dynsym.h"
#include "internal.h"
#include "opd.h"
#include "radix_sort.h"
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

/* The code section that holds addr (0: none). */
static unsigned code_section_at(const struct lidia_elf *e, uint64_t addr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e->elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) &&
		    addr - sh.sh_addr < sh.sh_size)
			return (unsigned)elf_ndxscn(scn);
	return 0;
}

/*
 * A ppc64 ELFv1 symbol of a function descriptor, moved to its entry point
 * and that code's section; false when the descriptor cannot be read.
 */
static bool follow_descriptor(const struct lidia_elf *e, const struct opd *opd, GElf_Sym *s)
{
	uint64_t entry;
	unsigned shndx;

	if (!opd_entry(opd, s->st_value, &entry) || !(shndx = code_section_at(e, entry)))
		return false;
	s->st_value = entry;
	s->st_shndx = (uint16_t)shndx;
	return true;
}

/* One symbol table: a section's (libelf's), or the dynamic one of an image without sections. */
struct table_src {
	const struct lidia_elf *e;
	Elf_Data *data;		      /* a section's symbols, or NULL */
	size_t strndx;		      /* the section of its names */
	const struct elf_dynsym *dyn; /* else this table */
	size_t n;		      /* entries */
	enum sym_table table;
	uint64_t bias; /* added to every value: a prelinked binary's debug file (elf_pair.h) */
};

static bool table_sym(const struct table_src *t, size_t i, GElf_Sym *s)
{
	const char *name;

	return t->dyn ? elf_dynsym_get(t->dyn, t->e, i, s, &name)
		      : !!gelf_getsym(t->data, (int)i, s);
}

static const char *table_name(const struct table_src *t, size_t i, const GElf_Sym *s)
{
	GElf_Sym again;
	const char *name = NULL;

	if (!s->st_name)
		return NULL;
	if (t->dyn)
		return elf_dynsym_get(t->dyn, t->e, i, &again, &name) ? name : NULL;
	return elf_strptr(t->e->elf, t->strndx, s->st_name);
}

/* Whether s is in code, and where its section (its segment, without sections) ends. */
static bool sym_in_code(const struct table_src *t, const GElf_Sym *s)
{
	return t->dyn ? elf_code_segment_end(t->e, s->st_value) != 0 : in_code(t->e, s->st_shndx);
}

/* The end of the section of the last symbol asked about: symbols come section by section. */
struct last_section {
	unsigned shndx;
	uint64_t end;
	bool known;
};

static uint64_t sym_section_end(const struct table_src *t, const GElf_Sym *s,
				struct last_section *last)
{
	if (!t->dyn) {
		if (!last->known || last->shndx != s->st_shndx)
			*last = (struct last_section){ s->st_shndx, section_end(t->e, s->st_shndx),
						       true };
		return last->end;
	}
	return elf_code_segment_end(t->e, s->st_value);
}

static int collect_table(struct sym_vec *out, const struct table_src *t, const struct opd *opd)
{
	const struct lidia_elf *e = t->e;
	struct last_section last = { 0 };
	const char *file = NULL;
	uint64_t sec_end;

	for (size_t i = 1; i < t->n; i++) { /* entry 0 is the null symbol */
		GElf_Sym s;
		const char *name;
		int type;
		int err;

		if (!table_sym(t, i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if (type == STT_FILE) {
			/* Local symbols after an STT_FILE come from that file (ELF gABI). */
			file = table_name(t, i, &s);
			continue;
		}
		if ((type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) ||
		    s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE || s.st_name == 0)
			continue;
		name = table_name(t, i, &s);
		if (!name || !*name)
			continue;
		/*
		 * Untyped symbols in code are assembly functions without .type (as
		 * llvm-symbolizer takes them), but not local labels (.L) or ARM's
		 * mapping symbols ($a, $t, $x, $d).
		 */
		if (type == STT_NOTYPE &&
		    (name[0] == '$' || !strncmp(name, ".L", 2) || !sym_in_code(t, &s)))
			continue;
		if (opd->shndx && s.st_shndx == opd->shndx && !follow_descriptor(e, opd, &s))
			continue;
		if (e->ehdr.e_machine == EM_ARM)
			s.st_value &= ~(GElf_Addr)1; /* the Thumb bit is not part of the address */
		if (s.st_value + s.st_size < s.st_value)
			continue;

		if ((err = LIDIA_GROW(out->v, out->n + 1, out->cap)))
			return err;
		sec_end = sym_section_end(t, &s, &last);
		out->v[out->n++] = (struct sym){
			.addr = s.st_value + t->bias,
			.size = s.st_size,
			.sec_end = sec_end ? sec_end + t->bias : 0,
			.name = name,
			.file = GELF_ST_BIND(s.st_info) == STB_LOCAL ? file : NULL,
			.index = (uint32_t)i,
			.table = (uint8_t)t->table,
			.bind = (uint8_t)GELF_ST_BIND(s.st_info),
		};
	}
	return 0;
}

/* A section's table: libelf's entries, named in its linked section. */
static int collect_section(struct sym_vec *out, const struct lidia_elf *e, uint64_t bias,
			   const struct opd *opd, Elf_Scn *scn, const GElf_Shdr *sh,
			   enum sym_table table)
{
	struct table_src t = { .e = e,
			       .data = elf_getdata(scn, NULL),
			       .strndx = sh->sh_link,
			       .table = table,
			       .bias = bias };

	if (!t.data || sh->sh_entsize == 0)
		return 0;
	t.n = t.data->d_size / gelf_fsize(e->elf, ELF_T_SYM, 1, EV_CURRENT);
	return collect_table(out, &t, opd);
}

/*
 * An image without section headers: its dynamic symbols, where the dynamic
 * loader finds them (eu-addr2line reads them so too). ppc64 ELFv1 ones are
 * descriptors that cannot be told from data without .opd: left out.
 */
static int collect_dynamic(struct sym_vec *out, const struct lidia_elf *e, const struct opd *opd)
{
	struct elf_dynsym dyn;
	struct table_src t = { .e = e, .dyn = &dyn, .table = SYM_DYNSYM };
	int err;

	if (!elf_dynsym_find(&dyn, e) ||
	    (e->ehdr.e_machine == EM_PPC64 && (e->ehdr.e_flags & EF_PPC64_ABI) != 2))
		return 0;
	t.n = (size_t)dyn.count;
	if ((err = LIDIA_GROW(out->v, out->n + t.n, out->cap)))
		return err;
	return collect_table(out, &t, opd);
}

int symbols_collect(struct sym_vec *out, const struct lidia_elf *e, uint64_t bias,
		    const struct lidia_elf *const *pair, size_t npair, bool symtab, bool dynsym)
{
	Elf_Scn *scn = NULL;
	struct opd opd;
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
		if (lidia_reserve(&p, &out->cap, total, sizeof(*out->v)))
			return -ENOMEM;
		out->v = p;
	}
	scn = NULL;
	if (opd_find(&opd, e))
		opd_data(&opd, pair, npair);

	while (!err && (scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && symtab)
			err = collect_section(out, e, bias, &opd, scn, &sh, SYM_SYMTAB);
		else if (sh.sh_type == SHT_DYNSYM && dynsym)
			err = collect_section(out, e, bias, &opd, scn, &sh, SYM_DYNSYM);
	}
	if (!err && dynsym)
		err = collect_dynamic(out, e, &opd);
	return err;
}

static int cmp_sym(const void *pa, const void *pb)
{
	const struct sym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	/* Within one address, the winner first. */
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	if (a->table != b->table)
		return a->table > b->table ? -1 : 1;
	if (a->index != b->index)
		return a->index > b->index ? -1 : 1;
	return strcmp(a->name, b->name);
}

/*
 * By cmp_sym: by address first in a radix sort, then each run of one
 * address by the rest (aliases: a few at most).
 */
static void sort_symbols(struct sym_vec *syms)
{
	struct sym *sorted = radix_sort_u64(syms->v, syms->n, sizeof(*syms->v), 1);

	if (!sorted) {
		sort_array(syms->v, syms->n, sizeof(*syms->v), cmp_sym);
		return;
	}
	if (sorted != syms->v)
		syms->cap = syms->n; /* a new array, of just that many */
	syms->v = sorted;
	for (size_t i = 0, j; i < syms->n; i = j) {
		for (j = i + 1; j < syms->n && sorted[j].addr == sorted[i].addr; j++)
			;
		sort_array(sorted + i, j - i, sizeof(*sorted), cmp_sym);
	}
}

void symbols_resolve(struct sym_vec *syms)
{
	uint64_t sized_end = 0;
	size_t n = 0;

	sort_symbols(syms);
	for (size_t i = 0; i < syms->n; i++) /* keep each address's winner */
		if (i == 0 || syms->v[i].addr != syms->v[n - 1].addr)
			syms->v[n++] = syms->v[i];
	syms->n = n;

	/*
	 * A symbol of unknown size (assembly without .size) reaches, as
	 * llvm-symbolizer takes it, to the next symbol or its section's end; one
	 * inside a sized function is a label there, and is dropped.
	 */
	n = 0;
	for (size_t i = 0; i < syms->n; i++) {
		struct sym s = syms->v[i];

		if (s.size == 0) {
			uint64_t end = i + 1 < syms->n ? syms->v[i + 1].addr : s.sec_end;

			if (s.sec_end && s.sec_end < end)
				end = s.sec_end;
			if (s.addr < sized_end || end <= s.addr)
				continue;
			s.size = end - s.addr;
		} else if (s.addr + s.size > sized_end) {
			sized_end = s.addr + s.size;
		}
		syms->v[n++] = s;
	}
	syms->n = n;
}

const struct sym *symbols_find(const struct sym_vec *syms, uint64_t addr)
{
	size_t lo = 0, hi = syms->n;

	while (lo < hi) { /* first symbol starting past addr */
		size_t mid = lo + (hi - lo) / 2;

		if (syms->v[mid].addr > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	/* The latest start at or before addr that still covers it; nesting is shallow. */
	for (size_t i = lo, tries = 0; i-- > 0 && tries < 64; tries++)
		if (addr - syms->v[i].addr < syms->v[i].size)
			return &syms->v[i];
	return NULL;
}
