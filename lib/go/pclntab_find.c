/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: finding a Go pclntab in an ELF image (Go's cmd/internal/objfile):
 * its section, the runtime.pclntab symbols, or (stripped PIE, external
 * linking) a header in the loaded segments that the module data points at;
 * runtime.text through its relocation, and where go:func.* is.
 */
#include "elf_mem.h"
#include "pclntab_find.h"

static const unsigned char *elf_read_va_cb(void *ctx, uint64_t va, uint64_t size)
{
	return elf_va_ptr(ctx, va, size);
}

static bool elf_read_word_cb(void *ctx, uint64_t va, uint64_t *value)
{
	const struct lidia_elf *e = ctx;

	return elf_read_word(e, va, e->ehdr.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4, value);
}

/*
 * A parsed header is believed only when its first functions read back:
 * entries ascending, records and names inside the table.
 */
static bool plausible(const struct gotab *t)
{
	uint64_t prev = 0, n = t->nfunc < 16 ? t->nfunc : 16;

	if (t->nfunc == 0)
		return false;
	for (uint64_t i = 0; i < n; i++) {
		struct gofunc f;

		if (!gotab_func(t, i, &f) || f.entry < prev)
			return false;
		prev = f.entry;
	}
	return true;
}

/* The symbols of Go's linker this file may look up. */
enum go_sym {
	SYM_MODULEDATA,
	SYM_BUILDVERSION,
	SYM_PCLNTAB,
	SYM_EPCLNTAB,
	SYM_GOFUNC,
	SYM_GOFUNC_OLD,
	NSYMS
};

/*
 * Those symbols' values, all found in one pass over the symbol tables when
 * the first is wanted: a name at a time was a pass each (and one per
 * candidate table in a scan), a quarter of a big Go program's conversion.
 */
struct go_syms {
	const struct lidia_elf *e;
	bool looked;
	bool found[NSYMS];
	uint64_t value[NSYMS];
};

static bool go_sym(struct go_syms *s, enum go_sym which, uint64_t *value)
{
	static const char *const names[NSYMS] = {
		[SYM_MODULEDATA] = "runtime.firstmoduledata",
		[SYM_BUILDVERSION] = "runtime.buildVersion",
		[SYM_PCLNTAB] = "runtime.pclntab",
		[SYM_EPCLNTAB] = "runtime.epclntab",
		[SYM_GOFUNC] = "go:func.*",
		[SYM_GOFUNC_OLD] = "go.func.*",
	};

	if (!s->looked)
		elf_symbol_values(s->e, names, s->value, s->found, NSYMS);
	s->looked = true;
	if (s->found[which])
		*value = s->value[which];
	return s->found[which];
}

/*
 * runtime.text in a 1.18+ header is a pointer: where the linker left it to
 * a RELATIVE relocation (lld does, GNU ld and Go's linker write it in place
 * as well), the relocation's addend is the value.
 */
static void text_start_relocated(const struct lidia_elf *e, struct gotab *t)
{
	uint64_t v;

	if (t->version >= GO_1_18 && !t->text_start &&
	    elf_read_word(e, t->va + 8 + 2 * (uint64_t)t->ptr_size, t->ptr_size, &v) && v)
		t->text_start = v;
}

/* Word k (pointer-sized) of the module data at md. */
static bool md_word(const struct lidia_elf *e, const struct gotab *t, uint64_t md, unsigned k,
		    uint64_t *v)
{
	return elf_read_word(e, md + (uint64_t)k * t->ptr_size, t->ptr_size, v);
}

/*
 * Check that md is runtime.firstmoduledata for t: its slices point at t's
 * tables. Fills the blob's size and, for 1.18+, go:func.* from it.
 */
static bool check_moduledata(const struct lidia_elf *e, struct gotab *t, uint64_t md,
			     uint64_t *blob_size)
{
	uint64_t w;

	if (!md_word(e, t, md, 0, &w) || w != t->va)
		return false;
	if (t->version == GO_1_2) {
		/* pclntable []byte, ftab []functab, ... */
		uint64_t len;

		if (!md_word(e, t, md, 1, &len) || !md_word(e, t, md, 3, &w) ||
		    w != t->va + t->pcln_off)
			return false;
		*blob_size = len;
		return true;
	}
	/* pcHeader, funcnametab, cutab, filetab, pctab, pclntable, ftab, ... */
	if (!md_word(e, t, md, 1, &w) || w != t->va + t->funcnames_off ||
	    !md_word(e, t, md, 4, &w) || w != t->va + t->cutab_off || !md_word(e, t, md, 7, &w) ||
	    w != t->va + t->filetab_off || !md_word(e, t, md, 10, &w) ||
	    w != t->va + t->pctab_off || !md_word(e, t, md, 13, &w) || w != t->va + t->pcln_off ||
	    !md_word(e, t, md, 14, &w))
		return false;
	*blob_size = t->pcln_off + w;
	if (t->version >= GO_1_18) {
		/* minpc..., text at word 22; go:func.* after covctrs (1.20+), end, gcdata, gcbss, types, etypes, rodata */
		unsigned k = t->version >= GO_1_20 ? 40 : 38;

		if (!md_word(e, t, md, 22, &w) || w != t->text_start || !md_word(e, t, md, k, &w))
			return false;
		t->gofunc = w;
		t->have_gofunc = true;
	}
	return true;
}

/*
 * The bytes of the next PT_LOAD segment from program header *i on (writable
 * ones only if writable), with its header in *ph; NULL when there is none.
 * Segments overlap only in corrupt files: *scanned keeps the bytes handed
 * out in all within the file's size, so no file is scanned over and over.
 */
static const unsigned char *next_segment(const struct lidia_elf *e, size_t *i, bool writable,
					 uint64_t *scanned, GElf_Phdr *ph)
{
	size_t n;

	if (elf_getphdrnum(e->elf, &n))
		return NULL;
	for (; *i < n; (*i)++) {
		const unsigned char *p;

		if (!gelf_getphdr(e->elf, (int)*i, ph) || ph->p_type != PT_LOAD ||
		    (writable && !(ph->p_flags & PF_W)) || ph->p_filesz > e->size)
			continue;
		if ((*scanned += ph->p_filesz) > e->size)
			return NULL;
		p = elf_va_ptr(e, ph->p_vaddr, ph->p_filesz);
		if (p) {
			(*i)++;
			return p;
		}
	}
	return NULL;
}

/* Search the writable segments (and RELATIVE relocations) for the module data. */
static bool find_moduledata(const struct lidia_elf *e, struct gotab *t, struct go_syms *syms,
			    uint64_t *blob_size)
{
	uint64_t md, sites[8], scanned = 0;
	const unsigned char *p;
	GElf_Phdr ph;
	size_t n;

	if (go_sym(syms, SYM_MODULEDATA, &md) && check_moduledata(e, t, md, blob_size))
		return true;
	for (size_t i = 0; (p = next_segment(e, &i, true, &scanned, &ph));) {
		for (uint64_t off = (t->ptr_size - ph.p_vaddr % t->ptr_size) % t->ptr_size;
		     off + t->ptr_size <= ph.p_filesz; off += t->ptr_size)
			if (elf_load(e, p + off, t->ptr_size) == t->va &&
			    check_moduledata(e, t, ph.p_vaddr + off, blob_size))
				return true;
	}
	n = elf_relative_sites(e, t->va, sites, ARRAY_SIZE(sites));
	for (size_t i = 0; i < n; i++)
		if (check_moduledata(e, t, sites[i], blob_size))
			return true;
	return false;
}

/*
 * The release that wrote a 1.2-header table (gotab_set_release): the string
 * runtime.buildVersion, found through the header of .go.buildinfo (Go 1.13+:
 * "\xff Go buildinf:", pointer size, flags, then a pointer to that string's
 * header; the flags' bit 1 marks the 1.18+ form, which holds no pointer) or
 * through the symbol. Other headers know their layout: nothing looked up.
 */
static void set_release(const struct lidia_elf *e, struct gotab *t, struct go_syms *syms)
{
	static const char magic[] = "\xff Go buildinf:";
	unsigned p = t->ptr_size;
	const unsigned char *d, *s;
	uint64_t va, size, sv = 0, str, len;

	if (t->version != GO_1_2)
		return;
	if (elf_section_data(e, ".go.buildinfo", &va, &d, &size) && size >= 16 + 2 * (uint64_t)p &&
	    !memcmp(d, magic, sizeof(magic) - 1) && d[14] == p && !(d[15] & 2))
		elf_read_word(e, va + 16, p, &sv);
	if (!sv)
		go_sym(syms, SYM_BUILDVERSION, &sv);
	if (sv && elf_read_word(e, sv, p, &str) && elf_read_word(e, sv + p, p, &len) && len <= 64 &&
	    (s = elf_va_ptr(e, str, len)))
		gotab_set_release(t, gotab_release_minor((const char *)s, len));
}

/*
 * Scan the loaded segments for a header that some module data points at.
 * Each candidate that reads back costs a scan of the writable segments: a
 * few are tried (a Go program has one table), not every one a corrupt or
 * hostile file might hold.
 */
static bool scan_for_table(const struct lidia_elf *e, struct gotab *t, struct go_syms *syms)
{
	unsigned ptr = e->ehdr.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4, tries = 0;
	bool be = elf_big_endian(e);
	uint64_t scanned = 0;
	const unsigned char *p;
	GElf_Phdr ph;

	for (size_t i = 0; (p = next_segment(e, &i, false, &scanned, &ph));) {
		for (uint64_t off = (ptr - ph.p_vaddr % ptr) % ptr; off + 16 <= ph.p_filesz;
		     off += ptr) {
			uint64_t blob;

			/* Cheap filter: the magic's top bytes are 0xff ff ff and bytes 4-5 zero. */
			if (p[off + 4] || p[off + 5] || p[off + 7] != ptr ||
			    (be ? p[off] != 0xff || p[off + 1] != 0xff || p[off + 2] != 0xff
				: p[off + 3] != 0xff || p[off + 2] != 0xff || p[off + 1] != 0xff))
				continue;
			if (gotab_parse(t, p + off, ph.p_filesz - off, ph.p_vaddr + off, be))
				continue;
			text_start_relocated(e, t);
			if (!plausible(t))
				continue;
			if (++tries > 16)
				return false;
			t->read_va = elf_read_va_cb;
			t->read_word = elf_read_word_cb;
			t->ctx = (void *)e;
			if (find_moduledata(e, t, syms, &blob) && blob <= t->size) {
				t->size = blob;
				set_release(e, t, syms);
				return true;
			}
		}
	}
	return false;
}

/* Go's linker always writes its build ID note (owner "Go", type 4), stripped or not. */
static bool has_go_note(const struct lidia_elf *e)
{
	const unsigned char *raw = (const unsigned char *)elf_rawfile(e->elf, NULL);
	uint64_t size, scanned = 0;
	size_t n;

	if (elf_section_size(e, ".note.go.buildid", &size))
		return true;
	if (!raw || elf_getphdrnum(e->elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		uint64_t off;

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
		    ph.p_offset > e->size || ph.p_filesz > e->size - ph.p_offset)
			continue;
		if ((scanned += ph.p_filesz) > e->size)
			break; /* notes that overlap: a corrupt file */
		/* Notes: namesz, descsz, type (4 bytes each), then name and desc, 4-aligned. */
		for (off = 0; off + 12 <= ph.p_filesz;) {
			const unsigned char *p = raw + ph.p_offset + off;
			uint64_t namesz = elf_load(e, p, 4), descsz = elf_load(e, p + 4, 4);

			if (elf_load(e, p + 8, 4) == 4 && namesz == 3 && off + 15 <= ph.p_filesz &&
			    !memcmp(p + 12, "Go", 3))
				return true;
			off += 12 + ((namesz + 3) & ~3ull) + ((descsz + 3) & ~3ull);
		}
	}
	return false;
}

int gotab_find(struct gotab *t, const struct lidia_elf *e)
{
	static const char *const sections[] = { ".gopclntab", ".data.rel.ro.gopclntab" };
	bool be = elf_big_endian(e), found = false;
	struct go_syms syms = { .e = e };
	const unsigned char *data;
	uint64_t va, size, end, blob;

	for (size_t i = 0; i < ARRAY_SIZE(sections) && !found; i++)
		found = elf_section_data(e, sections[i], &va, &data, &size) &&
			!gotab_parse(t, data, size, va, be);
	/* Symbol look-ups and scans are for what Go's linker wrote, not every ELF. */
	if (!found && !has_go_note(e))
		return 0;
	if (!found && go_sym(&syms, SYM_PCLNTAB, &va) && go_sym(&syms, SYM_EPCLNTAB, &end) &&
	    end > va && (data = elf_va_ptr(e, va, end - va)))
		found = !gotab_parse(t, data, end - va, va, be);
	if (found) {
		t->read_va = elf_read_va_cb;
		t->read_word = elf_read_word_cb;
		t->ctx = (void *)e;
		text_start_relocated(e, t);
		if (!plausible(t))
			return LIDIA_E_GO;
		set_release(e, t, &syms);
		if (t->version >= GO_1_18) {
			/* Where the inline trees are: the symbol, or the module data's word. */
			if (go_sym(&syms, SYM_GOFUNC, &t->gofunc) ||
			    go_sym(&syms, SYM_GOFUNC_OLD, &t->gofunc))
				t->have_gofunc = true;
			else
				find_moduledata(e, t, &syms, &blob);
		}
		return 1;
	}
	return scan_for_table(e, t, &syms) ? 1 : 0;
}
