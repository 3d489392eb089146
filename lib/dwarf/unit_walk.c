/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: DWARF, the second pass over a run of units (see dwarf.c): each
 * kept subprogram's inline tree swept against its unit's line rows into
 * frames, with the names and paths that go with them.
 *
 * One walker (a struct dw) walks one run at a time, on one thread: the main
 * walker reads the DIEs the first pass found as they are; a worker of
 * unit_chunks.c reads them again through a Dwarf of its own (w->own_dw),
 * since libdw's readers keep caches in the Dwarf that read them.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "dwarf_walk.h"
#include "frames.h"
#include "internal.h"
#include "line_groups.h"
#include "line_table.h"
#include "name_chain.h"
#include "name_blocks.h"
#include "node_ivs.h"
#include "radix_sort.h"
#include "sort_halves.h"

/* A mangled name (libdw's pointer) and its demangled copy. */
struct name_slot {
	const char *mangled;
	const char *name;
};

/* libdw's name of a file (a stable pointer), and ours. */
struct path_slot {
	const char *key;
	const char *path;
};

/* At most this many (subprogram range, inline interval) pairs per DIE (see do_subprog). */
#define MAX_SWEEP (1u << 26)

/* ---- Names ---------------------------------------------------------------------- */

/* Keep a copy of a name until the builder has interned it. */
static const char *keep_name(struct dw *w, const char *s)
{
	const char *p = name_blocks_str(&w->names, s, NULL);

	return p ? p : "??";
}

/*
 * A file's name as llvm-symbolizer prints it: libdw joins the file to its
 * include directory, and to the compilation directory only when that is
 * absolute; a relative one (glibc's "./stdlib") is joined too. A path joined
 * here is made in *into, which must outlive the current unit's use of it.
 */
static const char *unit_path(struct dw *w, const char *name, struct name_block **into)
{
	size_t mask, i;

	if (!name || name[0] == '/' || !w->comp_dir || !w->comp_dir[0])
		return name;
	/* DWARF 5's directory 0 is the compilation directory: already joined. */
	w->comp_len = w->comp_len ? w->comp_len : strlen(w->comp_dir);
	if (!strncmp(name, w->comp_dir, w->comp_len) && name[w->comp_len] == '/')
		return name;
	if (w->npaths * 2 >= w->cap_paths) { /* grow and rehash */
		size_t cap = w->cap_paths ? w->cap_paths * 2 : 64;
		struct path_slot *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return name;
		for (size_t k = 0; k < w->cap_paths; k++) {
			if (!w->paths[k].key)
				continue;
			for (i = ((uintptr_t)w->paths[k].key >> 4) & (cap - 1); slots[i].key;
			     i = (i + 1) & (cap - 1))
				;
			slots[i] = w->paths[k];
		}
		free(w->paths);
		w->paths = slots;
		w->cap_paths = cap;
	}
	mask = w->cap_paths - 1;
	for (i = ((uintptr_t)name >> 4) & mask; w->paths[i].key; i = (i + 1) & mask)
		if (w->paths[i].key == name)
			return w->paths[i].path;
	if (!w->comp_dir_slash) {
		const char *sep = w->comp_dir[w->comp_len - 1] == '/' ? "" : "/";

		if (!(w->comp_dir_slash = name_blocks_str(&w->path_names, w->comp_dir, sep)))
			return name;
	}
	{
		const char *joined = name_blocks_str(into, w->comp_dir_slash, name);

		if (!joined)
			return name;
		w->paths[i] = (struct path_slot){ name, joined };
		w->npaths++;
		return joined;
	}
}

/* A new unit: its compilation directory, and no joined paths yet. */
static void set_unit(struct dw *w, const struct unit *un)
{
	w->comp_dir = un->comp_dir;
	w->comp_dir_slash = NULL;
	w->comp_len = 0;
	if (w->paths)
		memset(w->paths, 0, w->cap_paths * sizeof(*w->paths));
	w->npaths = 0;
	name_blocks_reset(&w->path_names, false);
	origin_names_next_unit(&w->origins);
}

