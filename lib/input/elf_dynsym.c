/* SPDX-License-Identifier: Apache-2.0 */
/* Identify: the dynamic symbols of an image that has no section headers (elf_dynsym.h). */
#include "elf_dynsym.h"
#include "elf_mem.h"
#include "internal.h"

/* The hash tables' words: 32 bits in both classes (but for the bloom filter). */
#define WORD 4

struct dyn_tags {
	uint64_t symtab, strtab, strsz, syment, hash, gnu_hash;
};

/* PT_DYNAMIC's entries that say where the symbols are; false when there is none. */
static bool read_dynamic(const struct lidia_elf *e, struct dyn_tags *d)
{
	unsigned w = e->ehdr.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	size_t n;

	memset(d, 0, sizeof(*d));
	if (elf_getphdrnum(e->elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		const unsigned char *p;
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_DYNAMIC ||
		    !(p = elf_va_ptr(e, ph.p_vaddr, ph.p_filesz)))
			continue;
		for (uint64_t k = 0; k + 2 * w <= ph.p_filesz; k += 2 * w) {
			uint64_t tag = elf_load(e, p + k, w), val = elf_load(e, p + k + w, w);

			if (tag == DT_NULL)
				break;
			if (tag == DT_SYMTAB)
				d->symtab = val;
			else if (tag == DT_STRTAB)
				d->strtab = val;
			else if (tag == DT_STRSZ)
				d->strsz = val;
			else if (tag == DT_SYMENT)
				d->syment = val;
			else if (tag == DT_HASH)
				d->hash = val;
			else if (tag == DT_GNU_HASH)
				d->gnu_hash = val;
		}
		return d->symtab && d->strtab;
	}
	return false;
}

/* A 32-bit word of the hash tables at va; false when not in the file. */
static bool hash_word(const struct lidia_elf *e, uint64_t va, uint64_t *v)
{
	const unsigned char *p = elf_va_ptr(e, va, WORD);

	if (!p)
		return false;
	*v = elf_load(e, p, WORD);
	return true;
}

/*
 * How many symbols DT_GNU_HASH covers: past the highest bucket's chain,
 * whose last entry has bit 0 set; symbols below symoffset are not hashed.
 */
static bool gnu_hash_count(const struct lidia_elf *e, uint64_t va, uint64_t max, uint64_t *count)
{
	uint64_t nbuckets, symoffset, bloom_size, last = 0, buckets, chain, v;
	unsigned w = e->ehdr.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;

	if (!hash_word(e, va, &nbuckets) || !hash_word(e, va + 4, &symoffset) ||
	    !hash_word(e, va + 8, &bloom_size) || nbuckets > max || bloom_size > max)
		return false;
	buckets = va + 16 + bloom_size * w;
	for (uint64_t b = 0; b < nbuckets; b++) {
		if (!hash_word(e, buckets + b * WORD, &v))
			return false;
		if (v > last)
			last = v;
	}
	if (last < symoffset) {
		*count = symoffset;
		return symoffset <= max;
	}
	chain = buckets + nbuckets * WORD;
	for (;; last++) {
		if (last >= max || !hash_word(e, chain + (last - symoffset) * WORD, &v))
			return false;
		if (v & 1)
			break;
	}
	*count = last + 1;
	return true;
}

bool elf_dynsym_find(struct elf_dynsym *t, const struct lidia_elf *e)
{
	unsigned entsize = (unsigned)gelf_fsize(e->elf, ELF_T_SYM, 1, EV_CURRENT);
	struct dyn_tags d;
	uint64_t max, n = 0;
	size_t shnum;

	memset(t, 0, sizeof(*t));
	if (elf_getshdrnum(e->elf, &shnum) || shnum != 0 || !entsize || !read_dynamic(e, &d) ||
	    (d.syment && d.syment != entsize))
		return false;
	max = e->size / entsize;
	if (d.gnu_hash ? !gnu_hash_count(e, d.gnu_hash, max, &n)
		       : !d.hash || !hash_word(e, d.hash + 4, &n) || n > max)
		return false;
	t->syment = entsize;
	t->syms = elf_va_ptr(e, d.symtab, n * entsize);
	t->strs = elf_va_ptr(e, d.strtab, d.strsz);
	t->count = n;
	t->strsz = d.strsz;
	return t->syms && t->strs && n > 0;
}

bool elf_dynsym_get(const struct elf_dynsym *t, const struct lidia_elf *e, uint64_t i, GElf_Sym *s,
		    const char **name)
{
	const unsigned char *p = t->syms + i * t->syment;

	if (i >= t->count)
		return false;
	if (e->ehdr.e_ident[EI_CLASS] == ELFCLASS64) {
		s->st_name = (uint32_t)elf_load(e, p, 4);
		s->st_info = p[4];
		s->st_other = p[5];
		s->st_shndx = (uint16_t)elf_load(e, p + 6, 2);
		s->st_value = elf_load(e, p + 8, 8);
		s->st_size = elf_load(e, p + 16, 8);
	} else {
		s->st_name = (uint32_t)elf_load(e, p, 4);
		s->st_value = elf_load(e, p + 4, 4);
		s->st_size = elf_load(e, p + 8, 4);
		s->st_info = p[12];
		s->st_other = p[13];
		s->st_shndx = (uint16_t)elf_load(e, p + 14, 2);
	}
	/* A name must end inside the strings. */
	*name = s->st_name < t->strsz && memchr(t->strs + s->st_name, '\0', t->strsz - s->st_name)
			? (const char *)t->strs + s->st_name
			: "";
	return true;
}

uint64_t elf_code_segment_end(const struct lidia_elf *e, uint64_t addr)
{
	size_t n;

	if (elf_getphdrnum(e->elf, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && addr - ph.p_vaddr < ph.p_memsz)
			return ph.p_vaddr + ph.p_memsz;
	}
	return 0;
}
