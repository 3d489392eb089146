/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DWARF_WALK_H
#define LIDIA_DWARF_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>

#include "die_reader.h"
#include "dwarf_sections.h"
#include "extract.h"
#include "frames.h"
#include "code_owners.h"
#include "line_table.h"
#include "name_blocks.h"
#include "name_chain.h"
#include "origin_names.h"
#include "unit_scan.h"

/*
 * The state of one DWARF extraction: what dwarf.c's two passes over the
 * units build, and what line_groups.c shares the line programs of. One
 * header for both, so that neither includes the other.
 */

struct name_slot;
struct path_slot;
struct node_iv;

/* An address range that can be code: see dwarf.c's use. */
static inline bool code_range(uint64_t lo, uint64_t hi)
{
	/*
	 * 0 and -1 are what linkers leave for code they discarded; line offsets
	 * are 32-bit, and no real function is 4 GiB long.
	 */
	return hi > lo && lo != 0 && lo != (uint64_t)-1 && hi != (uint64_t)-1 &&
	       hi - lo <= UINT32_MAX;
}

/*
 * The next of die's address ranges that can be code, from *off (0 at first;
 * *base is dwarf_ranges()'s, kept between the calls); false: no more.
 */
static inline bool next_code_range(struct die_reader *r, struct die_attrs *die, ptrdiff_t *off,
				   Dwarf_Addr *base, Dwarf_Addr *lo, Dwarf_Addr *hi)
{
	while ((*off = die_ranges(r, die, *off, base, lo, hi)) > 0)
		if (code_range(*lo, *hi))
			return true;
	return false;
}

/* A unit listed for the first pass. */
struct unit {
	Dwarf_Die die;		     /* as listed (dwarf.c's Dwarf); zeroed when read in runs */
	Dwarf_Off die_off, unit_off; /* its DIE's offset and its header's, in any Dwarf */
	Dwarf_Die split_die;	     /* when split: its split unit's, in a .dwo's Dwarf */
	const char *comp_dir;	     /* DW_AT_comp_dir (libdw's string); NULL: none */
	uint64_t line_offset;	     /* DW_AT_stmt_list, when has_lines */
	size_t subs_first, subs_end; /* its subprogram ranges: w->subs[subs_first, subs_end) */
	uint32_t group;		     /* its line program's units: w->groups[group], or NO_GROUP */
	uint8_t address_size;
	bool partial;	/* a DW_TAG_partial_unit (dwz) */
	bool split;	/* a skeleton whose split unit was found */
	bool has_lines; /* it names a line program */
	bool has_code;	/* one of its subprogram ranges was kept */
	bool no_ranges; /* read without libdw: no DIE of it, its own neither, has an address */
};

#define NO_GROUP UINT32_MAX

/* A decoded line program: ours (its files by DWARF index too), or libdw's rows. */
struct lines {
	struct line_table lt;
	bool ours;
};

/*
 * The units that name one line program (by its offset in .debug_line). Its
 * owner decodes it (the first of them with code, else the first), and it is
 * kept until the last unit with code reading it is done; its orphan rows are
 * taken once, by the owner, outside the code of all of them.
 */
struct line_group {
	uint32_t owner;
	uint32_t users;	     /* units with code still to read lines (the owner's comp_dir) */
	size_t first, end;   /* its units: w->members[first, end), in unit order */
	struct lines *lines; /* decoded: from the owner to the last user */
	/* Where its orphan rows may be: w->orphan_spans[spans_first, spans_end). */
	size_t spans_first, spans_end;
};

/* A unit by its line program: what groups are made of. */
struct member {
	uint64_t line_offset;
	uint32_t unit;
	uint8_t address_size;
};

/* A subprogram range found in the first pass. */
struct subprog {
	uint64_t lo, hi;
	Dwarf_Off off; /* its DIE's, in its unit's Dwarf (split_die's when split) */
	uint32_t unit; /* index of its unit, in unit order */
	bool kept;
};

/*
 * What the first pass found is shared (read-only in the second, but for a
 * line group's lines and users: a group's units are all walked by one
 * walker, see unit_chunks.c); from `x` on, each walker of the second pass
 * has its own: a worker's struct dw is a copy of the main one with those
 * fields zeroed (walker_fields()).
 */
