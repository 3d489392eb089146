/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lidiagen [convert]: identify the ELF inputs, group them by GNU build ID
 * (a stripped binary with its debug file), extract each group into one
 * lidia file and store it under its key.
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char convert_usage[] =
	"usage: lidiagen [convert] [OPTIONS] PATH... -o DIR\n"
	"\n"
	"Write one Lidia symbol file per GNU build ID found in the ELF files PATH...\n"
	"A stripped binary and its separate debug file (same build ID) make one file.\n"
	"\n"
	"  -o, --output DIR      write under DIR ('-': one input's file to stdout)\n"
	"      --layout NAME     pyroscope (default): DIR/symbolizer/TENANT/BUILD-ID\n"
	"                        flat: DIR/BUILD-ID.lidia\n"
	"      --tenant NAME     tenant of the pyroscope layout (default: anonymous)\n"
	"      --symbols-only    names and extents only: no inline frames, lines or files\n"
	"                        (what Pyroscope's own writer gives)\n"
	"      --no-inlines      leave inline frames out\n"
	"      --no-lines        leave line tables out\n"
	"      --no-files        leave file names out\n"
	"      --no-go           do not read Go's pclntab\n"
	"      --no-dwarf        do not read DWARF (symbols and Go only)\n"
	"      --no-demangle     keep C++, Rust and D names mangled\n"
	"      --debug-dir DIR   where to look for separate debug files by build ID and\n"
	"                        .gnu_debuglink, and dwz files (repeatable; default\n"
	"                        /usr/lib/debug)\n"
	"      --no-debug-search use only the files given\n"
	"      --no-symtab       leave .symtab symbols out\n"
	"      --no-dynsym       leave .dynsym symbols out\n"
	"  -q, --quiet           print errors only\n"
	"  -v, --verbose         say more\n"
	"  -h, --help            show this help\n"
	"\n"
	"Exit status: 0 all converted, 1 some input failed (the others were\n"
	"converted), 2 usage error.\n";

/* The inputs of one build ID. */
struct group {
	char build_id[130];
	struct lidia_elf **elfs;
	const char **paths;
	size_t n;
};

struct convert {
	const char *out_dir;
	struct lidia_store_opts store;
	struct lidia_extract_opts extract;
	struct group *groups;
	size_t ngroups;
	bool failed;
};

static struct group *group_for(struct convert *c, const char *build_id)
{
	struct group *g;

	for (size_t i = 0; i < c->ngroups; i++)
		if (!strcmp(c->groups[i].build_id, build_id))
			return &c->groups[i];
	g = realloc(c->groups, (c->ngroups + 1) * sizeof(*c->groups));
	if (!g)
		return NULL;
	c->groups = g;
	g = &c->groups[c->ngroups++];
	memset(g, 0, sizeof(*g));
	strcpy(g->build_id, build_id);
	return g;
}

/* Identify one input and file it under its build ID. */
static void add_input(struct convert *c, const char *path)
{
	struct lidia_elf *e = NULL;
	char id[130];
	struct group *g;
	void *p;
	int err;

	err = lidia_elf_open(&e, path);
	if (err) {
		error(path, "%s", lidia_strerror(err));
		c->failed = true;
		return;
	}
	err = lidia_elf_build_id(e, id, sizeof(id));
	if (err) {
		warning(path, "%s, skipped", lidia_strerror(err));
		lidia_elf_close(e);
		return;
	}
	g = group_for(c, id);
	if (g && (p = realloc(g->elfs, (g->n + 1) * sizeof(*g->elfs))))
		g->elfs = p;
	if (g && (p = realloc(g->paths, (g->n + 1) * sizeof(*g->paths))))
		g->paths = p;
	if (!g || !g->elfs || !g->paths) {
		error(path, "out of memory");
		lidia_elf_close(e);
		c->failed = true;
		return;
	}
	g->elfs[g->n] = e;
	g->paths[g->n] = path;
	g->n++;
}

static int cmp_group(const void *a, const void *b)
{
	return strcmp(((const struct group *)a)->build_id, ((const struct group *)b)->build_id);
}

