/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: DWARF (libdw). Every concrete subprogram's address ranges become
 * depth-0 ranges, the DW_TAG_inlined_subroutine tree under it depth > 0
 * ranges with their call file and line, and the line program the line rows
 * of whichever range is innermost at each address.
 *
 * Two passes: the first lists every subprogram range of every unit, so that
 * overlapping subprograms (identical code folded, broken DWARF) can be
 * resolved to one function per address before anything is written; the
 * second walks each kept subprogram's inline tree against its unit's lines.
 * Broken pieces cost their function or unit, never the file.
 *
 * Units share line programs: which unit decodes one (here: ours, else
 * libdw's rows), who reads it and who takes its orphan rows is
 * line_groups.c's. A partial unit with no address range in it is read by
 * unit_scan.c, not libdw, and then passed over. A unit costs what it holds,
 * not its program's rows nor its abbreviation table. Both passes move
 * between DIEs and find their attributes with die_reader.c; libdw reads
 * the values (addresses, references, strings, range lists).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "debug_sections.h"
#include "dwarf_begin.h"
#include "dwarf_crew.h"
#include "dwarf_extract.h"
#include "dwarf_walk.h"
#include "frames.h"
#include "internal.h"
#include "line_groups.h"
#include "line_orphans.h"
#include "line_table.h"
#include "name_blocks.h"
#include "orphan_spans.h"
#include "scan_chunks.h"
#include "split_paths.h"
#include "unit_chunks.h"
#include "unit_scan.h"

/* ---- Between the passes: one function per address ------------------------------ */

static int cmp_subprog(const void *pa, const void *pb)
{
	const struct subprog *a = *(struct subprog *const *)pa, *b = *(struct subprog *const *)pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi > b->hi ? -1 : 1; /* the larger first: it is kept */
	return a < b ? -1 : a > b;	       /* then unit order */
}

/* One function per address: a subprogram range starting inside a kept one is dropped. */
static int resolve_overlaps(struct dw *w)
{
	struct subprog **order = malloc(w->nsubs * sizeof(*order) + 1);
	uint64_t end = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < w->nsubs; i++)
		order[i] = &w->subs[i];
	sort_array(order, w->nsubs, sizeof(*order), cmp_subprog);
	for (size_t i = 0; i < w->nsubs; i++) {
		order[i]->kept = order[i]->lo >= end;
		if (order[i]->kept)
			end = order[i]->hi;
		else
			w->overlapping++;
	}
	free(order);
	return 0;
}

/*
 * Once libdw has inflated the compressed sections, their bytes in the
 * image's mapping are read no more: give the pages back. Where they are must
 * be noted before libdw opens the image: libelf rewrites the headers of what
 * it inflates.
 */
struct compressed_span {
	uint64_t off, size;
};

static size_t note_compressed(const struct lidia_elf *e, struct compressed_span *out, size_t max)
{
	Elf_Scn *scn = NULL;
	size_t n = 0;

	if (!e->map)
		return 0;
	while (n < max && (scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
		    sh.sh_type != SHT_NOBITS && sh.sh_offset <= e->size &&
		    sh.sh_size <= e->size - sh.sh_offset)
			out[n++] = (struct compressed_span){ sh.sh_offset, sh.sh_size };
	}
	return n;
}

/*
 * The sections of elf our own readers read, as libdw left them (inflated).
 * Little-endian images only: the readers read that byte order.
 */
static void read_sections(Elf *elf, struct dwarf_sections *s)
{
	const char *ident = elf ? elf_getident(elf, NULL) : NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	memset(s, 0, sizeof(*s));
	if (!ident || ident[EI_DATA] != ELFDATA2LSB || elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const unsigned char **data = NULL;
		size_t *size = NULL;
		const char *n;
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    (sh.sh_flags & SHF_COMPRESSED) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(n, ".debug_line"))
			data = &s->line, size = &s->line_size;
		else if (!strcmp(n, ".debug_str"))
			data = &s->str, size = &s->str_size;
		else if (!strcmp(n, ".debug_line_str"))
			data = &s->line_str, size = &s->line_str_size;
		else if (!strcmp(n, ".debug_info"))
			data = &s->info, size = &s->info_size;
		else if (!strcmp(n, ".debug_abbrev"))
			data = &s->abbrev, size = &s->abbrev_size;
		else if (!strcmp(n, ".debug_ranges"))
			data = &s->ranges, size = &s->ranges_size;
		else if (!strcmp(n, ".debug_rnglists"))
			data = &s->rnglists, size = &s->rnglists_size;
		else if (!strcmp(n, ".debug_aranges"))
			data = &s->aranges, size = &s->aranges_size;
		/* The first of a name, as libdw takes it. */
		if (data && !*data && (d = elf_getdata(scn, NULL)) && d->d_buf) {
			*data = d->d_buf;
			*size = d->d_size;
		}
	}
}

