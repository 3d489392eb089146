/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lidiagen [convert]: the main job. Options, and their part of --help,
 * come from the table in options.c: first from --config FILE, then from the
 * command line, which wins; the batch (batch.c) does the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "by_build_id.h"
#include "cli.h"
#include "config.h"
#include "cpus.h"
#include "huge_heap.h"
#include "options.h"
#include "publish.h"
#include "oci_dir.h"
#include "stdin_input.h"

static const char usage_head[] =
	"usage: lidiagen [convert] [OPTIONS] PATH... -o DIR|s3://BUCKET[/PREFIX]\n"
	"       lidiagen [convert] [OPTIONS] --index INDEX --shard K/N -o ...\n"
	"\n"
	"Write one Lidia symbol file per GNU build ID found in PATH...: ELF files,\n"
	"archives (tar.*, zip, cpio, ar, .deb, .ddeb, .rpm, nested) and, with -r,\n"
	"everything under directories; '-': an archive (or ELF file) on standard input,\n"
	"as 'docker save IMAGE | lidiagen - -o out' gives it, named /dev/stdin. A\n"
	"stripped binary and its debug file make one\n"
	"file, wherever each was found. Into a directory, or published to a bucket\n"
	"(doc/publishing.md). Or, over many machines, the inputs of one shard from an\n"
	"index (lidiagen index; doc/sharding.md).\n";

static const char usage_tail[] =
	"\n"
	"Exit status: 0 all converted, 1 some input failed (the others were\n"
	"converted), a key could not be published, the bucket refused the run, or\n"
	"the manifest or state could not be written, 2 usage error (checked before\n"
	"any work: options, the paths written to, the bucket's settings and\n"
	"credentials).\n";

/* The usage: its head, the options table (options.c), its tail. */
static void usage(FILE *f)
{
	fputs(usage_head, f);
	options_help(f);
	fputs(usage_tail, f);
}

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
 * Whether files can be made in dir (0, or -errno): an unnamed file is made
 * there and dropped, which finds a read-only file system as well as the
 * permissions; where the file system cannot (no O_TMPFILE), access() asks.
 */
static int dir_writable(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	return access(dir, W_OK | X_OK) ? -errno : 0;
}

/* Cut path to its parent directory in place: "a/b/" is "a", "b" is ".", "/b" is "/". */
static void to_parent(char *path)
{
	size_t n = strlen(path);
	char *slash;

	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	if (!(slash = strrchr(path, '/')))
		strcpy(path, ".");
	else
		slash[slash == path] = '\0';
}

/* Where the run makes path: path itself if it is a directory that exists, else its nearest parent. */
static int existing_dir_of(const char *path, bool is_dir, char *out, size_t out_size)
{
	struct stat st;

	if (snprintf(out, out_size, "%s", path) >= (int)out_size || out_size < 2)
		return -ENAMETOOLONG;
	if (!is_dir)
		to_parent(out);
	while (stat(out, &st) && errno == ENOENT && strcmp(out, ".") && strcmp(out, "/"))
		to_parent(out);
	return 0;
}

