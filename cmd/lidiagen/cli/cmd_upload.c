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

static const char usage_text[] =
	"usage: lidiagen upload [OPTIONS] DIR s3://BUCKET[/PREFIX]\n"
	"\n"
	"Publish a tree of Lidia files written earlier (by lidiagen -o DIR, or the\n"
	"CMake and Bazel rules) to a bucket, each file at its path under DIR. A key\n"
	"the bucket lacks is uploaded; an object that holds less, or that lidiagen\n"
	"did not write (Pyroscope's own), is replaced; one that holds as much is\n"
	"left. Nothing byte-identical is sent again.\n"
	"\n"
	"Options:\n"
	"      --region NAME         the bucket's region (default: AWS_REGION,\n"
	"                            AWS_DEFAULT_REGION, the profile's, us-east-1)\n"
	"      --endpoint-url URL    an S3-compatible service (default:\n"
	"                            AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's)\n"
	"      --profile NAME        the AWS profile (default: AWS_PROFILE, default)\n"
	"      --path-style          https://HOST/BUCKET/KEY addresses\n"
	"      --connect-timeout SECONDS  give up connecting after SECONDS (default 10;\n"
	"                            as the AWS CLI's cli-connect-timeout)\n"
	"      --read-timeout SECONDS  cut a request that moves no byte for SECONDS\n"
	"                            (default 30; as the AWS CLI's cli-read-timeout)\n"
	"      --force               send every file, whatever the bucket holds\n"
	"      --dry-run             say what would be sent; send nothing\n"
	"      --manifest FILE       JSON Lines: a line per key (status, holds, sha256)\n"
	"  -j, --jobs N              requests at a time (default 8)\n"
	"      --config FILE         read the options above from a YAML file\n"
	"  -q, --quiet               print errors and the summary only\n"
	"  -v, --verbose             the bucket's settings (endpoint, region, where\n"
	"                            the credentials came from), a line per key\n"
	"  -h, --help                show this help\n"
	"\n"
	"Credentials as the AWS CLI finds them: AWS_ACCESS_KEY_ID and\n"
	"AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), the profile's files, or the\n"
	"instance metadata service. See lidiagen(1), PUBLISHING.\n"
	"\n"
	"Exit status: 0 all published (or there already), 1 some key failed,\n"
	"2 usage error (options, the bucket's settings or credentials).\n";

enum {
	OPT_REGION = 1000,
	OPT_ENDPOINT,
	OPT_PROFILE,
	OPT_PATH_STYLE,
	OPT_CONNECT_TIMEOUT,
	OPT_READ_TIMEOUT,
	OPT_FORCE,
	OPT_DRY_RUN,
	OPT_MANIFEST,
	OPT_CONFIG,
};

static const struct option longopts[] = {
	{ "region", required_argument, NULL, OPT_REGION },
	{ "endpoint-url", required_argument, NULL, OPT_ENDPOINT },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "path-style", no_argument, NULL, OPT_PATH_STYLE },
	{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "read-timeout", required_argument, NULL, OPT_READ_TIMEOUT },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "manifest", required_argument, NULL, OPT_MANIFEST },
	{ "jobs", required_argument, NULL, 'j' },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
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

/* SECONDS of --connect-timeout or --read-timeout, 1 to 3600, into *out; -1 or the exit code. */
static int seconds(const char *name, unsigned *out)
{
	char *end;
	unsigned long n = strtoul(optarg, &end, 10);

	if (*end || !*optarg || *optarg == '-' || n < 1 || n > 3600)
		return usage_error("upload", "--%s: '%s' is not a number from 1 to 3600", name,
				   optarg);
	*out = (unsigned)n;
	return -1;
}

/* Apply one option; -1 to go on, else the exit code. */
static int apply(int opt, struct upload_opts *u, struct s3_overrides *s3)
{
	char *end;
	unsigned long n;

	switch (opt) {
	case OPT_REGION:
		s3->region = optarg;
		break;
	case OPT_ENDPOINT:
		s3->endpoint_url = optarg;
		break;
	case OPT_PROFILE:
		s3->profile = optarg;
		break;
	case OPT_PATH_STYLE:
		s3->path_style = true;
		break;
	case OPT_CONNECT_TIMEOUT:
		return seconds("connect-timeout", &s3->connect_timeout);
	case OPT_READ_TIMEOUT:
		return seconds("read-timeout", &s3->read_timeout);
	case OPT_FORCE:
		u->force = true;
		break;
	case OPT_DRY_RUN:
		u->dry_run = true;
		break;
	case OPT_MANIFEST:
		u->manifest = optarg;
		break;
	case OPT_CONFIG:
		break; /* read first */
	case 'q':
		verbosity = 0;
		break;
	case 'v':
		verbosity = 2;
		break;
	case 'h':
		fputs(usage_text, stdout);
		return EXIT_OK;
	case 'j':
		n = strtoul(optarg, &end, 10);
		if (*end || !*optarg || n < 1 || n > 256)
			return usage_error("upload", "--jobs: '%s' is not a number from 1 to 256",
					   optarg);
		u->jobs = (unsigned)n;
		break;
	default:
		return EXIT_USAGE; /* cli_getopt() said why */
	}
	return -1;
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
	int opt, ret;

	if ((ret = read_config(argc, argv, &u, &s3)) >= 0)
		return ret;
	while ((opt = cli_getopt("upload", argc, argv, "j:qvh", longopts)) != -1)
		if ((ret = apply(opt, &u, &s3)) >= 0)
			return ret;
	if (argc - optind != 2)
		return usage_error("upload", "give a directory and s3://BUCKET[/PREFIX]");
	u.dir = argv[optind];
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
