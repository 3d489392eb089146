/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lidiagen verify: check lidia files (or every file under a directory) the
 * way Pyroscope opens them, CRCs on, plus every range's strings and lines.
 * Directories are walked as convert walks its inputs (walk.h).
 */
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "walk.h"

static const struct cli_usage verify_usage = {
	.cmd = "verify",
	.synopsis = "usage: lidiagen verify [-q|-v] PATH...\n",
	.about = "Check every lidia file named, and every file under each directory named:\n"
		 "header, table bounds, CRC32C of every table, each range's strings and lines.\n"
		 "Temporary files of an unfinished write (.*.tmp.*) are passed over.\n"
		 "Exit status 1 when any file is invalid, naming it.\n",
};

static const struct cli_opt verify_opts[] = {
	CLI_QUIET("print errors only"),
	CLI_VERBOSE("also print each good file"),
};

struct verify {
	size_t ok, bad;
};

static void verify_file(void *ctx, const char *path, bool explicit)
{
	struct verify *v = ctx;
	struct lidia_reader *r;
	size_t bad;
	int err = open_reader(&r, path, true);

	(void)explicit;
	if (!err) {
		err = lidia_reader_check(r, &bad);
		lidia_reader_close(r);
		if (err) {
			error(path, "range %zu: %s", bad, lidia_strerror(err));
			v->bad++;
			return;
		}
	}
	if (err) {
		error(path, "%s", lidia_strerror(err));
		v->bad++;
		return;
	}
	v->ok++;
	if (verbosity >= 2)
		printf("%s: ok\n", path);
}

/* A path that cannot be read, or is not a file or a directory: invalid. */
static void verify_problem(void *ctx, const char *path, const char *msg)
{
	struct verify *v = ctx;

	error(path, "%s", msg);
	v->bad++;
}

int cmd_verify(int argc, char **argv)
{
	/* Symbolic links under a directory are not followed: no loops, nothing outside the tree. */
	const struct walk_opts walk = { .recursive = true, .skip_temps = true };
	struct verify v = { 0 };
	int ret;

	if ((ret = cli_parse(&verify_usage, verify_opts, CLI_NOPTS(verify_opts), argc, argv)) >= 0)
		return ret;
	if (optind >= argc)
		return usage_error("verify", "no path given");
	walk_paths(
		&walk, argv + optind, (size_t)(argc - optind),
		&(struct walk_calls){ .file = verify_file, .problem = verify_problem, .ctx = &v });
	if (verbosity >= 1)
		printf("%zu ok, %zu invalid\n", v.ok, v.bad);
	return v.bad ? EXIT_FAILED : EXIT_OK;
}