/* A path the run writes to (the output tree, or a side file's directory) must take new files. */
static int check_writable(const char *opt, const char *path, bool is_dir, char *err,
			  size_t err_size)
{
	char dir[PATH_MAX];
	int e = existing_dir_of(path, is_dir, dir, sizeof(dir));

	if (!e)
		e = dir_writable(dir);
	if (e && strcmp(dir, path))
		return BAD("%s: '%s' cannot be written (its directory '%.200s': %s)", opt, path,
			   dir, strerror(-e));
	if (e)
		return BAD("%s: '%s' cannot be written: %s", opt, path, strerror(-e));
	return 0;
}

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
	char out_real[PATH_MAX], a[PATH_MAX], b[PATH_MAX], typo[512];
	bool have_out = false;
	struct stat st;

	if (!*o->out_dir)
		return BAD("-o: the output directory is empty (an unset variable?)");
	/* "s3:/b" would make a directory "s3:", and publish nothing. */
	if (s3_url_typo(o->out_dir, typo, sizeof(typo)))
		return BAD("-o: %.480s", typo);
	if (!strcmp(o->out_dir, "-"))
		return 0;
	if (s3_is_url(o->out_dir)) {
		/* A bucket: its settings are checked by publish_open; the side files here. */
	} else if (!stat(o->out_dir, &st)) {
		if (!S_ISDIR(st.st_mode))
			return BAD("-o: '%s' exists and is not a directory", o->out_dir);
		if (!realpath(o->out_dir, out_real))
			return BAD("-o: '%s': %s", o->out_dir, strerror(errno));
		have_out = true;
	} else if (errno != ENOENT) {
		/* "out/" naming a file fails with ENOTDIR: no directory can be made there. */
		return BAD("-o: '%s': %s", o->out_dir, strerror(errno));
	}
	if (!s3_is_url(o->out_dir) && !o->dry_run &&
	    check_writable("-o", o->out_dir, true, err, err_size))
		return -1;
	if (o->manifest &&
	    (check_side_file("manifest", o->manifest, have_out ? out_real : NULL, err, err_size) ||
	     check_writable("--manifest", o->manifest, false, err, err_size)))
		return -1;
	if (o->state && !o->no_state &&
	    (check_side_file("state", o->state, have_out ? out_real : NULL, err, err_size) ||
	     (!o->dry_run && check_writable("--state", o->state, false, err, err_size))))
		return -1;
	if (o->manifest && o->state && !o->no_state && !resolve_file(o->manifest, a, sizeof(a)) &&
	    !resolve_file(o->state, b, sizeof(b)) && !strcmp(a, b))
		return BAD("--manifest and --state name the same file '%s'", o->state);
	return 0;
}

#undef BAD

/*
 * getopt_long's tables, made from the options table once. A long option
 * returns its row's short name if it has one (so --help and -h are both
 * 'h'), else LONG_BASE + its index in the table.
 */
#define LONG_BASE 1000
static struct option longopts[OPTS_MAX + 1];
static char shortopts[2 * OPTS_MAX + 1];

static void make_getopt_tables(void)
{
	size_t ns = 0;

	for (size_t i = 0; i < nconvert_opts; i++) {
		const struct opt_def *d = &convert_opts[i];

		longopts[i] =
			(struct option){ d->name,
					 d->kind == OPT_FLAG ? no_argument : required_argument,
					 NULL, d->short_name ? d->short_name : LONG_BASE + (int)i };
		if (d->short_name) {
			shortopts[ns++] = (char)d->short_name;
			if (d->kind != OPT_FLAG)
				shortopts[ns++] = ':';
		}
	}
	longopts[nconvert_opts] = (struct option){ 0 };
	shortopts[ns] = '\0';
}

/* The row getopt_long's return value stands for; NULL for an unknown option. */
static const struct opt_def *opt_row(int opt)
{
	if (opt >= LONG_BASE)
		return &convert_opts[opt - LONG_BASE];
	for (size_t i = 0; i < nconvert_opts; i++)
		if (convert_opts[i].short_name == opt)
			return &convert_opts[i];
	return NULL;
}

/*
 * The command line, over what the config set. Returns -1 to go on, or the
 * exit code (--help, a usage error).
 */
static int parse_args(struct batch_opts *o, int argc, char **argv)
{
	struct opt_seen seen = { 0 };
	char err[512];
	int opt;

	make_getopt_tables();
	while ((opt = cli_getopt("convert", argc, argv, shortopts, longopts)) != -1) {
		const struct opt_def *d = opt_row(opt);

		if (!d)
			return EXIT_USAGE; /* cli_getopt() said why */
		if (d->short_name == 'h') {
			usage(stdout);
			return EXIT_OK;
		}
		if (!d->set)
			continue; /* --config: read before */
		if (option_apply(o, d, d->kind == OPT_FLAG ? "true" : optarg, &seen, err,
				 sizeof(err)))
			return usage_error("convert", "--%s", err);
	}
	return -1;
}

