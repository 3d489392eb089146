/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DWARF_CREW_H
#define LIDIA_DWARF_CREW_H

#include <stddef.h>

#include <elfutils/libdw.h>

#include "dwarf_walk.h"

#define CREW_MAX 64

/*
 * The threads one DWARF extraction reads its units on, each through a Dwarf
 * of its own over the same images: libdw keeps what it has read (units,
 * abbreviations, line tables) in the Dwarf that read it, unlocked, so two
 * threads never read through one. Thread 0 is the calling one, which reads
 * through the Dwarf that listed the units (w->dw).
 */
struct crew {
	Dwarf *dw[CREW_MAX];  /* [0]: NULL, w->dw */
	Dwarf *alt[CREW_MAX]; /* each one's dwz file, when there is one */
	size_t n;	      /* threads: 1 when the calling one works alone */
};

/*
 * Up to w->x->threads threads for w's listed units: one when there is a
 * split unit (read from .dwo files through w->dw alone), too few units to
 * share, or no Dwarf of a thread's own reads them. alt: w->dw's dwz file.
 */
void crew_open(struct crew *c, const struct dw *w, Dwarf *alt);

void crew_close(struct crew *c);

/* Chunks to cut n units' work into for c's threads: enough that they finish together. */
size_t crew_chunks(const struct crew *c, size_t n);

#endif
