/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_ORPHAN_SPANS_H
#define LIDIA_ORPHAN_SPANS_H

#include <stdint.h>

#include "dwarf_walk.h"

/*
 * Where a line program's orphan rows (those of code no kept subprogram
 * describes) hold: at the addresses whose unit, as llvm-symbolizer finds it
 * (code_owners.h), names that program. A row in effect past the end of its
 * unit's code (over a C++ thunk the compiler wrote no row for) ends there,
 * and where several programs describe one address (a sequence repeated by
 * several units) only the owning unit's holds.
 */

/*
 * After plan_groups(), while w->units[].die are still those of w->dw: every
 * group's spans, in w->orphan_spans and its spans_first, spans_end. 0 or
 * -ENOMEM.
 */
int plan_orphan_spans(struct dw *w);

/* One group's rows on their way into w->x->orphans, cut to its spans. */
struct span_clip {
	const struct owned_span *v;
	size_t n, k;
	bool inside;	  /* the last address seen is in v[k] */
	const char *file; /* the row in effect (NULL: none) and its line */
	int line;
	struct line_rows *out;
	uint64_t bias; /* added to every address put out */
};

void span_clip_begin(struct span_clip *c, struct dw *w, const struct line_group *g);

/*
 * The next row of the group's program, in address order (file NULL: the
 * end of the row before): out where its address is in a span, and wherever
 * a span begins or ends while it is in effect. 0 or -ENOMEM.
 */
int span_clip_row(struct span_clip *c, uint64_t addr, const char *file, int line);

/* After the last row: a row still in effect ends with its span. 0 or -ENOMEM. */
int span_clip_end(struct span_clip *c);

#endif
