/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: everything known about one build's functions, from all its images, into a builder. */
#include <limits.h>

#include "builder.h"
#include "debug_find.h"
#include "debug_sections.h"
#include "dwarf_begin.h"
#include "dwarf_extract.h"
#include "dwp.h"
#include "dwp_unpack.h"
#include "elf_load.h"
#include "elf_mem.h"
#include "elf_pair.h"
#include "functions.h"
#include "go_extract.h"
#include "internal.h"
#include "name_blocks.h"
#include "pclntab_find.h"

void extract_ctx_release(struct extract_ctx *x)
{
	aside_join(&x->closing);
	free(x->covered.v);
	free(x->orphans.v);
	name_blocks_reset(&x->orphans.names, true);
	free(x->syms.v);
	demangler_release(&x->dm);
}

/* The Go pclntab of the first image that has one (a debug file has none: NOBITS). */
static int extract_go(struct extract_ctx *x, const struct lidia_elf *const *elfs, size_t n)
{
	struct gotab t;

	for (size_t i = 0; i < n; i++) {
		size_t bad = x->st.bad_functions;
		int found = gotab_find(&t, elfs[i]);
		int err;

		if (found < 0) {
			lidia_log(LIDIA_LOG_WARN, "%s: %s", elfs[i]->name, lidia_strerror(found));
			continue;
		}
		if (!found)
			continue;
		if (t.version >= GO_1_18 && !t.have_gofunc && x->inlines)
			lidia_log(LIDIA_LOG_WARN, "%s: go:func.* not found, no inline frames",
				  elfs[i]->name);
		err = gotab_extract(x, &t);
		if (x->st.bad_functions > bad)
			lidia_log(LIDIA_LOG_WARN, "%s: %zu Go functions with a malformed table",
				  elfs[i]->name, x->st.bad_functions - bad);
		return err;
	}
	return 0;
}

static const char *const default_debug_dirs[] = { "/usr/lib/debug", NULL };

static const char *const *debug_dirs(const struct lidia_extract_opts *opts)
{
	const char *const *d = OPTS_GET(opts, debug_dirs, NULL);

	return d ? d : default_debug_dirs;
}

/* The image with the most DWARF: a debug file over its stripped binary. */
static const struct lidia_elf *dwarf_image(const struct lidia_elf *const *elfs, size_t n)
{
	const struct lidia_elf *best = NULL;
	uint64_t best_size = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t size;

		if (elf_section_size(elfs[i], ".debug_info", &size) ||
		    elf_section_size(elfs[i], ".zdebug_info", &size)) {
			if (size > best_size) {
				best = elfs[i];
				best_size = size;
			}
		}
	}
	return best;
}

/*
 * With no .debug_info anywhere, an image with a .debug_line (hand-built,
 * or stripped of its units): its line programs are read for its symbols.
 */
static const struct lidia_elf *line_image(const struct lidia_elf *const *elfs, size_t n)
{
	uint64_t size;

	for (size_t i = 0; i < n; i++)
		if (elf_section_size(elfs[i], ".debug_line", &size) && size)
			return elfs[i];
	return NULL;
}

/* The images of to_close[3] closed, big ones a few MiB of pages at a time. */
static void close_images(void *to_close)
{
	struct lidia_elf **e = to_close;

	for (int i = 0; i < 3; i++)
		elf_image_close_stepwise(e[i]);
}

/*
 * The DWARF of the image that has the most, with its dwz file. libdw reads
 * copies of what it would inflate: the images are the caller's.
 */