/* e's sections, and the .debug_info of alt (its dwz file, or NULL) that libdw reads. */
static void find_sections(const struct lidia_elf *e, Dwarf *alt, struct dwarf_sections *s)
{
	struct dwarf_sections of_alt;

	read_sections(e->elf, s);
	if (!alt || !s->info)
		return;
	read_sections(dwarf_getelf(alt), &of_alt);
	s->alt_info = of_alt.info;
	s->alt_info_size = of_alt.info_size;
}

/* libdw's reading of e (NULL: e has no DWARF), with alt as its dwz file. */
static Dwarf *begin(struct dw *w, const struct lidia_elf *e, Dwarf *alt)
{
	struct compressed_span spans[64];
	size_t nspans = note_compressed(e, spans, ARRAY_SIZE(spans));
	Dwarf *dw = dwarf_begin_image(e->elf, alt);

	if (!dw)
		return NULL;
	find_sections(e, alt, &w->secs);
	for (size_t i = 0; i < nspans; i++)
		debug_sections_drop_pages(e, spans[i].off, spans[i].size);
	return dw;
}

/* The line program unit names, whatever the unit: line_orphans.c reads the others. */
static int note_stmt_list(struct dw *w, struct abbrev_cache *c, Dwarf_Die *cudie)
{
	uint64_t unit_off = dwarf_dieoffset(cudie) - dwarf_cuoffset(cudie);
	Dwarf_Attribute a;
	Dwarf_Word off;
	int err, r = unit_stmt_list(c, &w->secs, unit_off, cudie->addr, &off);

	if (r == 0 ||
	    (r < 0 && (!dwarf_attr(cudie, DW_AT_stmt_list, &a) || dwarf_formudata(&a, &off))))
		return 0;
	if ((err = LIDIA_GROW(w->stmt_lists, w->nstmt_lists + 1, w->cap_stmt_lists)))
		return err;
	w->stmt_lists[w->nstmt_lists++] = off;
	return 0;
}

/* A skeleton whose split unit (its .dwo) was not found, or not looked for. */
static void note_missing_split(struct dw *w, Dwarf_Die *cudie)
{
	Dwarf_Attribute a;

	if (!w->splits_missing++ &&
	    (dwarf_attr(cudie, DW_AT_dwo_name, &a) || dwarf_attr(cudie, DW_AT_GNU_dwo_name, &a)))
		w->first_missing = dwarf_formstring(&a);
}

/*
 * Without every split unit, no inline frame: the file would hold those of
 * the units found only, and count as many of them as one with all could
 * hold, so that a run with all would keep it. Left out, it rates as lines.
 */
static void without_missing_splits(struct dw *w, const char *name, bool searched)
{
	if (!w->splits_missing || !w->x->inlines)
		return;
	lidia_log(LIDIA_LOG_WARN,
		  "%s: %zu split unit%s %s (the first: '%s'): inline frames are left out", name,
		  w->splits_missing, w->splits_missing == 1 ? "" : "s",
		  searched ? "not found" : "not looked for (no search)",
		  w->first_missing ? w->first_missing : "?");
	w->x->inlines = false;
}

/*
 * The units to read, in w->units (a skeleton with the split unit it found,
 * when find_split lets libdw look for it): the first pass then reads each
 * (subprog_scan.c).
 */
static int list_units_with(struct dw *w, Dwarf *dw, bool find_split, struct abbrev_cache *abbrevs)
{
	Dwarf_CU *cu = NULL;
	int err;

	for (;;) {
		Dwarf_Die cudie, subdie;
		Dwarf_Half version;
		uint8_t unit_type;
		Dwarf_CU *next;
		struct unit *un;
		int r = dwarf_get_units(dw, cu, &next, &version, &unit_type, &cudie,
					find_split ? &subdie : NULL);

		if (r != 0)
			return 0; /* 1: no more units; -1: the rest is unreadable */
		cu = next;
		if ((err = note_stmt_list(w, abbrevs, &cudie)))
			return err;
		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton &&
		    unit_type != DW_UT_partial)
			continue;
		if (w->skip_go && dwarf_srclang(&cudie) == DW_LANG_Go)
			continue; /* the pclntab describes Go code better */
		if (w->nunits >= NO_GROUP)
			return LIDIA_E_TOO_BIG;
		if ((err = LIDIA_GROW(w->units, w->nunits + 1, w->cap_units)))
			return err;
		un = &w->units[w->nunits++];
		*un = (struct unit){ .die = cudie,
				     .die_off = dwarf_dieoffset(&cudie),
				     .unit_off = dwarf_dieoffset(&cudie) - dwarf_cuoffset(&cudie),
				     .group = NO_GROUP };
		un->partial = unit_type == DW_UT_partial;
		un->split = find_split && unit_type == DW_UT_skeleton &&
			    dwarf_tag(&subdie) == DW_TAG_compile_unit;
		if (un->split)
			un->split_die = subdie;
		else if (unit_type == DW_UT_skeleton)
			note_missing_split(w, &cudie);
		w->split_units |= un->split;
	}
}

