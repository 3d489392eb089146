/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_SCAN_CHUNKS_H
#define LIDIA_SCAN_CHUNKS_H

#include "dwarf_crew.h"
#include "dwarf_walk.h"

/*
 * The first pass over all of w's listed units (subprog_scan.c), on crew's
 * threads, the calling one among them: w->subs and the units' facts as one
 * thread scanning them in order makes them.
 */
int scan_all_units(struct dw *w, const struct crew *crew);

#endif
