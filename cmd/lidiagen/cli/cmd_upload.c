/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lidiagen upload DIR s3://BUCKET[/PREFIX]: its options (the S3 ones are
 * convert's, and so are their YAML keys), checked before any work; the
 * publishing itself is upload.c's.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "config.h"
#include "options.h"
#include "upload.h"

static const struct cli_usage upload_usage = {
	.cmd = "upload",
	.synopsis = "usage: lidiagen upload [OPTIONS] DIR s3://BUCKET[/PREFIX]\n",
	.about = "Publish a tree of Lidia files written earlier (by lidiagen -o DIR, or the\n"
		 "CMake and Bazel rules) to a bucket, each file at its path under DIR. A key\n"
		 "the bucket lacks is uploaded; an object that holds less, or that lidiagen\n"
		 "did not write (Pyroscope's own), is replaced; one that holds as much is\n"
		 "left. Nothing byte-identical is sent again.\n",
	.title = "Options:",
	.trailer = "Credentials as the AWS CLI finds them: AWS_ACCESS_KEY_ID and\n"
		   "AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), the profile's files, or the\n"
		   "instance metadata service. See lidiagen(1), PUBLISHING.\n"
		   "\n"
		   "Exit status: 0 all published (or there already), 1 some key failed,\n"
		   "2 usage error (options, the bucket's settings or credentials).\n",
};

/* What the config gave (convert's keys; those upload has no use for are ignored). */
static void from_config(struct upload_opts *u, struct s3_overrides *s3, const struct batch_opts *c)
{
	*s3 = c->s3;
	u->force = c->force;
	u->dry_run = c->dry_run;
	u->manifest = c->manifest;
	if (c->jobs)
		u->jobs = c->jobs;
}

/* arg of option o, a number from lo to hi, into *o->dest (unsigned). -1, or the exit code. */
static int number(const struct cli_opt *o, const char *arg, unsigned long lo, unsigned long hi)
{
	char *end;
	unsigned long n = strtoul(arg, &end, 10);

	if (*end || !*arg || *arg == '-' || n < lo || n > hi)
		return usage_error("upload", "--%s: '%s' is not a number from %lu to %lu", o->name,
				   arg, lo, hi);
	*(unsigned *)o->dest = (unsigned)n;
	return -1;
}

/* --connect-timeout and --read-timeout, as the AWS CLI bounds them; then --jobs. */
static int seconds(const struct cli_opt *o, const char *arg)
{
	return number(o, arg, 1, 3600);
}

static int jobs(const struct cli_opt *o, const char *arg)
{
	return number(o, arg, 1, 256);
}

/* The command line, over what the config gave. Returns -1 to go on, or the exit code. */
static int parse_args(int argc, char **argv, struct upload_opts *u, struct s3_overrides *s3)
{
	const struct cli_opt rows[] = {
		CLI_STRING(0, "region", "NAME", &s3->region,
			   "the bucket's region (default: AWS_REGION,\n"
			   "AWS_DEFAULT_REGION, the profile's, us-east-1)"),
		CLI_STRING(0, "endpoint-url", "URL", &s3->endpoint_url,
			   "an S3-compatible service (default:\n"
			   "AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's)"),
		CLI_STRING(0, "profile", "NAME", &s3->profile,
			   "the AWS profile (default: AWS_PROFILE, default)"),
		CLI_BOOL(0, "path-style", &s3->path_style, "https://HOST/BUCKET/KEY addresses"),
		CLI_CALL(0, "connect-timeout", "SECONDS", seconds, &s3->connect_timeout,
			 "give up connecting after SECONDS (default 10;\n"
			 "as the AWS CLI's cli-connect-timeout)"),
		CLI_CALL(0, "read-timeout", "SECONDS", seconds, &s3->read_timeout,
			 "cut a request that moves no byte for SECONDS\n"
			 "(default 30; as the AWS CLI's cli-read-timeout)"),
		CLI_BOOL(0, "force", &u->force, "send every file, whatever the bucket holds"),
		CLI_BOOL(0, "dry-run", &u->dry_run, "say what would be sent; send nothing"),
		CLI_STRING(0, "manifest", "FILE", &u->manifest,
			   "JSON Lines: a line per key (status, holds, sha256)"),
		CLI_CALL('j', "jobs", "N", jobs, &u->jobs, "requests at a time (default 8)"),
		CLI_EARLY("config", "FILE", "read the options above from a YAML file"),
		CLI_QUIET("print errors and the summary only"),
		CLI_VERBOSE("the bucket's settings (endpoint, region, where\n"
			    "the credentials came from), a line per key"),
	};

	return cli_parse(&upload_usage, rows, CLI_NOPTS(rows), argc, argv);
}

/* --config, read before the command line (which wins). */
static int read_config(int argc, char **argv, struct upload_opts *u, struct s3_overrides *s3)
{
	static struct batch_opts c;
	char err[512];

	for (int i = 1; i < argc - 1; i++) {
		if (strcmp(argv[i], "--config"))
			continue;
		options_defaults(&c);
		if (config_load(&c, argv[i + 1], err, sizeof(err)))
			return usage_error("upload", "%s", err);
		from_config(u, s3, &c);
	}
	return -1;
}

/* The tree must be a directory, and the manifest outside it (it would be published). */
static int check_paths(const struct upload_opts *u)
{
	char dir[PATH_MAX], man[PATH_MAX];
	struct stat st;

	if (stat(u->dir, &st) || !S_ISDIR(st.st_mode))
		return usage_error("upload", "'%s' is not a directory", u->dir);
	if (u->manifest && !stat(u->manifest, &st) && !S_ISREG(st.st_mode))
		return usage_error("upload", "--manifest: '%s' is not a regular file", u->manifest);
	if (u->manifest && realpath(u->dir, dir) && realpath(u->manifest, man) &&
	    !strncmp(man, dir, strlen(dir)) && man[strlen(dir)] == '/')
		return usage_error("upload", "--manifest: '%s' is inside '%s'; put it outside",
				   u->manifest, u->dir);
	return -1;
}

int cmd_upload(int argc, char **argv)
{
	struct upload_opts u = { .jobs = 8 };
	struct s3_overrides s3 = { 0 };
	char err[1024];
	bool usage;
	int ret;

	if ((ret = read_config(argc, argv, &u, &s3)) >= 0 ||
	    (ret = parse_args(argc, argv, &u, &s3)) >= 0)
		return ret;
	if (argc - optind != 2)
		return usage_error("upload", "give a directory and s3://BUCKET[/PREFIX]");
	u.dir = argv[optind];
	if (s3_url_typo(argv[optind + 1], err, sizeof(err)))
		return usage_error("upload", "%s", err);
	if (!s3_is_url(argv[optind + 1]))
		return usage_error("upload", "'%s' is not s3://BUCKET[/PREFIX]", argv[optind + 1]);
	if ((ret = check_paths(&u)) >= 0)
		return ret;
	ignore_sigpipe();
	if (publish_open(&u.bucket, argv[optind + 1], &s3, err, sizeof(err), &usage)) {
		if (usage)
			return usage_error("upload", "%s", err);
		error(NULL, "%s", err);
		return EXIT_FAILED;
	}
	if (verbosity >= 2)
		fprintf(stderr, "lidiagen: publishing %s to %s\n", u.dir, publish_url(u.bucket));
	ret = upload_run(&u);
	publish_close(u.bucket, NULL);
	return ret;
}