static size_t name_hash(const char *p, size_t cap)
{
	return (size_t)(((uintptr_t)p >> 3) * 0x9e3779b97f4a7c15ull >> 17) & (cap - 1);
}

/* s demangled, from the cache or into it. */
static const char *demangled_name(struct dw *w, const char *s)
{
	const char *d;
	size_t i;

	if (w->ndemangled * 2 >= w->cap_demangled) {
		size_t cap = w->cap_demangled ? w->cap_demangled * 2 : 4096;
		struct name_slot *slots = calloc(cap, sizeof(*slots));

		if (!slots) {
			d = demangle(&w->x->dm, s);
			w->names_kept_short += d != s;
			return d == s ? s : keep_name(w, d);
		}
		for (size_t k = 0; k < w->cap_demangled; k++) {
			if (!w->demangled[k].mangled)
				continue;
			for (i = name_hash(w->demangled[k].mangled, cap); slots[i].mangled;
			     i = (i + 1) & (cap - 1))
				;
			slots[i] = w->demangled[k];
		}
		free(w->demangled);
		w->demangled = slots;
		w->cap_demangled = cap;
	}
	for (i = name_hash(s, w->cap_demangled); w->demangled[i].mangled;
	     i = (i + 1) & (w->cap_demangled - 1))
		if (w->demangled[i].mangled == s)
			return w->demangled[i].name;
	d = demangle(&w->x->dm, s);
	if (d != s && !(d = name_blocks_str(&w->demangled_names, d, NULL))) {
		w->names_kept_short++;
		return keep_name(w, demangle(&w->x->dm, s));
	}
	w->demangled[i] = (struct name_slot){ s, d };
	w->ndemangled++;
	return d;
}

/*
 * A subprogram's name as llvm-symbolizer prints it: the demangled linkage
 * name, else DW_AT_name, both followed through abstract origins and
 * specifications.
 */
static const char *die_name(struct dw *w, Dwarf_Die *die)
{
	struct chain_names names;
	Dwarf_Attribute attr;
	const char *s = NULL;

	if (chain_names_read(&w->name_reader, &w->secs, &w->reader, die, &names)) {
		if (names.linkage && *names.linkage)
			return demangled_name(w, names.linkage);
		return names.name && *names.name ? names.name : NULL;
	}
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		s = dwarf_formstring(&attr);
	if (s && *s)
		return demangled_name(w, s);
	if (dwarf_attr_integrate(die, DW_AT_name, &attr))
		s = dwarf_formstring(&attr);
	return s && *s ? s : NULL;
}

/*
 * An inlined subroutine's name: its abstract origin's (when it has no name
 * of its own), found once per origin in a unit, or once in the walk for an
 * origin in another unit, as die_name() would. An origin already named is
 * known by where its reference points (die_ref_target()), without libdw
 * looking for its unit: what ld.gold's 240,000 references into other
 * units cost most.
 */
static const char *inline_name(struct dw *w, struct die_attrs *die)
{
	size_t kept_short = w->names_kept_short;
	const struct die_reader *r = &w->reader;
	const unsigned char *target = NULL;
	struct origin_names *found_in;
	Dwarf_Die origin;
	const char *name;

	if (die->named || !die->origin.form)
		return die_name(w, &die->die);
	if (!w->targets_differ && (target = die_ref_target(r, &die->origin))) {
		found_in = target >= r->unit_start && target < r->unit_end ? &w->origins
									   : &w->shared_origins;
		if ((name = origin_names_find(found_in, target)))
			return name;
	}
	if (!dwarf_formref_die(&die->origin, &origin))
		return die_name(w, &die->die);
	found_in = origin.cu == die->die.cu ? &w->origins : &w->shared_origins;
	/* Not looked for yet: no target, or (never seen) ours and libdw's part: libdw's alone then. */
	if ((const void *)target != origin.addr) {
		w->targets_differ |= target != NULL;
		if ((name = origin_names_find(found_in, origin.addr)))
			return name;
	}
	name = die_name(w, &origin);
	if (name && w->names_kept_short == kept_short)
		origin_names_add(found_in, origin.addr, name);
	return name;
}

/* ---- Second pass: one subprogram ---------------------------------------------- */