static int extract_debuginfo(struct extract_ctx *x, const struct lidia_elf *const *elfs,
			     const uint64_t *bias, size_t n, const struct lidia_extract_opts *opts)
{
	const struct lidia_elf *e = dwarf_image(elfs, n) ?: line_image(elfs, n);
	struct lidia_elf *inflated = NULL, *alt = NULL, *alt_inflated = NULL;
	unsigned threads = OPTS_GET(opts, threads, 0);
	int (*guard)(void (*)(void *), void *) = OPTS_GET(opts, thread_guard, NULL);
	struct dwp_unpacked *unpacked = NULL;
	const struct lidia_elf *img;
	Dwarf *alt_dw = NULL;
	char dwp[PATH_MAX];
	bool names_alt;
	int err = 0;

	if (!e)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (elfs[i] == e)
			x->bias = bias[i];
	/* Broken compressed DWARF costs the DWARF, not the file: symbols still name it all. */
	if ((err = debug_sections_inflate(e, true, threads, guard, &inflated))) {
		lidia_log(LIDIA_LOG_WARN,
			  "%s: debug sections cannot be inflated (%s): symbols only", e->name,
			  lidia_strerror(err));
		return err == -ENOMEM ? err : 0;
	}
	/* The dwz file is the extraction's own: libdw inflates its .zdebug sections in it. */
	if (debug_find_alt(e, OPTS_GET(opts, dwz_dir, NULL),
			   OPTS_GET(opts, no_debug_search, false) ? NULL : debug_dirs(opts), &alt,
			   &names_alt) > 0) {
		if (debug_sections_inflate(alt, false, threads, guard, &alt_inflated))
			lidia_log(LIDIA_LOG_WARN, "%s: its dwz file's sections cannot be inflated",
				  e->name);
		else
			alt_dw = dwarf_begin_image((alt_inflated ? alt_inflated : alt)->elf, NULL);
	}
	/*
	 * The names of the inlined functions dwz moved are in that file alone:
	 * without it, inline frames would be left nameless ("??" in a profile),
	 * and the file no weaker by its counts than one made with it, so never
	 * replaced. Left out, the file rates as lines, below one that has them.
	 */
	if (!alt_dw && names_alt && x->inlines) {
		lidia_log(LIDIA_LOG_WARN, "%s: without its dwz file, inline frames are left out",
			  e->name);
		x->inlines = false;
	}
	img = inflated ? inflated : e;
	/*
	 * A package is a declared input too (Bazel's :app.dwp): looked for even
	 * with no search, and read as the .dwo files it was made of.
	 */
	if (dwp_beside(elfs, n, dwp, sizeof(dwp))) {
		int r = dwp_unpack(img, dwp, !x->no_debug_search, &unpacked);

		if (r < 0)
			lidia_log(LIDIA_LOG_WARN, "%s: DWARF package '%s' cannot be unpacked: %s",
				  img->name, dwp, lidia_strerror(r));
		if (r > 0)
			img = dwp_unpacked_image(unpacked);
		else
			dwp_warn_unread(img, dwp, !x->no_debug_search);
	}
	err = extract_dwarf(x, img, alt_dw);
	dwp_unpacked_close(unpacked);
	if (alt_dw)
		dwarf_end_image(alt_dw);
	/*
	 * A big file's images are hundreds of MB: giving their pages back to
	 * the kernel takes tens of ms, which another thread can spend while
	 * this one sorts the orphan rows and adds the symbols' functions.
	 */
	x->to_close[0] = alt_inflated;
	x->to_close[1] = alt;
	x->to_close[2] = inflated;
	aside_start(&x->closing, x->threads, x->guard != NULL, close_images, x->to_close);
	return err;
}

/*
 * All the images to read: elfs, then what they point at (a separate debug
 * file, when no image has DWARF), each one opened here also in opened[].
 */
static void find_images(const struct lidia_elf *const *elfs, size_t n,
			const struct lidia_extract_opts *opts, const struct lidia_elf **all,
			size_t *nall, struct lidia_elf **opened, size_t *nopened,
			struct lidia_extract_stats *st)
{
	memcpy(all, elfs, n * sizeof(*elfs));
	*nall = n;
	if (OPTS_GET(opts, no_debug_search, false) || OPTS_GET(opts, no_dwarf, false) ||
	    dwarf_image(all, *nall))
		return;
	for (size_t i = 0; i < n && *nall == n; i++) {
		struct lidia_elf *d;

		if (debug_find_file(elfs[i], debug_dirs(opts), &d) > 0)
			all[(*nall)++] = opened[(*nopened)++] = d;
	}
	st->found_debug_file = *nall > n;
}

/*
 * What to add to each image's addresses, in bias[]: a debug file split off
 * before its binary was prelinked is at the addresses of the link, and read
 * as it is with the binary it would make a mix of two address spaces. The
 * binary is the first image that is no debug file; without one, every
 * image's bias is 0.
 */
static int image_biases(const struct lidia_elf *const *all, size_t n, uint64_t *bias)
{
	const struct lidia_elf *bin = NULL;
	int err = 0;

	for (size_t i = 0; i < n && !bin; i++) {
		struct lidia_elf_info info;

		lidia_elf_info(all[i], &info);
		if (!info.debug_file)
			bin = all[i];
	}
	for (size_t i = 0; i < n && !err; i++)
		if (bin && all[i] != bin)
			err = elf_pair_bias(bin, all[i], &bias[i]);
	return err;
}

/*
 * The function symbols of all the images, resolved; MiniDebugInfo's when
 * none has a .symtab (its image kept in opened[]).
 */
