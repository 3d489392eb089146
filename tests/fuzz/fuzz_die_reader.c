/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target for lidiagen's own DIE reader (lib/dwarf/die_reader.c), which
 * the two passes over the units read DIEs with instead of libdw's calls: on
 * every unit, the tree is walked as the passes walk it, once through ours
 * and once through libdw's calls, and unless ours gave up (to libdw, as the
 * passes then do), the two walks must see the same DIEs with the same
 * attributes and ranges. The input is that of fuzz_dwarf_units (a 2-byte
 * little-endian length A, A bytes of .debug_abbrev, then .debug_info),
 * given to libdw as the sections of an ELF image made here. Each unit's
 * line program offset, as unit_stmt_list() reads it, must be libdw's too,
 * and the attributes die_names_read() finds of a DIE what dwarf_attr() finds.
 * Corpus: tests/fuzz/corpus/die_reader/ (see its README).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "die_reader.h"
#include "lidia.h"
#include "unit_scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a walk saw of one DIE. */
struct seen {
	Dwarf_Off off;
	unsigned tag;
	bool named;
	unsigned origin_form;
	Dwarf_Off origin;
	Dwarf_Word call_line, call_file;
	Dwarf_Addr lo[2], hi[2];
	int nranges;
};

struct walk {
	struct die_reader r;
	struct seen *v;
	size_t n, cap;
};

#define MAX_SEEN 65536

static void note(struct walk *w, struct die_attrs *d)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	Dwarf_Die origin;
	struct seen s;

	memset(&s, 0, sizeof(s)); /* compared whole, padding too */
	s.off = dwarf_dieoffset(&d->die);
	s.tag = d->tag;

	if (d->tag == DW_TAG_inlined_subroutine) {
		s.named = d->named;
		s.origin_form = d->origin.form;
		if (d->origin.form && dwarf_formref_die(&d->origin, &origin))
			s.origin = dwarf_dieoffset(&origin);
		if (d->call_line.form)
			dwarf_formudata(&d->call_line, &s.call_line);
		if (d->call_file.form)
			dwarf_formudata(&d->call_file, &s.call_file);
	}
	if (d->tag == DW_TAG_subprogram || d->tag == DW_TAG_inlined_subroutine)
		while (s.nranges < 2 && (off = die_ranges(&w->r, d, off, &base, &lo, &hi)) > 0) {
			s.lo[s.nranges] = lo;
			s.hi[s.nranges++] = hi;
		}
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 64;
		if (!(w->v = realloc(w->v, w->cap * sizeof(*w->v))))
			abort();
	}
	w->v[w->n++] = s;
}

/* die_names_read() of d, where ours reads it, finds each attribute where dwarf_attr() does. */
static void check_names(struct die_reader *r, struct die_attrs *d)
{
	static const unsigned attrs[5] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name,
					   DW_AT_abstract_origin, DW_AT_specification };
	struct die_names names;
	const Dwarf_Attribute *ours[5] = { &names.linkage, &names.mips_linkage, &names.name,
					   &names.origin, &names.specification };

	if (!r->ours || !die_names_read(r, &d->die, &names))
		return;
	for (int k = 0; k < 5; k++) {
		Dwarf_Attribute a;
		bool found = dwarf_attr(&d->die, attrs[k], &a) != NULL;

		if (found != (ours[k]->form != 0) ||
		    (found && (a.form != ours[k]->form || a.valp != ours[k]->valp)))
			abort();
	}
}

/* As the passes walk: into children, but for structures (their siblings found past them). */
static void walk_tree(struct walk *w, struct die_attrs *parent, int level)
{
	struct die_attrs child;

	if (level > 64 || w->n > MAX_SEEN || die_child(&w->r, parent, &child) != 0)
		return;
	do {
		note(w, &child);
		check_names(&w->r, &child);
		if (child.tag != DW_TAG_structure_type)
			walk_tree(w, &child, level + 1);
	} while (w->n <= MAX_SEEN && die_sibling(&w->r, &child) == 0);
	die_children_read(&w->r, parent);
}

/* The unit of cudie walked by ours (ours) or libdw's calls; false: ours gave up. */
static bool walk_unit(struct walk *w, struct abbrev_cache *c, const struct dwarf_sections *s,
		      Dwarf_Die *cudie, bool ours)
{
	uint64_t unit_off = dwarf_dieoffset(cudie) - dwarf_cuoffset(cudie);
	struct die_attrs root;

	w->n = 0;
	die_reader_unit(&w->r, c, s, cudie, unit_off, true);
	if (!ours)
		die_reader_by_libdw(&w->r);
	else if (!w->r.ours)
		return false;
	if (die_read(&w->r, cudie, &root))
		walk_tree(w, &root, 0);
	return !w->r.failed;
}

/*
 * An ELF image of .debug_abbrev and .debug_info, in mem (freed by the
 * caller), with the bytes of .debug_info as .debug_ranges,
 * .debug_rnglists and .debug_line too: range lists to read, the same for
 * both walks, and line program offsets to check.
 */
