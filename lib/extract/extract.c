/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: everything known about one build's functions, from all its images, into a builder. */
#include "debug_find.h"
#include "debug_sections.h"
#include "demangle.h"
#include "dwarf_extract.h"
#include "elf_mem.h"
#include "functions.h"
#include "gopclntab.h"
#include "internal.h"
#include "intervals.h"
#include "symbols.h"

/* The Go pclntab of the first image that has one (a debug file has none: NOBITS). */
static int extract_go(struct lidia_builder *b, struct lidia_elf *const *elfs, size_t n,
		      const struct lidia_extract_opts *opts, struct intervals *covered,
		      struct lidia_extract_stats *st)
{
	struct go_extract_opts go = {
		.inlines = !OPTS_GET(opts, no_inlines, false),
		.lines = !OPTS_GET(opts, no_lines, false),
		.files = !OPTS_GET(opts, no_files, false),
	};
	struct go_extract_stats gs = { 0 };
	struct gotab t;
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		int found = gotab_find(&t, elfs[i]);

		if (found < 0) {
			lidia_log(LIDIA_LOG_WARN, "%s: %s", elfs[i]->name, lidia_strerror(found));
			continue;
		}
		if (!found)
			continue;
		if (t.version >= GO_1_18 && !t.have_gofunc && go.inlines)
			lidia_log(LIDIA_LOG_WARN, "%s: go:func.* not found, no inline frames",
				  elfs[i]->name);
		err = gotab_extract(b, &t, &go, covered, &gs);
		if (gs.bad_functions)
			lidia_log(LIDIA_LOG_WARN, "%s: %zu Go functions with a malformed table",
				  elfs[i]->name, gs.bad_functions);
		break;
	}
	st->go_functions = gs.functions;
	st->functions += gs.functions;
	st->inline_ranges += gs.inline_ranges;
	st->line_rows += gs.line_rows;
	st->bad_functions += gs.bad_functions;
	return err;
}

static const char *const default_debug_dirs[] = { "/usr/lib/debug", NULL };

static const char *const *debug_dirs(const struct lidia_extract_opts *opts)
{
	const char *const *d = OPTS_GET(opts, debug_dirs, NULL);

	return d ? d : default_debug_dirs;
}

/* The image with the most DWARF: a debug file over its stripped binary. */
static struct lidia_elf *dwarf_image(struct lidia_elf *const *elfs, size_t n)
{
	struct lidia_elf *best = NULL;
	uint64_t best_size = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t size;

		if (elf_section_size(elfs[i], ".debug_info", &size) ||
		    elf_section_size(elfs[i], ".zdebug_info", &size)) {
			if (size > best_size) {
				best = elfs[i];
				best_size = size;
			}
		}
	}
	return best;
}

static int extract_debuginfo(struct lidia_builder *b, struct lidia_elf *const *elfs, size_t n,
			     const struct lidia_extract_opts *opts, const struct sym_vec *syms,
			     struct demangler *dm, struct intervals *covered,
			     struct line_rows *orphans, struct lidia_extract_stats *st)
{
	struct dwarf_extract_opts o = {
		.inlines = !OPTS_GET(opts, no_inlines, false),
		.lines = !OPTS_GET(opts, no_lines, false),
		.files = !OPTS_GET(opts, no_files, false),
		.skip_go = st->go_functions > 0,
	};
	struct dwarf_extract_stats ds = { 0 };
	struct lidia_elf *e = dwarf_image(elfs, n), *inflated = NULL, *alt = NULL, *alt_inflated = NULL;
	Dwarf *alt_dw = NULL;
	int err;

