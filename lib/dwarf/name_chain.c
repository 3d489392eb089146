/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: DWARF, a subprogram's names along its origins, by our reader (name_chain.h). */
#include <string.h>

#include "die_reader.h"
#include "name_chain.h"

/* DIEs past the first that dwarf_attr_integrate() follows before it gives up. */
#define CHAIN_MAX 16

/*
 * The abbreviations kept for the units looked into: origins lie in many
 * units, which share few tables (ld.gold's 840 units: 57 tables, 12,956
 * abbreviations); forgetting them at the walker's 4,096 read each again.
 */
#define NAME_ABBREVS_KEPT 16384

/* The names of die (in s->info) into *found, each the first along the chain. */
static bool read_one(struct name_reader *n, const struct dwarf_sections *s,
		     struct die_reader *current, Dwarf_Die *die, struct die_names *found,
		     struct die_names *here)
{
	const unsigned char *at = die->addr;

	if (!s->info || at < s->info || at >= s->info + s->info_size)
		return false;
	/* Origins come in runs from one unit: the last one's reader, when it is theirs. */
	if ((!current || !die_names_read(current, die, here)) &&
	    (!n->have_last || !die_names_read(&n->last, die, here))) {
		die_reader_unit(&n->last, &n->abbrevs, s, die,
				dwarf_dieoffset(die) - dwarf_cuoffset(die), true);
		n->have_last = true;
		if (!die_names_read(&n->last, die, here))
			return false;
	}
	if (!found->linkage.form)
		found->linkage = here->linkage;
	if (!found->mips_linkage.form)
		found->mips_linkage = here->mips_linkage;
	if (!found->name.form)
		found->name = here->name;
	return true;
}

void name_reader_release(struct name_reader *n)
{
	abbrev_cache_release(&n->abbrevs);
	memset(n, 0, sizeof(*n));
}

bool chain_names_read(struct name_reader *n, const struct dwarf_sections *s,
		      struct die_reader *current, Dwarf_Die *die, struct chain_names *names)
{
	struct die_names found, here;
	Dwarf_Die mem[2];
	Dwarf_Attribute *link;

	if (!n->abbrevs.kept)
		n->abbrevs.kept = NAME_ABBREVS_KEPT;
	memset(&found, 0, sizeof(found));
	for (int hop = 0; die && hop <= CHAIN_MAX; hop++) {
		if (!read_one(n, s, current, die, &found, &here))
			return false;
		if (found.linkage.form)
			break; /* nothing further along comes before it */
		/* dwarf_attr_integrate(): the abstract origin, else the specification. */
		link = here.origin.form		 ? &here.origin
		       : here.specification.form ? &here.specification
						 : NULL;
		die = link ? dwarf_formref_die(link, &mem[hop & 1]) : NULL;
	}
	names->linkage = found.linkage.form	   ? dwarf_formstring(&found.linkage)
			 : found.mips_linkage.form ? dwarf_formstring(&found.mips_linkage)
						   : NULL;
	names->name = NULL;
	if (names->linkage && *names->linkage)
		return true;
	/* Stopped at a linkage name it cannot use: a name may lie further on. Libdw's. */
	if (found.linkage.form)
		return false;
	if (found.name.form)
		names->name = dwarf_formstring(&found.name);
	return true;
}