/* -o s3://...: the bucket, checked before any work. Returns -1 to go on, or the exit code. */
static int open_bucket(struct batch_opts *o)
{
	char err[1024];
	bool usage;

	ignore_sigpipe();
	if (!publish_open(&o->bucket, o->out_dir, &o->s3, err, sizeof(err), &usage)) {
		o->out_dir = publish_url(o->bucket); /* s3://BUCKET/PREFIX, as messages name it */
		if (verbosity >= 2)
			fprintf(stderr, "lidiagen: publishing to %s\n", publish_url(o->bucket));
		return -1;
	}
	/* The message names what it is about: the URL, the bucket's settings, the credentials. */
	if (usage)
		return usage_error("convert", "%s", err);
	error(NULL, "%s", err);
	return EXIT_FAILED;
}

/* --build-id, --build-ids: the files fetched from debuginfod, converted as inputs given. */
static int run_by_build_id(struct batch_opts *o)
{
	struct fetched f;
	char err[512];
	int ret = fetch_build_ids(o, &f, err, sizeof(err));

	if (ret == -1)
		return usage_error("convert", "%s", err);
	if (ret) {
		error(NULL, "%s", err);
		return EXIT_FAILED;
	}
	o->debuginfod = false; /* asked already, for both files of each build ID */
	ret = f.n ? batch_run(o, f.paths, f.n) : EXIT_FAILED;
	if (f.failed && ret == EXIT_OK)
		ret = EXIT_FAILED;
	fetched_free(&f);
	return ret;
}

int cmd_convert(int argc, char **argv)
{
	struct batch_opts o;
	const char *config;
	char err[512];
	bool by_id;
	int ret;

	options_defaults(&o);
	config = find_config(argc, argv);
	if (config && config_load(&o, config, err, sizeof(err)))
		return usage_error("convert", "%s", err);
	if ((ret = parse_args(&o, argc, argv)) >= 0)
		return ret;
	if (options_check(&o, err, sizeof(err)))
		return usage_error("convert", "%s", err);
	by_id = o.nbuild_ids || o.build_ids_file;
	if (optind >= argc && !o.index && !by_id)
		return usage_error("convert", "no input given");
	if ((optind < argc || o.index) && by_id)
		return usage_error("convert",
				   "--build-id takes no PATH nor --index: the inputs are "
				   "the debuginfod servers'");
	if (optind < argc && o.index)
		return usage_error("convert", "--index takes no PATH: the inputs are the index's");
	if (!o.out_dir)
		return usage_error("convert", "no output directory (-o DIR)");
	if (check_write_paths(&o, err, sizeof(err)))
		return usage_error("convert", "%s", err);
	huge_heap_threads(o.jobs ? o.jobs : usable_cpus());
	if (s3_is_url(o.out_dir) && (ret = open_bucket(&o)) >= 0)
		return ret;
	install_log();
	if (by_id) {
		ret = run_by_build_id(&o);
		publish_close(o.bucket, NULL);
		return ret;
	}
	if ((ret = stdin_input(argv + optind, (size_t)(argc - optind), err, sizeof(err)))) {
		publish_close(o.bucket, NULL);
		if (ret == -1)
			return usage_error("convert", "%s", err);
		error(NULL, "%s", err);
		return EXIT_FAILED;
	}
	if (oci_dir_inputs(argv + optind, (size_t)(argc - optind), err, sizeof(err))) {
		publish_close(o.bucket, NULL);
		error(NULL, "%s", err);
		return EXIT_FAILED;
	}
	ret = batch_run(&o, argv + optind, (size_t)(argc - optind));
	publish_close(o.bucket, NULL);
	return ret;
}
