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
 * Runs: when no unit is split, every run of units (a chunk of either pass)
 * is read through a Dwarf begun for it and ended after it (crew_run_begin,
 * crew_run_end), so that what libdw keeps of a unit lasts as long as its
 * run: on a big file, its records of every unit were a fifth of the peak.
 * Otherwise each thread reads through a Dwarf of its own for the whole
 * extraction (dw[]), thread 0 (the calling one) through the one that
 * listed the units (w->dw): a split unit's .dwo is opened by that Dwarf.
 */
struct crew {
	Dwarf *dw[CREW_MAX]; /* without runs: [0] NULL (w->dw), then each thread's */
	Dwarf *alt
		[CREW_MAX]; /* each thread's dwz file ([0]: the extraction's), when there is one */
	size_t n;	    /* threads: 1 when the calling one works alone */
	bool runs;	    /* each run read through a Dwarf of its own */
	Elf *elf;	    /* what runs' Dwarfs read */
	pthread_mutex_t lock; /* libelf is entered by one thread at a time */
};

/*
 * Up to w->x->threads threads for w's listed units: one when there is a
 * split unit (read from .dwo files through w->dw alone), too few units to
 * share, or no Dwarf of a thread's own reads them. alt: w->dw's dwz file.
 * runs: read each run through a Dwarf of its own (dwarf.c decides).
 */
void crew_open(struct crew *c, const struct dw *w, Dwarf *alt, bool runs);
void crew_close(struct crew *c);

/* Chunks to cut n units' work into for c's threads: enough that they finish together. */
size_t crew_chunks(const struct crew *c, size_t n);

/*
 * A Dwarf for one run of units on the thread of this run_items() slot (the
 * calling thread's: 0 and RUN_ITEMS_MAX); NULL when there is no memory.
 * Ended by crew_run_end() when the run is done.
 */
Dwarf *crew_run_begin(struct crew *c, unsigned slot);
void crew_run_end(struct crew *c, Dwarf *dw);

#endif