static int add_node_ivs(struct dw *w, struct die_attrs *die, int32_t node, int32_t depth)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int err;

	while (next_code_range(&w->reader, die, &off, &base, &lo, &hi)) {
		if ((err = LIDIA_GROW(w->ivs, w->nivs + 1, w->cap_ivs)))
			return err;
		w->ivs[w->nivs++] = (struct node_iv){ lo, hi, node, depth };
	}
	return 0;
}

/*
 * The inlined subroutines under die, as nodes whose parent is parent. level
 * counts every DIE nested (lexical blocks too), so that corrupt DWARF nesting
 * blocks without end cannot run the stack out.
 */
static int collect_inlines(struct dw *w, struct die_attrs *die, Dwarf_Files *files, int32_t parent,
			   int32_t depth, int level)
{
	struct die_attrs child;
	int err = 0;

	if (depth > FRAMES_MAX_DEPTH || level > 2 * FRAMES_MAX_DEPTH ||
	    die_child(&w->reader, die, &child) != 0)
		return 0;
	do {
		unsigned tag = child.tag;

		if (tag == DW_TAG_inlined_subroutine) {
			struct frame_node *n;
			Dwarf_Word v;
			int32_t idx = (int32_t)w->nnodes;

			if ((err = LIDIA_GROW(w->nodes, w->nnodes + 1, w->cap_nodes)))
				return err;
			n = &w->nodes[w->nnodes++];
			n->name = inline_name(w, &child);
			if (!n->name)
				n->name = "??";
			n->parent = parent;
			n->depth = depth;
			n->call_file = NULL;
			n->call_line = 0;
			if (child.call_line.form && !dwarf_formudata(&child.call_line, &v))
				n->call_line = v > UINT32_MAX ? 0 : (uint32_t)v;
			if ((files || w->cur->ours) && child.call_file.form &&
			    !dwarf_formudata(&child.call_file, &v)) {
				const struct line_table *lt = &w->cur->lt;
				const char *f;

				if (w->cur->ours)
					f = v < lt->nfiles ? lt->files[v] : NULL;
				else if ((f = dwarf_filesrc(files, v, NULL, NULL)) &&
					 strcmp(f, "???"))
					f = unit_path(w, f, &w->path_names);
				else
					f = NULL;
				if (f)
					n->call_file = f;
				else
					w->bad_file_index++;
			}
			if ((err = add_node_ivs(w, &child, idx, depth)) ||
			    (err = collect_inlines(w, &child, files, idx, depth + 1, level + 1)))
				return err;
		} else if (tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
			   tag == DW_TAG_catch_block) {
			if ((err = collect_inlines(w, &child, files, parent, depth, level + 1)))
				return err;
		}
	} while (die_sibling(&w->reader, &child) == 0);
	die_children_read(&w->reader, die);
	return 0;
}

/* Index of the last row at or before addr, or -1. */
static ptrdiff_t row_at(const struct dw *w, uint64_t addr)
{
	return (ptrdiff_t)line_rows_after(w->rows, w->nrows, addr) - 1;
}

/*
 * Emit [lo, hi) of the current subprogram: sweep the inline intervals (a
 * stack of those open, innermost on top) and the line rows together.
 *
 * Each interval on the stack is clipped to the one below it, so that the
 * ends never grow towards the top: then popping the ended ones off the top
 * leaves only intervals that go on past pc, and every step advances pc.
 * Well-formed DWARF nests anyway; corrupt ranges that stop nesting lose what
 * sticks out of their parent (as they would in any symbolizer's tree).
 */
