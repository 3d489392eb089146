/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_NAME_CHAIN_H
#define LIDIA_NAME_CHAIN_H

#include <stdbool.h>

#include <elfutils/libdw.h>

#include "abbrevs.h"
#include "die_reader.h"
#include "dwarf_sections.h"

/*
 * A subprogram's names, found along its chain of abstract origins and
 * specifications as dwarf_attr_integrate() finds each attribute, but read
 * by our reader: libdw reads the abbreviations of every unit it looks into
 * again, and in a dwz'd file the origins of inlined code lie in hundreds of
 * partial units (ld.gold: 13,000 origins, a twentieth of its time).
 */
struct chain_names {
	const char *linkage; /* DW_AT_linkage_name's, else DW_AT_MIPS_linkage_name's; NULL: none */
	const char *name;    /* DW_AT_name's, when linkage is NULL or empty */
};

/* Where names are read: the tables of the units looked into, and the last unit's reader. */
struct name_reader {
	struct abbrev_cache abbrevs;
	struct die_reader last; /* holds a table of abbrevs: good until another unit is begun */
	bool have_last;
};

void name_reader_release(struct name_reader *n);

/*
 * The names of die, a DIE in s->info: false when a DIE of the chain lies
 * elsewhere (the dwz file) or ours cannot read it as libdw would; the
 * caller then asks libdw. current: the reader of the unit being walked,
 * which reads a DIE of its own unit (NULL: none); n: what reads the
 * others, kept for the next call (not the walker's own cache: its reader
 * holds a table of it).
 */
bool chain_names_read(struct name_reader *n, const struct dwarf_sections *s,
		      struct die_reader *current, Dwarf_Die *die, struct chain_names *names);

#endif
