/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lidiagen index: what every input holds, written once (or in slices by N
 * jobs, then merged), so that convert --index --shard K/N opens only the
 * inputs that hold its build IDs (doc/index.md, doc/sharding.md). The
 * options it shares with convert are convert's rows (options.c): the same
 * names, checks and help.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch.h"
#include "cli.h"
#include "cpus.h"
#include "huge_heap.h"
#include "index.h"
#include "index_id.h"
#include "options.h"
#include "stdin_input.h"

static const char usage_text[] =
	"usage: lidiagen index [OPTIONS] PATH... -o INDEX\n"
	"       lidiagen index --merge SLICE... -o INDEX\n"
	"\n"
	"Write what each input holds (ELF files, archives, with -r directories, taken\n"
	"as convert takes them): for every ELF image its archive members, size, build\n"
	"ID, kind and what it can give; for every input its size, mtime and SHA-256\n"
	"(an archive hashed in the read that walks it). Then 'lidiagen convert --index\n"
	"INDEX --shard K/N' opens only the inputs of its shard (whole sets of inputs,\n"
	"by default). JSON Lines, described in doc/index.md.\n"
	"\n"
	"  -o, --output INDEX        the index ('-': stdout), written atomically\n"
	"      --shard K/N           index only slice K of N of the inputs (by a hash of\n"
	"                            each path as walked); merge the N slices after\n"
	"      --merge               join the slices SLICE... (all N of one run: the same\n"
	"                            paths and options) into one\n"
	"      --reuse OLD           take the inputs of OLD (an index) whose size and\n"
	"                            mtime, or else SHA-256, are the same, unread\n"
	"  -r, --recursive           descend into directories\n"
	"      --follow-symlinks     follow symbolic links found under directories\n"
	"      --include GLOB        only paths (and archive members) matching GLOB\n"
	"      --exclude GLOB        not paths (and archive members) matching GLOB\n"
	"      --max-member-size SZ  largest archive member read (default 4G)\n"
	"      --max-expansion SZ    most bytes read from one archive (default 64G)\n"
	"      --max-depth N         archives inside archives (default 4)\n"
	"      --platform OS/ARCH    of a container image, this platform's alone\n"
	"      --fallback-key SCHEME none, go or sha256, as convert will be given\n"
	"  -j, --jobs N              read N inputs at a time (default: the cores)\n"
	"      --max-memory SZ       the memory the run may hold, as convert's (default:\n"
	"                            half of the cgroup's limit, or of physical memory)\n"
	"      --strict              warnings fail the run (exit 1)\n"
	"  -q, --quiet               print errors and the summary only\n"
	"  -v, --verbose             say more\n"
	"  -h, --help                show this help\n"
	"\n"
	"Exit status: 0 indexed, 1 some input failed (said, and recorded in the index;\n"
	"the others were indexed) or the index could not be written, 2 usage error.\n";

/* Convert's rows the index takes as they are. */
static const char *const shared[] = {
	"recursive",	 "follow-symlinks", "include",	    "exclude", "max-member-size",
	"max-expansion", "max-depth",	    "fallback-key", "shard",   "jobs",
	"max-memory",	 "strict",	    "quiet",	    "verbose", "platform",
};
#define NSHARED (sizeof(shared) / sizeof(shared[0]))

enum { OPT_OUTPUT = 'o', OPT_HELP = 'h', OPT_MERGE = 1000, OPT_REUSE, OPT_SHARED };

struct index_args {
	struct batch_opts o;
	const char *out, *reuse;
	bool merge;
};

