/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the files of s3_config_load share: one load (struct load), the two
 * AWS files read for it (struct aws_file) and the profile's settings they
 * hold (enum setting). Each file's functions are in its own header; calls
 * go down this tree only, never back up:
 *
 *   aws_config.c         the order of things; region, endpoint, retries
 *     aws_url.c            s3://BUCKET[/PREFIX]
 *     aws_files.c          the profile, and its two files found and read
 *       aws_ini.c            their INI dialect: the profile's settings
 *     aws_credentials.c    the chain: environment, roles (sts.c), profiles
 *                          (a source_profile loaded by aws_files.c),
 *                          process.c, container.c, imds.c
 *   aws_util.c           (under all) messages, the environment, secrets
 */
#ifndef LIDIAGEN_AWS_LOAD_H
#define LIDIAGEN_AWS_LOAD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "s3.h"

/*
 * The settings taken from a profile: keys at its top, two of its "s3 ="
 * block and one of its "sts =" block; the keys of credential sources too,
 * so that the chain (aws_credentials.c) can take them in the AWS order.
 */
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
	SET_STS_ENDPOINT_URL,
	SET_ROLE_ARN,
	SET_WEB_IDENTITY_TOKEN_FILE,
	SET_ROLE_SESSION_NAME,
	SET_SOURCE_PROFILE,
	SET_CREDENTIAL_SOURCE,
	SET_SSO_SESSION,
	SET_SSO_START_URL,
	SET_CREDENTIAL_PROCESS,
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

#endif
