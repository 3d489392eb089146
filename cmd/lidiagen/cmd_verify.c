/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lidiagen verify: check lidia files (or every file under a directory) the
 * way Pyroscope opens them, CRCs on, plus every range's strings and lines.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char verify_usage[] =
	"usage: lidiagen verify [-q|-v] PATH...\n"
	"\n"
	"Check every lidia file named, and every file under each directory named:\n"
	"header, table bounds, CRC32C of every table, each range's strings and lines.\n"
	"Temporary files of an unfinished write (.*.tmp.*) are passed over.\n"
	"Exit status 1 when any file is invalid, naming it.\n";

struct verify {
	size_t ok, bad;
};

static void verify_file(struct verify *v, const char *path)
{
	struct lidia_reader *r;
	size_t bad;
	int err = lidia_reader_open(&r, path, &LIDIA_READER_OPTS(.check_crc = true));

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

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void verify_path(struct verify *v, const char *path)
{
	struct stat st;
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *d;

	if (lstat(path, &st)) {
		error(path, "%s", strerror(errno));
		v->bad++;
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		verify_file(v, path);
		return;
	}
	d = opendir(path);
	if (!d) {
		error(path, "%s", strerror(errno));
		v->bad++;
		return;
	}
	while ((de = readdir(d))) {
		char **p;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_name[0] == '.' && strstr(de->d_name, ".tmp."))
			continue;
		p = realloc(names, (n + 1) * sizeof(*names));
		if (!p)
			break;
		names = p;
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_name); /* messages in a stable order */
	for (size_t i = 0; i < n; i++) {
		char child[PATH_MAX];

		if ((size_t)snprintf(child, sizeof(child), "%s/%s", path, names[i]) <
		    sizeof(child)) {
			struct stat cs;

			/* Symlinks are not followed: no loops, nothing outside the tree. */
			if (!lstat(child, &cs) && (S_ISDIR(cs.st_mode) || S_ISREG(cs.st_mode)))
				verify_path(v, child);
		}
		free(names[i]);
	}
	free(names);
}

int cmd_verify(int argc, char **argv)
{
	struct verify v = { 0 };
	int first = 1;

	for (; first < argc && argv[first][0] == '-'; first++) {
		if (!strcmp(argv[first], "-h") || !strcmp(argv[first], "--help")) {
			fputs(verify_usage, stdout);
			return EXIT_OK;
		} else if (!strcmp(argv[first], "-q")) {
			verbosity = 0;
		} else if (!strcmp(argv[first], "-v")) {
			verbosity = 2;
		} else {
			error(NULL, "unknown option '%s'", argv[first]);
			fputs(verify_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (first >= argc) {
		fputs(verify_usage, stderr);
		return EXIT_USAGE;
	}
	for (int i = first; i < argc; i++)
		verify_path(&v, argv[i]);
	if (verbosity >= 1)
		printf("%zu ok, %zu invalid\n", v.ok, v.bad);
	return v.bad ? EXIT_FAILED : EXIT_OK;
}