#define NSECTIONS 7

static char *make_image(const uint8_t *abbrev, size_t alen, const uint8_t *info, size_t ilen,
			size_t *size)
{
	static const char names[] = "\0.shstrtab\0.debug_abbrev\0.debug_info\0.debug_ranges"
				    "\0.debug_rnglists\0.debug_line";
	static const unsigned name_at[] = { 0, 1, 11, 25, 37, 51, 67 };
	size_t at[NSECTIONS], sizes[NSECTIONS] = { 0, sizeof(names), alen, ilen, ilen, ilen, ilen };
	const void *bytes[NSECTIONS] = { NULL, names, abbrev, info, info, info, info };
	size_t end;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	char *mem;

	end = sizeof(Elf64_Ehdr);
	for (int i = 1; i < NSECTIONS; i++) {
		at[i] = end;
		end += sizes[i];
	}
	end = (end + 7) & ~(size_t)7;
	if (!(mem = calloc(1, end + NSECTIONS * sizeof(Elf64_Shdr))))
		abort();
	eh = (Elf64_Ehdr *)mem;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_REL;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shoff = end;
	eh->e_shnum = NSECTIONS;
	eh->e_shstrndx = 1;
	sh = (Elf64_Shdr *)(mem + end);
	for (int i = 1; i < NSECTIONS; i++) {
		if (sizes[i])
			memcpy(mem + at[i], bytes[i], sizes[i]);
		sh[i] = (Elf64_Shdr){ .sh_name = name_at[i],
				      .sh_type = i == 1 ? SHT_STRTAB : SHT_PROGBITS,
				      .sh_offset = at[i],
				      .sh_size = sizes[i],
				      .sh_addralign = 1 };
	}
	*size = end + NSECTIONS * sizeof(Elf64_Shdr);
	return mem;
}

/* The sections as libdw reads them (find_sections() in dwarf.c). */
static void sections(Elf *elf, struct dwarf_sections *s)
{
	Elf_Data *a = elf_getdata(elf_getscn(elf, 2), NULL);
	Elf_Data *i = elf_getdata(elf_getscn(elf, 3), NULL);
	Elf_Data *l = elf_getdata(elf_getscn(elf, 6), NULL);

	memset(s, 0, sizeof(*s));
	if (a && i) {
		s->abbrev = a->d_buf, s->abbrev_size = a->d_size;
		s->info = i->d_buf, s->info_size = i->d_size;
	}
	if (l && l->d_size)
		s->line = l->d_buf, s->line_size = l->d_size;
}

/* unit_stmt_list() reads DW_AT_stmt_list as libdw does, wherever it says it can tell. */
static void check_stmt_list(struct abbrev_cache *c, const struct dwarf_sections *s,
			    Dwarf_Die *cudie)
{
	uint64_t unit_off = dwarf_dieoffset(cudie) - dwarf_cuoffset(cudie), ours = 0;
	int r = unit_stmt_list(c, s, unit_off, cudie->addr, &ours);
	Dwarf_Attribute a;
	Dwarf_Word theirs = 0;
	bool found;

	if (r < 0)
		return; /* libdw is asked */
	found = dwarf_attr(cudie, DW_AT_stmt_list, &a) && !dwarf_formudata(&a, &theirs);
	if (found != (r == 1) || (found && ours != theirs))
		abort();
}

static void compare_units(Dwarf *dw, const struct dwarf_sections *s)
{
	struct abbrev_cache c = { 0 };
	struct walk ours = { 0 }, theirs = { 0 };
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t type;

	for (int unit = 0; unit < 64; unit++) {
		if (dwarf_get_units(dw, cu, &cu, &version, &type, &cudie, NULL) != 0)
			break;
		check_stmt_list(&c, s, &cudie);
		walk_unit(&theirs, &c, s, &cudie, false);
		if (!walk_unit(&ours, &c, s, &cudie, true))
			continue; /* ours gave up: the passes read the unit with libdw */
		if (ours.n != theirs.n ||
		    (ours.n && memcmp(ours.v, theirs.v, ours.n * sizeof(*ours.v))))
			abort(); /* ours read what libdw's calls read otherwise */
	}
	free(ours.v);
	free(theirs.v);
	abbrev_cache_release(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwarf_sections s;
	size_t alen, isize;
	char *image;
	Elf *elf;
	Dwarf *dw;

	if (size < 2)
		return 0;
	alen = (size_t)data[0] | (size_t)data[1] << 8;
	if (alen > size - 2)
		alen = size - 2;
	elf_version(EV_CURRENT);
	image = make_image(data + 2, alen, data + 2 + alen, size - 2 - alen, &isize);
	if ((elf = elf_memory(image, isize))) {
		if ((dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL))) {
			sections(elf, &s);
			compare_units(dw, &s);
			dwarf_end(dw);
		}
		elf_end(elf);
	}
	free(image);
	return 0;
}
