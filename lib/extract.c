/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: everything known about one build's functions, from all its images, into a builder. */
#include "functions.h"
#include "internal.h"
#include "symbols.h"

int lidia_extract(struct lidia_builder *b, struct lidia_elf *const *elfs, size_t n,
		  const struct lidia_extract_opts *opts, struct lidia_extract_stats *stats)
{
	bool symtab = !OPTS_GET(opts, no_symtab, false);
	bool dynsym = !OPTS_GET(opts, no_dynsym, false);
	struct lidia_extract_stats st = { 0 };
	struct sym_vec syms = { 0 };
	int err = 0;

	if (!n)
		return LIDIA_E_INVAL;
	for (size_t i = 0; i < n && !err; i++)
		err = symbols_collect(&syms, elfs[i], symtab, dynsym);
	if (err)
		goto out;
	st.symbols_read = syms.n;
	err = functions_add_symbols(b, &syms, &st.functions);
out:
	free(syms.v);
	if (stats)
		*stats = st;
	return err;
}