	if (!e)
		return 0;
	/* Broken compressed DWARF costs the DWARF, not the file: symbols still name it all. */
	if ((err = debug_sections_inflate(e, &inflated))) {
		lidia_log(LIDIA_LOG_WARN, "%s: debug sections cannot be inflated (%s): symbols only",
			  e->name, lidia_strerror(err));
		return err == -ENOMEM ? err : 0;
	}
	if (!OPTS_GET(opts, no_debug_search, false) &&
	    debug_find_alt(e, debug_dirs(opts), &alt) > 0) {
		if (debug_sections_inflate(alt, &alt_inflated))
			lidia_log(LIDIA_LOG_WARN, "%s: its dwz file's sections cannot be inflated",
				  e->name);
		else
			alt_dw = dwarf_begin_elf((alt_inflated ? alt_inflated : alt)->elf,
						 DWARF_C_READ, NULL);
	}
	err = extract_dwarf(b, inflated ? inflated : e, alt_dw, &o, syms, dm, covered, orphans,
			    &ds);
	if (alt_dw)
		dwarf_end(alt_dw);
	lidia_elf_close(alt_inflated);
	lidia_elf_close(alt);
	lidia_elf_close(inflated);
	if (ds.overlapping)
		lidia_log(LIDIA_LOG_INFO, "%s: %zu DWARF subprogram ranges overlap another, dropped",
			  e->name, ds.overlapping);
	if (ds.bad_file_index)
		lidia_log(LIDIA_LOG_INFO, "%s: %zu call sites name no file", e->name,
			  ds.bad_file_index);
	st->dwarf_functions = ds.functions;
	st->functions += ds.functions;
	st->inline_ranges += ds.inline_ranges;
	st->line_rows += ds.line_rows;
	return err;
}

int lidia_extract(struct lidia_builder *b, struct lidia_elf *const *elfs, size_t n,
		  const struct lidia_extract_opts *opts, struct lidia_extract_stats *stats)
{
	bool symtab = !OPTS_GET(opts, no_symtab, false);
	bool dynsym = !OPTS_GET(opts, no_dynsym, false);
	struct lidia_extract_stats st = { 0 };
	struct demangler dm = { .enabled = !OPTS_GET(opts, no_demangle, false) };
	struct intervals covered = { 0 };
	struct line_rows orphans = { 0 };
	struct sym_vec syms = { 0 };
	struct lidia_elf **all = NULL, *opened[2];
	size_t nsym = 0, nall = 0, nopened = 0;
	int err = 0;

	if (!n)
		return LIDIA_E_INVAL;
	/* What the images point at: a separate debug file, MiniDebugInfo. */
	all = calloc(n + 2, sizeof(*all));
	if (!all) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(all, elfs, n * sizeof(*elfs));
	nall = n;
	if (!OPTS_GET(opts, no_debug_search, false) && !OPTS_GET(opts, no_dwarf, false) &&
	    !dwarf_image(all, nall)) {
		for (size_t i = 0; i < n && nall == n; i++)
			if (debug_find_file(elfs[i], debug_dirs(opts), &all[nall]) > 0)
				opened[nopened++] = all[nall++];
		st.found_debug_file = nall > n;
	}
	for (size_t i = 0; i < nall && !err; i++)
		err = symbols_collect(&syms, all[i], symtab, dynsym);
	if (!err && symtab) {
		bool any_symtab = false;

		for (size_t i = 0; i < nall; i++) {
			struct lidia_elf_info info;

			lidia_elf_info(all[i], &info);
			any_symtab |= info.has_symtab;
		}
		for (size_t i = 0; i < n && !any_symtab && !err; i++) {
			struct lidia_elf *mini;

			if (debug_minidebuginfo(elfs[i], &mini) <= 0)
				continue;
			opened[nopened++] = mini;
			err = symbols_collect(&syms, mini, true, false);
			st.used_minidebuginfo = true;
			break;
		}
	}
	if (err)
		goto out;
	st.symbols_read = syms.n;
	symbols_resolve(&syms);
	/* Best source first; each later one fills only what is not yet covered. */
	if (!OPTS_GET(opts, no_go, false) &&
	    (err = extract_go(b, elfs, n, opts, &covered, &st)))
		goto out;
	intervals_normalize(&covered);
	if (!OPTS_GET(opts, no_dwarf, false) &&
	    (err = extract_debuginfo(b, all, nall, opts, &syms, &dm, &covered, &orphans, &st)))
		goto out;
	intervals_normalize(&covered);
	err = functions_add_symbols(b, &syms, &covered, &dm, !OPTS_GET(opts, no_files, false),
				    &orphans, &nsym);
	st.functions += nsym;
out:
	for (size_t i = 0; i < nopened; i++)
		lidia_elf_close(opened[i]);
	free(all);
	demangler_release(&dm);
	free(syms.v);
	free(covered.v);
	line_rows_release(&orphans);
	if (stats)
		*stats = st;
	return err;
}