static void convert_group(struct convert *c, struct group *g)
{
	struct lidia_extract_stats st;
	struct lidia_builder *b = NULL;
	char key[512];
	int err;

	err = lidia_builder_new(&b);
	if (!err)
		err = lidia_extract(b, g->elfs, g->n, &c->extract, &st);
	if (!err && st.functions == 0)
		warning(g->paths[0], "no function symbols (fully stripped?); the file will be empty");
	if (!err)
		err = lidia_builder_finalize(b);
	if (err) {
		error(g->paths[0], "%s", lidia_strerror(err));
		goto fail;
	}
	if (!strcmp(c->out_dir, "-")) {
		err = lidia_builder_write_fd(b, STDOUT_FILENO);
		if (err) {
			error("stdout", "%s", lidia_strerror(err));
			goto fail;
		}
		goto out;
	}
	err = lidia_store_key(key, sizeof(key), g->build_id, &c->store);
	if (!err)
		err = lidia_store_write(b, c->out_dir, key);
	if (err) {
		error(g->paths[0], "cannot write '%s/%s': %s", c->out_dir, key, lidia_strerror(err));
		goto fail;
	}
	if (verbosity >= 1) {
		printf("%s/%s", c->out_dir, key);
		for (size_t i = 0; i < g->n; i++)
			printf("%s%s", i ? ", " : " <- ", g->paths[i]);
		printf(" (%zu functions)\n", st.functions);
	}
	goto out;
fail:
	c->failed = true;
out:
	lidia_builder_free(b);
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "layout", required_argument, NULL, 'L' },
		{ "tenant", required_argument, NULL, 'T' },
		{ "symbols-only", no_argument, NULL, 'Y' },
		{ "no-inlines", no_argument, NULL, 'I' },
		{ "no-lines", no_argument, NULL, 'N' },
		{ "no-files", no_argument, NULL, 'F' },
		{ "no-go", no_argument, NULL, 'G' },
		{ "no-dwarf", no_argument, NULL, 'W' },
		{ "no-demangle", no_argument, NULL, 'M' },
		{ "debug-dir", required_argument, NULL, 'd' },
		{ "no-debug-search", no_argument, NULL, 'X' },
		{ "no-symtab", no_argument, NULL, 'S' },
		{ "no-dynsym", no_argument, NULL, 'D' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const char *debug_dirs[65];
	size_t ndebug_dirs = 0;
	struct convert c = {
		.store = LIDIA_STORE_OPTS(.layout = LIDIA_LAYOUT_PYROSCOPE, .tenant = "anonymous"),
		.extract = LIDIA_EXTRACT_OPTS(),
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "o:qvh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			c.out_dir = optarg;
			break;
		case 'L':
			if (lidia_layout_parse(optarg, &c.store.layout)) {
				error(NULL, "unknown layout '%s' (pyroscope, flat)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'T':
			if (!lidia_tenant_valid(optarg)) {
				error(NULL, "invalid tenant '%s' (letters, digits, '_', '-', '.')",
				      optarg);
				return EXIT_USAGE;
			}
			c.store.tenant = optarg;
			break;
		case 'Y':
			c.extract.no_inlines = c.extract.no_lines = c.extract.no_files = true;
			break;
		case 'I':
			c.extract.no_inlines = true;
			break;
		case 'N':
			c.extract.no_lines = true;
			break;
		case 'F':
			c.extract.no_files = true;
			break;
		case 'G':
			c.extract.no_go = true;
			break;
		case 'W':
			c.extract.no_dwarf = true;
			break;
		case 'M':
			c.extract.no_demangle = true;
			break;
		case 'd':
			if (ndebug_dirs + 1 >= sizeof(debug_dirs) / sizeof(debug_dirs[0])) {
				error(NULL, "too many --debug-dir options");
				return EXIT_USAGE;
			}
			debug_dirs[ndebug_dirs++] = optarg;
			c.extract.debug_dirs = debug_dirs;
			break;
		case 'X':
			c.extract.no_debug_search = true;
			break;
		case 'S':
			c.extract.no_symtab = true;
			break;
		case 'D':
			c.extract.no_dynsym = true;
			break;
		case 'q':
			verbosity = 0;
			break;
		case 'v':
			verbosity = 2;
			break;
		case 'h':
			fputs(convert_usage, stdout);
			return EXIT_OK;
		default:
			fputs(convert_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc || !c.out_dir) {
		error(NULL, "%s", optind >= argc ? "no input given" : "no output directory (-o DIR)");
		fputs(convert_usage, stderr);
		return EXIT_USAGE;
	}
	install_log();
	for (int i = optind; i < argc; i++)
		add_input(&c, argv[i]);
	if (!strcmp(c.out_dir, "-") && c.ngroups > 1) {
		error(NULL, "-o - writes one file, but the inputs have %zu build IDs", c.ngroups);
		return EXIT_USAGE;
	}
	/* Outputs in build-ID order, whatever the order of the inputs. */
	if (c.ngroups > 1)
		qsort(c.groups, c.ngroups, sizeof(*c.groups), cmp_group);
	for (size_t i = 0; i < c.ngroups; i++) {
		convert_group(&c, &c.groups[i]);
		for (size_t k = 0; k < c.groups[i].n; k++)
			lidia_elf_close(c.groups[i].elfs[k]);
		free(c.groups[i].elfs);
		free(c.groups[i].paths);
	}
	free(c.groups);
	if (verbosity >= 1 && strcmp(c.out_dir, "-"))
		fflush(stdout);
	return c.failed ? EXIT_FAILED : EXIT_OK;
}