/* As list_units_with(), the abbreviations it reads forgotten before the units are read. */
static int list_units(struct dw *w, Dwarf *dw, bool find_split)
{
	struct abbrev_cache abbrevs = { 0 }; /* for the line programs' offsets, until listed */
	int err = list_units_with(w, dw, find_split, &abbrevs);

	abbrev_cache_release(&abbrevs);
	return err;
}

/*
 * Whether the second pass can read the units in runs (dwarf_crew.h): none
 * is split (a .dwo belongs to the Dwarf that found it), and a new Dwarf
 * over the image reads the first one (libdw inflates a GNU .zdebug section
 * in the image once, and then no other Dwarf reads it). Then the Dwarf
 * that listed and scanned the units, and all it kept of each, is ended,
 * and w->dw is the new one, which reads nothing more.
 */
static bool read_in_runs(struct dw *w, Elf *elf, Dwarf *alt)
{
	Dwarf *fresh;
	Dwarf_Die first;

	if (w->split_units || !w->nunits || !(fresh = dwarf_begin_image(elf, alt)))
		return false;
	if (!dwarf_offdie(fresh, w->units[0].die_off, &first)) {
		dwarf_end_image(fresh);
		return false;
	}
	dwarf_end_image(w->dw);
	w->dw = fresh;
	for (size_t i = 0; i < w->nunits; i++)
		memset(&w->units[i].die, 0, sizeof(w->units[i].die)); /* its Dwarf is gone */
	return true;
}

static void dw_release(struct dw *w)
{
	walk_release(w);
	free(w->units);
	free(w->stmt_lists);
	free(w->subs);
	line_groups_release(w);
}

void extract_dwarf_sort_orphans(struct extract_ctx *x)
{
	sort_rows(&x->orphans, x->threads);
}

int extract_dwarf(struct extract_ctx *x, const struct lidia_elf *e, Dwarf *alt)
{
	struct dw w = { .x = x, .skip_go = x->st.go_functions > 0 };
	Dwarf *dw = begin(&w, e, alt);
	struct crew crew;
	bool search, find_split;
	int err;

	if (!dw)
		return 0; /* no DWARF here */
	w.dw = dw;	  /* replaced when the units are read in runs */
	frames_init(&w.fr, x->b, x->lines, x->files);
	w.fr.bias = x->bias;
	/* The .dwo files an input names are opened only when searching, and only if regular. */
	search = e->debugdir || !x->no_debug_search;
	find_split = search && split_paths_safe(dw, e->name, e->debugdir);
	if (!(err = list_units(&w, dw, find_split))) {
		without_missing_splits(&w, e->name, search);
		crew_open(&crew, &w, alt);
		if (!(err = scan_all_units(&w, &crew)) && !(err = resolve_overlaps(&w)) &&
		    !(err = plan_groups(&w)) && !(err = plan_orphan_spans(&w))) {
			if (read_in_runs(&w, e->elf, alt))
				crew_start_runs(&crew, e->elf, alt);
			err = walk_all_units(&w, &crew);
		}
		crew_close(&crew);
	}
	if (!err && x->lines) /* as the units' own orphan rows: kept only with lines */
		err = line_orphans_add(x, w.stmt_lists, w.nstmt_lists, &w.secs,
				       e->ehdr.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4);
	if (!err) {
		x->st.inline_ranges += w.fr.inline_ranges;
		x->st.line_rows += w.fr.line_rows;
	}
	if (w.overlapping)
		lidia_log(LIDIA_LOG_INFO,
			  "%s: %zu DWARF subprogram ranges overlap another, dropped", e->name,
			  w.overlapping);
	if (w.threads_used > 1)
		lidia_log(LIDIA_LOG_DEBUG, "%s: DWARF units walked on %zu threads, in %zu runs",
			  e->name, w.threads_used, w.chunks);
	if (w.bad_file_index)
		lidia_log(LIDIA_LOG_INFO, "%s: %zu call sites name no file", e->name,
			  w.bad_file_index);
	dw_release(&w);
	dwarf_end_image(w.dw);
	return err;
}
