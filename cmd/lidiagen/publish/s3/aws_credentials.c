/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The credentials, from the first source that has them, in the AWS chain's
 * order: the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 * AWS_SESSION_TOKEN); else the profile's keys, in the credentials file
 * first, then in the config file (a profile that gets them another way,
 * by a role, SSO or a process, is refused); else the instance's role, from
 * the instance metadata service (imds.c) unless AWS_EC2_METADATA_DISABLED.
 * They are checked, copied once into the config, and never put in a
 * message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_credentials.h"
#include "aws_util.h"
#include "imds.h"

/* A credential goes into signatures and a header: visible ASCII only. */
static bool credential_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* Copies of the three into c->creds, checked; never their values in a message. */
static int creds_set(struct load *ld, const char *access, const char *secret, const char *token,
		     const char *from)
{
	struct s3_credentials *cr = &ld->c->creds;

	if (!credential_ok(access) || !credential_ok(secret) || (token && !credential_ok(token)))
		return aws_fail(ld, -EINVAL,
				"the AWS credentials from %s have a space or control character",
				from);
	cr->access_key = strdup(access);
	cr->secret_key = strdup(secret);
	cr->session_token = token ? strdup(token) : NULL;
	if (!cr->access_key || !cr->secret_key || (token && !cr->session_token))
		return aws_fail(ld, -ENOMEM, "out of memory");
	return 0;
}

/* 1 when the environment has credentials, 0 when it has none. */
static int creds_from_env(struct load *ld)
{
	const char *access = aws_env("AWS_ACCESS_KEY_ID"),
		   *secret = aws_env("AWS_SECRET_ACCESS_KEY");
	int ret;

	if (!access && !secret)
		return 0;
	if (!access || !secret)
		return aws_fail(ld, -EINVAL, "%s is set without %s",
				access ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
				access ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
	snprintf(ld->c->creds.source, sizeof(ld->c->creds.source), "environment");
	ret = creds_set(ld, access, secret, aws_env("AWS_SESSION_TOKEN"), "the environment");
	return ret ? ret : 1;
}

/* 1 when the profile has keys in f, 0 when it has none. */
static int creds_from_file(struct load *ld, const struct aws_file *f)
{
	const char *access = f->set[SET_ACCESS_KEY], *secret = f->set[SET_SECRET_KEY];
	char q[80], from[PATH_MAX + 96];
	int ret;

	aws_shown(ld->profile, q, sizeof(q));
	snprintf(from, sizeof(from), "profile '%s' in %s", q, f->path);
	if (!access && !secret)
		return 0;
	if (!access || !secret)
		return aws_fail(ld, -EINVAL, "%s: %s without %s", from,
				access ? "aws_access_key_id" : "aws_secret_access_key",
				access ? "aws_secret_access_key" : "aws_access_key_id");
	snprintf(ld->c->creds.source, sizeof(ld->c->creds.source), "profile %.55s", q);
	snprintf(ld->c->creds.where, sizeof(ld->c->creds.where), "in %s", f->path);
	ret = creds_set(ld, access, secret, f->set[SET_SESSION_TOKEN], from);
	return ret ? ret : 1;
}

/* 1 when the profile has keys (the credentials file's first), 0 when it has none. */
static int creds_from_profile(struct load *ld)
{
	char q[80];
	int ret;

	for (int i = 0; i < FILE_COUNT; i++) {
		const char *other = ld->files[i].unsupported;

		if (other)
			return aws_fail(
				ld, -ENOTSUP,
				"AWS profile '%s' gets its credentials by %s, which lidiagen "
				"does not: export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
				"(aws configure export-credentials)",
				aws_shown(ld->profile, q, sizeof(q)), other);
	}
	for (int i = 0; i < FILE_COUNT; i++)
		if ((ret = creds_from_file(ld, &ld->files[i])))
			return ret;
	return 0;
}

/* 1 when the instance's role gave credentials, 0 (and why in why) when not. */
static int creds_from_imds(struct load *ld, char *why, size_t why_size)
{
	struct s3_credentials got = { 0 };
	int ret;

	if (aws_is_true(getenv("AWS_EC2_METADATA_DISABLED"))) {
		snprintf(why, why_size, "disabled by AWS_EC2_METADATA_DISABLED");
		return 0;
	}
	if (imds_credentials(&got, why, why_size))
		return 0;
	snprintf(ld->c->creds.source, sizeof(ld->c->creds.source), "instance metadata");
	snprintf(ld->c->creds.where, sizeof(ld->c->creds.where), "%s", got.where);
	ret = creds_set(ld, got.access_key, got.secret_key, got.session_token,
			"the instance metadata service");
	aws_free_secret(got.access_key);
	aws_free_secret(got.secret_key);
	aws_free_secret(got.session_token);
	return ret ? ret : 1;
}

int aws_find_credentials(struct load *ld)
{
	char why[256], q[80];
	int ret;

	if ((ret = creds_from_env(ld)) || (ret = creds_from_profile(ld)) ||
	    (ret = creds_from_imds(ld, why, sizeof(why))))
		return ret < 0 ? ret : 0;
	return aws_fail(ld, -ENOKEY,
			"none found: not in the environment (AWS_ACCESS_KEY_ID), nor for profile "
			"'%s' in '%s' or '%s', nor from the instance metadata service (%s)",
			aws_shown(ld->profile, q, sizeof(q)), ld->files[FILE_CREDENTIALS].path,
			ld->files[FILE_CONFIG].path, why);
}
