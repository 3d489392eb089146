/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: everything known about one build's functions, from all its images, into a builder. */
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

int lidia_extract(struct lidia_builder *b, struct lidia_elf *const *elfs, size_t n,
		  const struct lidia_extract_opts *opts, struct lidia_extract_stats *stats)
{
	bool symtab = !OPTS_GET(opts, no_symtab, false);
	bool dynsym = !OPTS_GET(opts, no_dynsym, false);
	struct lidia_extract_stats st = { 0 };
	struct intervals covered = { 0 };
	struct sym_vec syms = { 0 };
	size_t nsym = 0;
	int err = 0;

	if (!n)
		return LIDIA_E_INVAL;
	if (!OPTS_GET(opts, no_go, false))
		err = extract_go(b, elfs, n, opts, &covered, &st);
	for (size_t i = 0; i < n && !err; i++)
		err = symbols_collect(&syms, elfs[i], symtab, dynsym);
	if (err)
		goto out;
	st.symbols_read = syms.n;
	intervals_normalize(&covered);
	err = functions_add_symbols(b, &syms, &covered, &nsym);
	st.functions += nsym;
out:
	free(syms.v);
	free(covered.v);
	if (stats)
		*stats = st;
	return err;
}
