/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lidiagen [convert]: the main job. Options come from the table in
 * options.c, first from --config FILE, then from the command line, which
 * wins; the batch (batch.c) does the rest.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "cli.h"
#include "config.h"
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
	"      --manifest FILE       JSON Lines: one line per build ID (inputs, counts, sha256)\n"
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
	"converted), 2 usage error.\n";

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
	install_log();
	return batch_run(&o, argv + optind, (size_t)(argc - optind));
}