static int emit_range(struct dw *w, const char *func, uint64_t lo, uint64_t hi)
{
	ptrdiff_t r = row_at(w, lo);
	size_t k = 0, depth = 0;
	uint64_t pc = lo;
	int err;

	if ((err = LIDIA_GROW(w->stack, w->nivs + 1, w->cap_stack)))
		return err;
	if ((err = frames_begin(&w->fr, func, w->nodes, w->nnodes, lo)))
		return err;
	while (k < w->nivs && w->ivs[k].hi <= lo)
		k++;
	while (pc < hi) {
		uint64_t next = hi;
		const struct line_row *row = r >= 0 ? &w->rows[r] : NULL;

		/* Leave the intervals that ended, enter those that start here. */
		while (depth && w->stack[depth - 1].hi <= pc)
			depth--;
		for (; k < w->nivs && w->ivs[k].lo <= pc; k++) {
			struct node_iv iv = w->ivs[k];

			if (depth && iv.hi > w->stack[depth - 1].hi)
				iv.hi = w->stack[depth - 1].hi;
			if (iv.hi > pc)
				w->stack[depth++] = iv;
		}
		if (k < w->nivs && w->ivs[k].lo < next)
			next = w->ivs[k].lo;
		if (depth && w->stack[depth - 1].hi < next)
			next = w->stack[depth - 1].hi; /* the innermost ends first */
		if ((size_t)(r + 1) < w->nrows && w->rows[r + 1].addr < next)
			next = w->rows[r + 1].addr;
		if (next <= pc)
			next = hi; /* cannot happen (see above); never loop */

		err = frames_segment(&w->fr, pc, depth ? w->stack[depth - 1].node : -1,
				     row && w->x->files ? row->file : NULL,
				     row && row->file ? row->line : 0);
		if (err)
			return err;
		pc = next;
		while ((size_t)(r + 1) < w->nrows && w->rows[r + 1].addr <= pc)
			r++;
	}
	return frames_end(&w->fr, hi);
}

/*
 * The inline tree under the subprogram die into w->nodes and w->ivs, read by
 * our reader; by libdw's calls when ours cannot read the unit (from this
 * subprogram on).
 */
static int inlines_of(struct dw *w, Dwarf_Die *die, Dwarf_Files *files)
{
	size_t bad_files = w->bad_file_index;
	struct die_attrs top;
	int err = 0;

	if (die_read(&w->reader, die, &top))
		err = collect_inlines(w, &top, files, -1, 1, 0);
	if (!w->reader.failed)
		return err;
	w->nnodes = w->nivs = 0;
	w->bad_file_index = bad_files;
	die_reader_by_libdw(&w->reader);
	die_read(&w->reader, die, &top);
	return collect_inlines(w, &top, files, -1, 1, 0);
}

/* Unit un's DIE, as this walker's Dwarf reads it. */
static bool unit_die(const struct dw *w, const struct unit *un, Dwarf_Die *out)
{
	if (!w->own_dw) {
		*out = un->die;
		return true;
	}
	return dwarf_offdie(w->own_dw, un->die_off, out) != NULL;
}

/* Subprogram s's DIE, as this walker's Dwarf reads it (a split unit's: its .dwo's). */
static bool subprog_die(const struct dw *w, const struct subprog *s, Dwarf_Die *out)
{
	const struct unit *un = &w->units[s->unit];
	Dwarf *dw = un->split ? dwarf_cu_getdwarf(un->split_die.cu) : w->own_dw ? w->own_dw : w->dw;

	return dwarf_offdie(dw, s->off, out) != NULL;
}

/*
 * The name of range s's outermost frame: as llvm-symbolizer, the symbol
 * table's, else the DWARF's, *dwarf_name, found at the first range that
 * needs it (*looked): C++ functions have symbols, and demangling their
 * DWARF names as well was a twentieth of a C++ file's time.
 */
static const char *outer_name(struct dw *w, const struct subprog *s, Dwarf_Die *die,
			      const char **dwarf_name, bool *looked)
{
	struct extract_ctx *x = w->x;
	const struct sym *sym = symbols_find(&x->syms, s->lo + x->bias);
	const char *name;

	if (sym) {
		name = demangle(&x->dm, sym->name);
		if (name == x->dm.buf) /* the next name demangled goes there too */
			name = keep_name(w, name);
	} else {
		if (!*looked)
			*dwarf_name = die_name(w, die);
		*looked = true;
		name = *dwarf_name;
	}
	return name ? name : "??";
}

