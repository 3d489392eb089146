/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lidiagen [convert]: the main job. Options come from the table in
 * options.c, first from --config FILE, then from the command line, which
 * wins; the batch (batch.c) does the rest.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch.h"
#include "cli.h"
#include "config.h"
#include "guard.h"
#include "options.h"

static const char convert_usage[] =
	"usage: lidiagen [convert] [OPTIONS] PATH... -o DIR\n"
	"\n"
	"Write one Lidia symbol file per GNU build ID found in PATH...: ELF files,\n"
	"archives (tar.*, zip, cpio, ar, .deb, .ddeb, .rpm, nested) and, with -r,\n"
	"everything under directories. A stripped binary and its debug file make one\n"
	"file, wherever each was found.\n"
	"\n"
	"Output:\n"
	"  -o, --output DIR          write under DIR ('-': the one file to stdout)\n"
	"      --layout NAME         pyroscope (default): DIR/symbolizer/TENANT/BUILD-ID\n"
	"                            debuginfod: DIR/buildid/BUILD-ID/lidia\n"
	"                            flat: DIR/BUILD-ID.lidia\n"
	"      --layout-template T   DIR/T, T with {build_id} and {tenant}\n"
	"      --tenant NAME         tenant of the pyroscope layout (default anonymous)\n"
	"      --manifest FILE       JSON Lines: one line per build ID (inputs, counts, sha256);\n"
	"                            outside DIR\n"
	"      --force               rewrite every output (default: keep an output that\n"
	"                            has as much as the inputs give)\n"
	"      --state FILE          remember the inputs in FILE, so that a re-run reads\n"
	"                            only those that changed (keep it outside DIR)\n"
	"      --no-state            do not (undoes a config file's state)\n"
	"      --fallback-key SCHEME key for ELF files without a GNU build ID: none\n"
	"                            (default: skip them), go (hex of the Go build ID),\n"
	"                            sha256 (the first 40 hex digits of the file's SHA-256)\n"
	"\n"
	"Inputs:\n"
	"  -r, --recursive           descend into directories\n"
	"      --follow-symlinks     follow symbolic links found under directories\n"
	"      --include GLOB        only paths (and archive members) matching GLOB\n"
	"      --exclude GLOB        not paths (and archive members) matching GLOB\n"
	"      --max-member-size SZ  largest archive member read (default 4G)\n"
	"      --max-expansion SZ    most bytes read from one archive (default 64G)\n"
	"      --max-depth N         archives inside archives (default 4)\n"
	"\n"
	"What goes in:\n"
	"      --symbols-only        names and extents only: no inline frames, lines or\n"
	"                            files (what Pyroscope's own writer gives)\n"
	"      --no-inlines          leave inline frames out\n"
	"      --no-lines            leave line tables out\n"
	"      --no-files            leave file names out\n"
	"      --no-go               do not read Go's pclntab\n"
	"      --no-dwarf            do not read DWARF (symbols and Go only)\n"
	"      --no-demangle         keep C++, Rust and D names mangled\n"
	"      --no-symtab           leave .symtab symbols out\n"
	"      --no-dynsym           leave .dynsym symbols out\n"
	"      --debug-dir DIR       where to look for separate debug files (by build ID,\n"
	"                            .gnu_debuglink) and dwz files (repeatable; default\n"
	"                            /usr/lib/debug)\n"
	"      --no-debug-search     use only the files given\n"
	"\n"
	"Running:\n"
	"  -j, --jobs N              convert N inputs at a time (default: the cores)\n"
	"      --shard K/N           convert only the build IDs of shard K of N\n"
	"      --config FILE         read options from a YAML file (the command line wins)\n"
	"  -q, --quiet               print errors only\n"
	"  -v, --verbose             say more\n"
	"  -h, --help                show this help\n"
	"\n"
	"Exit status: 0 all converted, 1 some input failed (the others were\n"
	"converted) or the manifest or state could not be written, 2 usage error\n"
	"(checked before any work: options, and the paths written to).\n";

/* --config is read before anything else, wherever it stands. */
static const char *find_config(int argc, char **argv)
{
	const char *path = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			path = argv[++i];
		else if (!strncmp(argv[i], "--config=", 9))
			path = argv[i] + 9;
	}
	return path;
}

/*
 * The absolute, resolved path of file: its directory resolved (it must
 * exist), its own name kept. Used to tell whether one path is inside another.
 */
static int resolve_file(const char *file, char *out, size_t out_size)
{
	char copy[PATH_MAX], dir[PATH_MAX], *base;

	if (snprintf(copy, sizeof(copy), "%s", file) >= (int)sizeof(copy))
		return -ENAMETOOLONG;
	if (!realpath(dirname(copy), dir))
		return -errno;
	snprintf(copy, sizeof(copy), "%s", file);
	base = basename(copy);
	if (snprintf(out, out_size, "%s/%s", strcmp(dir, "/") ? dir : "", base) >= (int)out_size)
		return -ENAMETOOLONG;
	return 0;
}