struct dw {
	bool skip_go;		   /* leave Go units to the pclntab, which described them */
	bool split_units;	   /* some code is described in split units (.dwo files) */
	size_t splits_missing;	   /* skeletons whose split unit was not found (or looked for) */
	const char *first_missing; /* the .dwo the first of them names (NULL: none named) */
	size_t overlapping;	   /* subprogram ranges dropped: another function had the address */
	size_t threads_used, chunks; /* the second pass's, for the messages (unit_chunks.c) */
	struct unit *units;	     /* the units read, in unit order */
	size_t nunits, cap_units;
	uint64_t *stmt_lists; /* every unit's DW_AT_stmt_list, those not read too */
	size_t nstmt_lists, cap_stmt_lists;
	struct subprog *subs;
	size_t nsubs, cap_subs;
	struct line_group *groups;
	size_t ngroups;
	struct member *members;
	/* The addresses whose lines are a group's program's (code_owners.h), by group. */
	struct owned_span *orphan_spans;
	/* The sections our own readers read (line_table.c, unit_scan.c). */
	struct dwarf_sections secs;
	Dwarf *dw; /* what listed the units */

	/* ---- The walker's own: where its frames, orphans and counts go. */
	struct extract_ctx *x;
	Dwarf *own_dw;			/* NULL: the first pass's DIEs are read as they are */
	struct abbrev_cache abbrevs;	/* for reader, the current unit's DIEs */
	struct name_reader name_reader; /* for die_name(): the units origins lie in */
	struct die_reader reader;
	size_t bad_file_index; /* call files that name no file */
	/* Decoded line programs not in use, for the next ones (their buffers kept). */
	struct lines **spare;
	size_t nspare, cap_spare;
	/* The current unit's line program, and its rows in address order. */
	const struct lines *cur;
	const struct line_row *rows;
	size_t nrows;
	struct frame_node *nodes;
	size_t nnodes, cap_nodes;
	struct node_iv *ivs;
	size_t nivs, cap_ivs;
	struct node_iv *stack; /* emit_range's open intervals, clipped to nest */
	size_t cap_stack;
	/* Demangled names given to the frames, kept until the builder has them. */
	struct name_block *names;
	/*
	 * Linkage names demangled so far, by the address of the mangled string
	 * (libdw's, stable): an inlined function is named once per inline frame,
	 * and demangling is a fifth of the time in C++.
	 */
	struct name_slot *demangled;
	size_t ndemangled, cap_demangled;
	struct name_block *demangled_names;
	size_t names_kept_short;     /* names kept only for a subprogram: no memory to keep them */
	struct origin_names origins; /* the unit's inlined functions' names, by origin */
	/*
	 * Those whose origin is in another unit (dwz's partial units, its
	 * file): every unit that imports it asks again, so these are kept for
	 * the walk; there are as many as the shared DIEs hold.
	 */
	struct origin_names shared_origins;
	bool targets_differ; /* die_ref_target() once found another DIE than libdw */
	/* The current unit's file names joined to its comp_dir, by libdw's name. */
	const char *comp_dir;
	const char *comp_dir_slash; /* comp_dir ending in one '/', made when first needed */
	size_t comp_len;
	struct path_slot *paths;
	size_t npaths, cap_paths;
	struct name_block *path_names;
	struct frames fr;
};

/* A worker's copy starts its own fields zeroed from here on. */
#define walker_fields(w) ((char *)&(w)->x)
#define walker_fields_size (sizeof(struct dw) - offsetof(struct dw, x))

/* The first pass over a run of units (subprog_scan.c), on one thread. */
struct scanner {
	struct dw *w;
	Dwarf *own_dw; /* NULL: the units are read through w->dw */
	struct abbrev_cache abbrevs;
	struct subprog *subs; /* found, in unit order; units' subs_first/end index it */
	size_t nsubs, cap_subs;
};

/* Units [first, end): their facts, and their subprogram ranges added to s->subs. */
int scan_units(struct scanner *s, uint32_t first, uint32_t end);

void scanner_release(struct scanner *s);

/*
 * The second pass over units [first, end) (unit_walk.c): each kept
 * subprogram's ranges, inline frames and lines, into w->fr's builder, the
 * orphan rows into w->x->orphans. The units a line program's group shares
 * it with are in the same run.
 */
int walk_units(struct dw *w, uint32_t first, uint32_t end);

/* Whether the second pass reads unit u at all (it has code, or takes its program's orphans). */
bool walks_unit(const struct dw *w, uint32_t u);

/* Line rows sorted by address, the same order on any number of threads. */
void sort_rows(struct line_rows *rows, unsigned threads);

/* Free what walk_units() kept in w's own fields (not its line buffers: line_groups.c's). */
void walk_release(struct dw *w);

#endif