static int do_subprog(struct dw *w, struct subprog *first, size_t count, Dwarf_Files *files)
{
	struct extract_ctx *x = w->x;
	const char *dwarf_name = NULL;
	bool looked = false;
	Dwarf_Die die;
	int err = 0;

	if (!subprog_die(w, first, &die))
		return LIDIA_E_ELF; /* read once already: cannot happen */

	w->nnodes = w->nivs = 0;
	name_blocks_reset(&w->names, false);
	if (x->inlines && (err = inlines_of(w, &die, files)))
		return err;
	/*
	 * Each range sweeps the intervals from the first that reaches it: a
	 * corrupt DIE with very many of both would cost their product. Real
	 * subprograms have a few ranges; past that bound their inline frames go.
	 */
	if ((uint64_t)count * w->nivs > MAX_SWEEP)
		w->nivs = 0;
	/* emit_range()'s stack is free until then: the sort's room. */
	if ((err = LIDIA_GROW(w->stack, w->nivs + 1, w->cap_stack)))
		return err;
	node_ivs_sort(w->ivs, w->nivs, w->stack);
	for (size_t i = 0; i < count && !err; i++) {
		struct subprog *s = &first[i];

		if (!s->kept)
			continue;
		err = emit_range(w, outer_name(w, s, &die, &dwarf_name, &looked), s->lo, s->hi);
		x->st.functions++;
		x->st.dwarf_functions++;
		if (!err)
			err = intervals_add(&x->covered, s->lo + x->bias, s->hi + x->bias);
	}
	return err;
}

/* Line rows by address (a sort of them need not be stable: see drop_empty_rows). */
static int cmp_row(const void *pa, const void *pb)
{
	const struct line_row *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/*
 * libdw sorts a unit's rows by address with end-of-sequence rows first among
 * equals, which loses which sequence a row belongs to. A sequence's last row
 * often repeats at its end address: in DWARF it covers nothing (the end row
 * follows it), but after the sort it would seem to start what follows. Such
 * a row (an end row at its address, the same file and line as the row before
 * that address) is dropped, so the end row stays in effect, as
 * llvm-symbolizer has it.
 */
static size_t drop_empty_rows(struct line_row *rows, size_t nrows)
{
	size_t n = 0;

	for (size_t i = 0; i < nrows; i++) {
		const struct line_row *r = &rows[i];

		if (r->file && n && !rows[n - 1].file && rows[n - 1].addr == r->addr) {
			/* After an end row at this address: compare with the row before it. */
			size_t k = n - 1;

			while (k > 0 && rows[k - 1].addr == r->addr)
				k--;
			if (k > 0 && rows[k - 1].file == r->file && rows[k - 1].line == r->line)
				continue;
		}
		rows[n++] = *r;
	}
	return n;
}

/* ---- Line programs, decoded for line_groups.c ------------------------------------ */

/*
 * A unit's line rows as libdw decodes them, when lidiagen's decoder could
 * not: into lt, whose names hold the paths joined here, so that the rows
 * outlive the unit for the others that share the program.
 */
static int load_libdw_rows(struct dw *w, Dwarf_Die *cudie, struct line_table *lt)
{
	struct line_row *rows;
	Dwarf_Lines *lines;
	size_t n, nrows = 0;
	bool sorted = true;
	int err;

	if (dwarf_getsrclines(cudie, &lines, &n) != 0)
		return 0;
	if ((err = LIDIA_GROW(lt->rows, n + 1, lt->cap_rows)))
		return err;
	rows = lt->rows;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr;
		bool end = false;
		int line = 0;

		if (!l || dwarf_lineaddr(l, &addr))
			continue;
		dwarf_lineendsequence(l, &end);
		dwarf_lineno(l, &line);
		rows[nrows] = (struct line_row){
			.addr = addr,
			.file = end ? NULL : unit_path(w, dwarf_linesrc(l, NULL, NULL), &lt->names),
			.line = end ? 0 : line,
		};
		if (nrows && addr < rows[nrows - 1].addr)
			sorted = false;
		nrows++;
	}
	if (!sorted) /* libdw sorts; be sure, as the sweep depends on it */
		sort_array(rows, nrows, sizeof(*rows), cmp_row);
	lt->nrows = drop_empty_rows(rows, nrows);
	return 0;
}