/* Whether path lies under the directory dir (both resolved). */
static bool path_inside(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return true;
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

#define BAD(...) (snprintf(err, err_size, __VA_ARGS__), -1)

/*
 * A file the run writes beside its outputs (--manifest, --state): named, in
 * an existing directory, a regular file if it exists (a rename over
 * /dev/null would replace the device), and outside the output tree (a sync
 * of the tree would publish it, and verify would fail on it).
 */
static int check_side_file(const char *opt, const char *path, const char *out_real, char *err,
			   size_t err_size)
{
	char real[PATH_MAX];
	struct stat st;

	if (!*path)
		return BAD("--%s: the path is empty", opt);
	if (!stat(path, &st) && !S_ISREG(st.st_mode))
		return BAD("--%s: '%s' is not a regular file", opt, path);
	if (resolve_file(path, real, sizeof(real)))
		return BAD("--%s: '%s': the directory does not exist", opt, path);
	if (out_real && path_inside(real, out_real))
		return BAD("--%s: '%s' is inside the output directory; put it outside", opt, path);
	return 0;
}

/* The paths the run writes to, checked before any work, so a typo costs nothing. */
static int check_write_paths(const struct batch_opts *o, char *err, size_t err_size)
{
	char out_real[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	bool have_out = false;
	struct stat st;

	if (!*o->out_dir)
		return BAD("-o: the output directory is empty (an unset variable?)");
	if (!strcmp(o->out_dir, "-"))
		return 0;
	if (!stat(o->out_dir, &st)) {
		if (!S_ISDIR(st.st_mode))
			return BAD("-o: '%s' exists and is not a directory", o->out_dir);
		if (!realpath(o->out_dir, out_real))
			return BAD("-o: '%s': %s", o->out_dir, strerror(errno));
		have_out = true;
	}
	if (o->manifest && check_side_file("manifest", o->manifest, have_out ? out_real : NULL,
					   err, err_size))
		return -1;
	if (o->state && !o->no_state &&
	    check_side_file("state", o->state, have_out ? out_real : NULL, err, err_size))
		return -1;
	if (o->manifest && o->state && !o->no_state && !resolve_file(o->manifest, a, sizeof(a)) &&
	    !resolve_file(o->state, b, sizeof(b)) && !strcmp(a, b))
		return BAD("--manifest and --state name the same file '%s'", o->state);
	return 0;
}

#undef BAD

int cmd_convert(int argc, char **argv)
{
	struct option longopts[64];
	char shortopts[64] = "h";
	struct batch_opts o;
	struct opt_seen seen = { 0 };
	const char *config;
	char err[512];
	size_t n = 0, ns = 1;
	int opt, idx;

	options_defaults(&o);
	for (size_t i = 0; i < nconvert_opts; i++) {
		const struct opt_def *d = &convert_opts[i];

		longopts[n++] = (struct option){ d->name, d->kind == OPT_FLAG ? no_argument
									      : required_argument,
						 NULL, 1000 + (int)i };
		if (d->short_name) {
			shortopts[ns++] = (char)d->short_name;
			if (d->kind != OPT_FLAG)
				shortopts[ns++] = ':';
		}
	}
	longopts[n++] = (struct option){ "config", required_argument, NULL, 'C' };
	longopts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[n] = (struct option){ 0 };
	shortopts[ns] = '\0';

	config = find_config(argc, argv);
	if (config && config_load(&o, config, err, sizeof(err))) {
		error(NULL, "%s", err);
		return EXIT_USAGE;
	}
	while ((opt = getopt_long(argc, argv, shortopts, longopts, &idx)) != -1) {
		const struct opt_def *d = NULL;

		if (opt == 'h') {
			fputs(convert_usage, stdout);
			return EXIT_OK;
		}
		if (opt == 'C')
			continue; /* read above */
		if (opt >= 1000)
			d = &convert_opts[opt - 1000];
		for (size_t i = 0; !d && i < nconvert_opts; i++)
			if (convert_opts[i].short_name == opt)
				d = &convert_opts[i];
		if (!d) {
			fputs(convert_usage, stderr);
			return EXIT_USAGE;
		}
		if (option_apply(&o, d->name, d->kind == OPT_FLAG ? "true" : optarg, true, &seen, err,
				 sizeof(err))) {
			error(NULL, "--%s", err);
			return EXIT_USAGE;
		}
	}
	if (options_check(&o, err, sizeof(err))) {
		error(NULL, "%s", err);
		return EXIT_USAGE;
	}
	if (optind >= argc || !o.out_dir) {
		error(NULL, "%s", optind >= argc ? "no input given" : "no output directory (-o DIR)");
		fputs(convert_usage, stderr);
		return EXIT_USAGE;
	}
	if (check_write_paths(&o, err, sizeof(err))) {
		error(NULL, "%s", err);
		return EXIT_USAGE;
	}
	install_log();
	guard_install();
	return batch_run(&o, argv + optind, (size_t)(argc - optind));
}
