/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_UNIT_CHUNKS_H
#define LIDIA_UNIT_CHUNKS_H

#include <elfutils/libdw.h>

#include "dwarf_crew.h"
#include "dwarf_walk.h"

/*
 * The second pass over all of w's units (unit_walk.c), on crew's threads,
 * the calling one among them: the same ranges, orphan rows, covered
 * intervals and counts reach w->x, in the same order, as
 * walk_units(w, 0, w->nunits) gives them on one thread.
 */
int walk_all_units(struct dw *w, struct crew *crew);

#endif
