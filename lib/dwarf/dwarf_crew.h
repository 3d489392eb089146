/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DWARF_CREW_H
#define LIDIA_DWARF_CREW_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <elfutils/libdw.h>

#include "dwarf_walk.h"

#define CREW_MAX 64

/*
 * The threads one DWARF extraction reads its units on, and the Dwarfs they
 * read through: libdw keeps what it has read (units, abbreviations, line
 * tables) in the Dwarf that read it, unlocked, and until that Dwarf ends.
 *
 * The first pass reads through a Dwarf of each thread's own (dw[]), thread
 * 0 (the calling one) through the one that listed the units (w->dw). Then,
 * in runs (crew_start_runs), the second pass reads each few chunks through
 * a Dwarf begun for them and ended after them: what libdw keeps of a unit
 * lasts as long as its run, not to the end of the extraction (on libc, its
 * records of every unit were a fifth of the peak, beside the builder).
 */
struct crew {
	Dwarf *dw[CREW_MAX];  /* [0]: NULL (w->dw), then each thread's; none in runs */
	Dwarf *alt[CREW_MAX]; /* each thread's dwz file, when there is one ([0]: w->dw's) */
	size_t n;	      /* threads: 1 when the calling one works alone */
	bool runs;	      /* the second pass reads in runs */
	Elf *elf;	      /* what the runs' Dwarfs read */
	pthread_mutex_t lock; /* libelf is entered by one thread at a time */
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

/*
 * From now on in runs, over elf (alt: the extraction's dwz file): each
 * thread's Dwarf of the first pass is ended (its dwz file is kept).
 */
void crew_start_runs(struct crew *c, Elf *elf, Dwarf *alt);

/*
 * A Dwarf for a run of units on thread slot (0: the calling one), with
 * that thread's dwz file; NULL when there is no memory. Ended by
 * crew_run_end() when the run is done.
 */
Dwarf *crew_run_begin(struct crew *c, unsigned slot);
void crew_run_end(struct crew *c, Dwarf *dw);

#endif
