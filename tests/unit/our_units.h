/* SPDX-License-Identifier: Apache-2.0 */
/*
 * For unit tests that hold lidiagen's DIE reader (lib/dwarf/die_reader.c)
 * to libdw: every unit of dw read by ours, each DIE under its root given to
 * visit in tree order. False when ours did not read every unit whole.
 */
#ifndef LIDIA_OUR_UNITS_H
#define LIDIA_OUR_UNITS_H

#include <stdbool.h>

#include <elfutils/libdw.h>

#include "abbrevs.h"
#include "die_reader.h"

typedef void our_visit_fn(struct die_reader *r, struct die_attrs *die, void *ctx);

static inline void our_tree(struct die_reader *r, struct die_attrs *parent, our_visit_fn *visit,
			    void *ctx, int depth)
{
	struct die_attrs child;

	if (depth > 64 || die_child(r, parent, &child) != 0)
		return;
	do {
		visit(r, &child, ctx);
		our_tree(r, &child, visit, ctx, depth + 1);
	} while (die_sibling(r, &child) == 0);
	die_children_read(r, parent);
}

static inline bool our_units(Dwarf *dw, const struct dwarf_sections *s, our_visit_fn *visit,
			     void *ctx)
{
	struct abbrev_cache cache = { 0 };
	Dwarf_Off off = 0, next;
	size_t hsize;
	bool ok = true;

	while (ok && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		struct die_reader r;
		struct die_attrs root;
		Dwarf_Die cudie;

		if (dwarf_offdie(dw, off + hsize, &cudie)) {
			die_reader_unit(&r, &cache, s, &cudie, off, true);
			ok = r.ours && die_read(&r, &cudie, &root);
			if (ok)
				our_tree(&r, &root, visit, ctx, 0);
			ok = ok && !r.failed;
		}
		off = next;
	}
	abbrev_cache_release(&cache);
	return ok;
}

#endif
