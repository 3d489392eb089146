/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the files of s3_config_load share, and nothing else: one load
 * (struct load), the two AWS files read for it (struct aws_file) and the
 * profile's settings they hold (enum setting), and the functions one file
 * calls in another. Calls go down this tree only, never back up:
 *
 *   aws_config.c         the order of things; region, endpoint, retries
 *     aws_url.c            s3://BUCKET[/PREFIX]
 *     aws_files.c          the profile, and its two files found and read
 *       aws_ini.c            their INI dialect: the profile's settings
 *     aws_credentials.c    the chain: environment, profile, imds.c
 *   aws_util.c           (under all) messages, the environment, secrets
 */
#ifndef LIDIAGEN_AWS_CONFIG_INTERNAL_H
#define LIDIAGEN_AWS_CONFIG_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "s3.h"

/* The settings taken from a profile: keys at its top, and two of its "s3 =" block. */
enum setting {
	SET_ACCESS_KEY,
	SET_SECRET_KEY,
	SET_SESSION_TOKEN,
	SET_REGION,
	SET_ENDPOINT_URL,
	SET_IGNORE_ENDPOINTS,
	SET_MAX_ATTEMPTS,
	SET_S3_ENDPOINT_URL,
	SET_S3_ADDRESSING_STYLE,
	SET_COUNT
};

enum { FILE_CREDENTIALS, FILE_CONFIG, FILE_COUNT };

/* One of the two files, read whole; the values point into buf. */
struct aws_file {
	char path[PATH_MAX]; /* "": no home directory to find it in */
	char *buf;
	size_t len;
	bool found; /* it has a section for the profile */
	const char *set[SET_COUNT];
	const char *unsupported; /* the first key of a source we lack (aws_ini.c) */
};

/* One s3_config_load: what it was given, the files, and where errors go. */
struct load {
	struct s3_config *c;
	const struct s3_overrides *ov;
	const char *profile;
	bool profile_named; /* by the overrides or AWS_PROFILE: it must exist */
	struct aws_file files[FILE_COUNT];
	char in_config[PATH_MAX + 96]; /* "profile 'NAME' in PATH", for messages */
	char *err;
	size_t err_size;
};

/* ---- aws_util.c ---- */

/* One line in ld->err; returns code. */
__attribute__((format(printf, 3, 4))) int aws_fail(struct load *ld, int code, const char *fmt, ...);

/* s cut to fit buf, control characters as '?', for quoting in a one-line message. */
const char *aws_shown(const char *s, char *buf, size_t size);

/* The variable's value; NULL when unset or empty, as CI systems set unused ones empty. */
const char *aws_env(const char *name);

/* Whether v is "true", in any case; NULL is not. */
bool aws_is_true(const char *v);

/* Wipe a secret before it goes back to the allocator; NULL is nothing. */
void aws_free_secret(char *s);

/* ---- aws_url.c ---- */

/* ld->c->bucket and prefix from url, checked by S3's rules; 0 or aws_fail's code. */
int aws_parse_url(struct load *ld, const char *url);

/* ---- aws_files.c ---- */

/*
 * ld->profile (the overrides', AWS_PROFILE or "default"), and ld->files
 * located, read and parsed for it; ld->in_config for messages. 0 or
 * aws_fail's code; either way, aws_files_release afterwards.
 */
int aws_profile_load(struct load *ld);

/* The files' buffers wiped and freed. */
void aws_files_release(struct load *ld);

/* A setting of the profile in the config file (where the AWS tools read settings from). */
const char *aws_profile_setting(const struct load *ld, enum setting s);

/* ---- aws_ini.c ---- */

/* The settings of ld->profile in f (its buffer cut into lines); is_config: the config file. */
int aws_ini_parse(struct load *ld, struct aws_file *f, bool is_config);

/* ---- aws_credentials.c ---- */

/* ld->c->creds from the environment, else the profile, else the instance's role. */
int aws_find_credentials(struct load *ld);

#endif
