/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_LINE_GROUPS_H
#define LIDIA_LINE_GROUPS_H

#include <stdint.h>

#include "dwarf_walk.h"

/*
 * The units that name one line program, and the program decoded once for
 * all of them (line_groups.c). dwarf.c decodes; these decide who does, keep
 * the rows for the others, and take the orphan rows.
 */

/*
 * After the overlaps are resolved: which units have code, and the units of
 * each line program (the same offset, read with the same address size).
 */
int plan_groups(struct dw *w);

/*
 * Unit u's line program, in w->cur: its group's, or its own, in *own, when
 * u joins the files with another comp_dir than the owner (or names no
 * program). *decode: what u is to decode now (its group's when u owns it, or
 * *own), NULL when nothing. -ENOMEM, with w->cur empty: no buffers.
 */
int take_lines(struct dw *w, uint32_t u, struct lines **own, struct lines **decode);

/*
 * Keep the rows of g's program (w->rows) that no kept subprogram range of
 * its units covers, where the program describes the code (orphan_spans.h):
 * once per program, however many units name it.
 */
int keep_orphans(struct dw *w, const struct line_group *g);

/* Done with l (may be NULL): a spare for the next program. */
void lines_put(struct dw *w, struct lines *l);

/* Done with unit u's lines: its group's go with their last user. */
void close_lines(struct dw *w, uint32_t u, struct lines *own);

/*
 * The groups of units [first, end) as before the second pass walked them
 * (their lines freed): for a run walked again (unit_chunks.c). Every unit of
 * each of those groups that the second pass reads is in the run.
 */
void groups_rewind(struct dw *w, uint32_t first, uint32_t end);

/* The spare line buffers of a walker (a worker's: the groups are the main one's). */
void lines_release_spares(struct dw *w);

/* The groups, their lines and the spares. */
void line_groups_release(struct dw *w);

#endif