static int collect_symbols(struct extract_ctx *x, const struct lidia_elf *const *elfs, size_t n,
			   const struct lidia_elf *const *all, const uint64_t *bias, size_t nall,
			   const struct lidia_extract_opts *opts, struct lidia_elf **opened,
			   size_t *nopened)
{
	bool symtab = !OPTS_GET(opts, no_symtab, false);
	bool dynsym = !OPTS_GET(opts, no_dynsym, false);
	bool any_symtab = false;
	int err = 0;

	for (size_t i = 0; i < nall && !err; i++)
		err = symbols_collect(&x->syms, all[i], bias[i], all, nall, symtab, dynsym);
	if (err || !symtab)
		return err;
	for (size_t i = 0; i < nall; i++) {
		struct lidia_elf_info info;

		lidia_elf_info(all[i], &info);
		any_symtab |= info.has_symtab;
	}
	for (size_t i = 0; i < n && !any_symtab; i++) {
		struct lidia_elf *mini;

		if (debug_minidebuginfo(elfs[i], &mini) <= 0)
			continue;
		opened[(*nopened)++] = mini;
		x->st.used_minidebuginfo = true;
		return symbols_collect(&x->syms, mini, 0, all, nall, true, false);
	}
	return 0;
}

/*
 * opts' reserved bytes are zero: prefix_map came after them, so no field can
 * take them, and a non-zero byte is a request no library honours.
 */
static bool reserved_zero(const struct lidia_extract_opts *opts)
{
	for (size_t i = 0; OPTS_HAS(opts, reserved) && i < sizeof(opts->reserved); i++)
		if (opts->reserved[i])
			return false;
	/* No field may take these any more: dwz_dir came after them. */
	for (size_t i = 0; OPTS_HAS(opts, reserved_end) && i < sizeof(opts->reserved_end); i++)
		if (opts->reserved_end[i])
			return false;
	return true;
}

/* opts' prefix_map, each "OLD=NEW" split at its first '=', given to b in order. */
static int map_prefixes(struct lidia_builder *b, const struct lidia_extract_opts *opts)
{
	const char *const *m = OPTS_GET(opts, prefix_map, NULL);

	for (; m && *m; m++) {
		const char *eq = strchr(*m, '=');
		char *old;
		int err;

		if (!eq || eq == *m)
			return LIDIA_E_INVAL;
		old = strndup(*m, (size_t)(eq - *m));
		if (!old)
			return -ENOMEM;
		err = lidia_builder_map_prefix(b, old, eq + 1);
		free(old);
		if (err)
			return err;
	}
	return 0;
}

int lidia_extract(struct lidia_builder *b, struct lidia_elf *const *elfs_in, size_t n,
		  const struct lidia_extract_opts *opts, struct lidia_extract_stats *stats)
{
	const struct lidia_elf *const *elfs = (const struct lidia_elf *const *)elfs_in;
	struct extract_ctx x = {
		.b = b,
		.inlines = !OPTS_GET(opts, no_inlines, false),
		.lines = !OPTS_GET(opts, no_lines, false),
		.files = !OPTS_GET(opts, no_files, false),
		.dm = { .enabled = !OPTS_GET(opts, no_demangle, false) },
		.threads = OPTS_GET(opts, threads, 0),
		.guard = OPTS_GET(opts, thread_guard, NULL),
		.no_debug_search = OPTS_GET(opts, no_debug_search, false),
	};
	const struct lidia_elf **all = NULL;
	uint64_t *bias = NULL;
	struct lidia_elf *opened[2];
	size_t nall = 0, nopened = 0;
	int err = 0;

	if (!n || !OPTS_VALID(opts, lidia_extract_opts) || !reserved_zero(opts))
		return LIDIA_E_INVAL;
	/* Every file's bytes into memory first: read, never mapped (elf_load.c). */
	for (size_t i = 0; i < n; i++)
		if ((err = elf_image_load_threads(elfs_in[i], x.threads)))
			goto out;
	if ((err = map_prefixes(b, opts)))
		goto out;
	builder_use_threads(b, x.threads);
	all = calloc(n + 1, sizeof(*all));
	bias = calloc(n + 1, sizeof(*bias));
	if (!all || !bias) {
		err = -ENOMEM;
		goto out;
	}
	find_images(elfs, n, opts, all, &nall, opened, &nopened, &x.st);
	if ((err = image_biases(all, nall, bias)))
		goto out;
	if ((err = collect_symbols(&x, elfs, n, all, bias, nall, opts, opened, &nopened)))
		goto out;
	x.st.symbols_read = x.syms.n;
	symbols_resolve(&x.syms);
	/* Best source first; each later one fills only what is not yet covered. */
	if (!OPTS_GET(opts, no_go, false) && (err = extract_go(&x, elfs, n)))
		goto out;
	intervals_normalize(&x.covered);
	if (!OPTS_GET(opts, no_dwarf, false) &&
	    (err = extract_debuginfo(&x, all, bias, nall, opts)))
		goto out;
	extract_dwarf_sort_orphans(&x);
	intervals_normalize(&x.covered);
	err = functions_add_symbols(&x);
out:
	for (size_t i = 0; i < nopened; i++)
		lidia_elf_close(opened[i]);
	free(all);
	free(bias);
	if (stats)
		*stats = x.st;
	extract_ctx_release(&x);
	return err;
}