/* getopt_long's tables: the index's own options, then the shared rows. */
static void make_tables(struct option *longopts, char *shortopts)
{
	size_t n = 0, ns = 0;

	longopts[n++] = (struct option){ "output", required_argument, NULL, OPT_OUTPUT };
	longopts[n++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	longopts[n++] = (struct option){ "merge", no_argument, NULL, OPT_MERGE };
	longopts[n++] = (struct option){ "reuse", required_argument, NULL, OPT_REUSE };
	ns += (size_t)sprintf(shortopts, "o:h");
	for (size_t i = 0; i < NSHARED; i++) {
		const struct opt_def *d = option_find(shared[i]);

		longopts[n++] = (struct option){
			d->name, d->kind == OPT_FLAG ? no_argument : required_argument, NULL,
			d->short_name ? d->short_name : OPT_SHARED + (int)i
		};
		if (d->short_name)
			ns += (size_t)sprintf(shortopts + ns, "%c%s", d->short_name,
					      d->kind == OPT_FLAG ? "" : ":");
	}
	longopts[n] = (struct option){ 0 };
}

/* The shared row of a getopt value; NULL if none. */
static const struct opt_def *shared_row(int opt)
{
	if (opt >= OPT_SHARED && opt < OPT_SHARED + (int)NSHARED)
		return option_find(shared[opt - OPT_SHARED]);
	for (size_t i = 0; i < NSHARED; i++)
		if (option_find(shared[i])->short_name == opt)
			return option_find(shared[i]);
	return NULL;
}

/* The command line. Returns -1 to go on, or the exit code (--help, a usage error). */
static int parse_args(struct index_args *a, int argc, char **argv)
{
	struct option longopts[NSHARED + 5];
	struct opt_seen seen = { 0 };
	char shortopts[2 * NSHARED + 4], err[512];
	int opt;

	make_tables(longopts, shortopts);
	while ((opt = cli_getopt("index", argc, argv, shortopts, longopts)) != -1) {
		const struct opt_def *d;

		if (opt == OPT_HELP) {
			fputs(usage_text, stdout);
			return EXIT_OK;
		} else if (opt == OPT_OUTPUT) {
			a->out = optarg;
		} else if (opt == OPT_MERGE) {
			a->merge = true;
		} else if (opt == OPT_REUSE) {
			a->reuse = optarg;
		} else if ((d = shared_row(opt))) {
			if (option_apply(&a->o, d, d->kind == OPT_FLAG ? "true" : optarg, &seen,
					 err, sizeof(err)))
				return usage_error("index", "--%s", err);
		} else {
			return EXIT_USAGE; /* cli_getopt() said why */
		}
	}
	return -1;
}

/* The options together, before any work. Returns -1 to go on, or EXIT_USAGE. */
static int check_args(const struct index_args *a, int nargs)
{
	struct stat st;

	if (!a->out)
		return usage_error("index", "no index to write (-o INDEX)");
	if (!*a->out)
		return usage_error("index", "-o: the path is empty (an unset variable?)");
	if (strcmp(a->out, "-") && !stat(a->out, &st) && !S_ISREG(st.st_mode))
		return usage_error("index", "-o: '%s' is not a regular file", a->out);
	if (!nargs)
		return usage_error("index", a->merge ? "no slice given" : "no input given");
	if (a->merge && (a->reuse || a->o.shard_n))
		return usage_error("index", "--merge takes neither --reuse nor --shard");
	return -1;
}

/*
 * The slices' headers agree: of one run (the paths given, --fallback-key,
 * the options that change what is found), and each of 1..N once (or none
 * sliced).
 */
static int check_slices(const struct index *ix, char **paths, size_t n)
{
	unsigned total = ix[0].h.slice_n;
	bool *seen = calloc(total + 1, sizeof(*seen));
	char what[1024];
	int ret = -1;

	for (size_t i = 0; seen && i < n; i++) {
		const struct index_header *h = &ix[i].h;

		if (index_run_differs(h, &ix[0].h, what, sizeof(what))) {
			error(paths[i], "of another run than %s: %s", paths[0], what);
			goto out;
		}
		if (h->slice_n != total) {
			error(paths[i], "%s, but %s is %s",
			      h->slice_n ? "a slice" : "a whole index", paths[0],
			      total ? "a slice" : "a whole index");
			goto out;
		}
		if (total && seen[h->slice_k]) {
			error(paths[i], "slice %u/%u given twice", h->slice_k, total);
			goto out;
		}
		if (total)
			seen[h->slice_k] = true;
	}
	for (unsigned k = 1; seen && k <= total; k++)
		if (!seen[k]) {
			error(NULL, "slice %u/%u is missing: merge all %u", k, total, total);
			goto out;
		}
	ret = seen ? 0 : -1;
out:
	free(seen);
	return ret;
}

/* Every slice's inputs and problems into m; an input in two slices is refused. */
static int join(struct index *m, struct index *ix, char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct state *s = &ix[i].st;

		for (size_t k = 0; k < s->ninputs; k++) {
			ssize_t idx = state_add_input(&m->st, s->inputs[k].path, s->inputs[k].size,
						      s->inputs[k].mtime);

			if (idx == STATE_DUPLICATE) {
				error(paths[i], "input '%s' is in another slice too",
				      s->inputs[k].path);
				return -1;
			}
			if (idx < 0 || state_copy_input(&m->st, (size_t)idx, s, k))
				goto oom;
		}
		for (size_t e = 0; e < ix[i].errors.n; e++)
			if (problems_add(&m->errors, ix[i].errors.v[e].path, ix[i].errors.v[e].msg))
				goto oom;
	}
	return 0;
oom:
	error(NULL, "out of memory merging the slices");
	return -1;
}

/* --merge: the slices read whole first (the first fault said), then joined and written. */
static int merge(const char *out, char **paths, size_t n)
{
	struct index *ix = calloc(n, sizeof(*ix)), m;
	struct index_header h;
	char err[1024];
	int ret = EXIT_FAILED, werr;

	index_init(&m);
	for (size_t i = 0; ix && i < n; i++)
		index_init(&ix[i]);
	for (size_t i = 0; ix && i < n; i++)
		if (index_load(&ix[i], paths[i], err, sizeof(err))) {
			error(NULL, "%s", err);
			goto out;
		}
	if (!ix || check_slices(ix, paths, n) || join(&m, ix, paths, n))
		goto out;
	/* The run's header, not sliced: one run's index of the same paths, byte for byte. */
	h = ix[0].h;
	h.slice_k = h.slice_n = 0;
	if ((werr = index_write(out, &h, &m.st, &m.errors)))
		error(out, "cannot write the index: %s", strerror(-werr));
	else
		ret = EXIT_OK;
	if (verbosity >= 1)
		fprintf(stderr, "lidiagen: index: %zu slices merged: %zu inputs, %zu ELF%s\n", n,
			m.st.ninputs, m.st.nparts, ret ? " (not written)" : "");
out:
	for (size_t i = 0; ix && i < n; i++)
		index_release(&ix[i]);
	free(ix);
	index_release(&m);
	return ret;
}

int cmd_index(int argc, char **argv)
{
	struct index_args a = { 0 };
	char err[512];
	int ret;

	options_defaults(&a.o);
	a.o.indexing = true;
	if ((ret = parse_args(&a, argc, argv)) >= 0 || (ret = check_args(&a, argc - optind)) >= 0)
		return ret;
	if (a.merge)
		return merge(a.out, argv + optind, (size_t)(argc - optind));
	huge_heap_threads(a.o.jobs ? a.o.jobs : usable_cpus());
	install_log();
	if ((ret = stdin_input(argv + optind, (size_t)(argc - optind), err, sizeof(err)))) {
		if (ret == -1)
			return usage_error("index", "%s", err);
		error(NULL, "%s", err);
		return EXIT_FAILED;
	}
	return batch_index(&a.o, argv + optind, (size_t)(argc - optind), a.out, a.reuse);
}