/* Unit un's line program into l: ours, else libdw's; no rows when it has none. */
static int decode_lines(struct dw *w, struct unit *un, Dwarf_Die *cudie, struct lines *l)
{
	l->ours = w->secs.line && un->has_lines &&
		  !line_table_decode(&l->lt, &w->secs, un->line_offset, un->comp_dir,
				     un->address_size);
	if (l->ours)
		return 0;
	line_table_reset(&l->lt); /* what a failed decoding left */
	return load_libdw_rows(w, cudie, &l->lt);
}

/*
 * Unit u's line program, in w->cur and w->rows: its group's, decoded here
 * when u owns it (and its orphans taken); or its own, in *own, when u joins
 * the files with another comp_dir than the owner (or names no program).
 */
static int open_lines(struct dw *w, uint32_t u, Dwarf_Die *cudie, struct lines **own)
{
	struct unit *un = &w->units[u];
	struct lines *decode;
	int err = take_lines(w, u, own, &decode);

	if (err)
		return err;
	if (decode)
		err = decode_lines(w, un, cudie, decode);
	w->rows = w->cur->lt.rows;
	w->nrows = w->cur->lt.nrows;
	if (!err && un->group != NO_GROUP && w->groups[un->group].owner == u && w->x->lines)
		err = keep_orphans(w, &w->groups[un->group]);
	return err;
}

/* Whether any range of the subprogram DIE whose ranges are subs[0, count) was kept. */
static bool any_kept(const struct subprog *subs, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (subs[i].kept)
			return true;
	return false;
}

/* Unit u's subprograms: their ranges, inlines and lines. */
static int walk_unit(struct dw *w, uint32_t u)
{
	struct unit *un = &w->units[u];
	Dwarf_Files *files = NULL;
	struct lines *own;
	Dwarf_Die cudie;
	size_t nfiles;
	int err;

	if (!unit_die(w, un, &cudie))
		return LIDIA_E_ELF; /* read once already: cannot happen */
	set_unit(w, un);
	die_reader_unit(&w->reader, &w->abbrevs, &w->secs, &cudie, un->unit_off, !un->split);
	if ((err = open_lines(w, u, &cudie, &own))) {
		lines_put(w, own);
		return err;
	}
	if (!un->has_code || w->cur->ours || dwarf_getsrcfiles(&cudie, &files, &nfiles))
		files = NULL;
	for (size_t k = un->subs_first; k < un->subs_end && !err;) {
		/* The ranges of one subprogram DIE are consecutive. */
		size_t j = k + 1;

		while (j < un->subs_end && w->subs[j].off == w->subs[k].off)
			j++;
		if (any_kept(&w->subs[k], j - k))
			err = do_subprog(w, &w->subs[k], j - k, files);
		k = j;
	}
	close_lines(w, u, own);
	return err;
}

bool walks_unit(const struct dw *w, uint32_t u)
{
	const struct unit *un = &w->units[u];

	return un->has_code ||
	       (un->group != NO_GROUP && w->groups[un->group].owner == u && w->x->lines);
}

int walk_units(struct dw *w, uint32_t first, uint32_t end)
{
	int err = 0;

	for (uint32_t u = first; u < end && !err; u++) {
		if (walks_unit(w, u))
			err = walk_unit(w, u);
	}
	return err;
}

void sort_rows(struct line_rows *rows, unsigned threads)
{
	struct line_row *sorted = radix_sort_u64(rows->v, rows->n, sizeof(*rows->v), threads);

	/* The same order either way: by address, equal addresses as they came. */
	if (!sorted)
		sorted = sort_halves(rows->v, rows->n, sizeof(*rows->v), cmp_row, threads);

	if (sorted != rows->v)
		rows->cap = rows->n; /* a new array, of just that many */
	rows->v = sorted;
}

void walk_release(struct dw *w)
{
	frames_release(&w->fr);
	free(w->nodes);
	free(w->ivs);
	free(w->stack);
	name_blocks_reset(&w->names, true);
	name_blocks_reset(&w->path_names, true);
	name_blocks_reset(&w->demangled_names, true);
	free(w->demangled);
	free(w->paths);
	origin_names_release(&w->origins);
	origin_names_release(&w->shared_origins);
	abbrev_cache_release(&w->abbrevs);
	name_reader_release(&w->name_reader);
}
