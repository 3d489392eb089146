/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The credentials, from the first source that has them, in the AWS chain's
 * order (botocore's): the environment (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN); the profile's role to
 * assume from a source (refused: not had yet); a web identity
 * (STS's AssumeRoleWithWebIdentity, sts.c); SSO (refused); the profile's keys in the credentials file;
 * its credential_process (process.c); its keys in the config file; a
 * container's agent (ECS, EKS Pod Identity: container.c); the instance's role, from the instance metadata service (imds.c) unless
 * AWS_EC2_METADATA_DISABLED. A source named but not had is refused rather
 * than skipped: the next one would be some other identity.
 * They are checked, copied once into the config, and never put in a
 * message.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_credentials.h"
#include "sts.h"
#include "aws_util.h"
#include "container.h"
#include "imds.h"
#include "process.h"

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

/* A key of the profile: the config file's, else the credentials file's (the CLI merges them). */
static const char *profile_key(const struct load *ld, enum setting s)
{
	const char *v = ld->files[FILE_CONFIG].set[s];

	return v ? v : ld->files[FILE_CREDENTIALS].set[s];
}

/* A source of the AWS chain that lidiagen lacks, named by the profile: refused, not skipped. */
static int refuse(struct load *ld, const char *how)
{
	char q[80];

	return aws_fail(ld, -ENOTSUP,
			"AWS profile '%s' gets its credentials by %s, which lidiagen does not: "
			"export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
			"(aws configure export-credentials)",
			aws_shown(ld->profile, q, sizeof(q)), how);
}

/* The profile's role to assume with another profile's or source's credentials. */
static int creds_assume_role(struct load *ld)
{
	if (!profile_key(ld, SET_ROLE_ARN))
		return 0;
	if (profile_key(ld, SET_SOURCE_PROFILE))
		return refuse(ld, "role_arn with source_profile");
	if (profile_key(ld, SET_CREDENTIAL_SOURCE))
		return refuse(ld, "role_arn with credential_source");
	return 0;
}

static int creds_sso(struct load *ld)
{
	if (profile_key(ld, SET_SSO_SESSION))
		return refuse(ld, "sso_session");
	return profile_key(ld, SET_SSO_START_URL) ? refuse(ld, "sso_start_url") : 0;
}

/* Temporary credentials got from a source into c->creds, got's copies wiped. */
static int creds_take(struct load *ld, struct s3_credentials *got, const char *from)
{
	int ret = creds_set(ld, got->access_key, got->secret_key, got->session_token, from);

	ld->c->creds.expires = got->expires;
	aws_free_secret(got->access_key);
	aws_free_secret(got->secret_key);
	aws_free_secret(got->session_token);
	return ret;
}

/* The web identity token: the file's content, without the line end an editor adds. */
static int read_token(struct load *ld, const char *path, char **out)
{
	enum { TOKEN_MAX = 64 * 1024 }; /* AWS takes 20,000 bytes at most */
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;
	char *buf = calloc(1, TOKEN_MAX + 1), q[160];
	ssize_t n = -1;

	if (fd >= 0 && buf)
		n = read(fd, buf, TOKEN_MAX + 1);
	e = fd < 0 || n < 0 ? errno : !buf ? ENOMEM : n > TOKEN_MAX ? EFBIG : n == 0 ? ENODATA : 0;
	if (fd >= 0)
		close(fd);
	while (!e && n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (!e && n) {
		*out = buf;
		return 0;
	}
	aws_free_secret(buf);
	aws_shown(path, q, sizeof(q));
	return aws_fail(ld, e ? -e : -ENODATA, "web identity: token file '%s': %s", q,
			e == EFBIG ? "larger than 64 KiB"
			: e	   ? strerror(e)
				   : "empty");
}

/* The role's session name: the one given, else one that says who and when, as botocore's. */
static void session_name(const char *given, char *buf, size_t size)
{
	if (given)
		snprintf(buf, size, "%s", given);
	else
		snprintf(buf, size, "lidiagen-%lld", (long long)time(NULL));
}

/*
 * AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN and AWS_ROLE_SESSION_NAME,
 * each else the profile's web_identity_token_file, role_arn,
 * role_session_name (botocore takes them one by one so); 1 when they gave
 * credentials, 0 when there is no token file.
 */
static int creds_web_identity(struct load *ld)
{
	const char *file = aws_env("AWS_WEB_IDENTITY_TOKEN_FILE"), *arn = aws_env("AWS_ROLE_ARN"),
		   *name = aws_env("AWS_ROLE_SESSION_NAME");
	struct s3_credentials got = { 0 };
	struct sts_call call = { .endpoint = ld->c->sts_endpoint, .region = ld->c->region };
	char sess[80], why[512], q[200];
	int ret;

	file = file ? file : profile_key(ld, SET_WEB_IDENTITY_TOKEN_FILE);
	arn = arn ? arn : profile_key(ld, SET_ROLE_ARN);
	name = name ? name : profile_key(ld, SET_ROLE_SESSION_NAME);
	if (!file)
		return 0;
	if (!arn)
		return aws_fail(ld, -EINVAL,
				"web identity: a token file but no role (AWS_ROLE_ARN or the "
				"profile's role_arn)");
	session_name(name, sess, sizeof(sess));
	call.role_arn = arn;
	call.session_name = sess;
	if ((ret = read_token(ld, file, (char **)&call.web_token)))
		return ret;
	ret = sts_assume(&call, &got, why, sizeof(why));
	aws_free_secret((char *)call.web_token);
	if (ret)
		return aws_fail(ld, ret, "web identity: %s", why);
	snprintf(ld->c->creds.source, sizeof(ld->c->creds.source), "web identity");
	snprintf(ld->c->creds.where, sizeof(ld->c->creds.where), "(role %s from %s)",
		 aws_shown(arn, q, sizeof(q)), ld->c->sts_endpoint);
	ret = creds_take(ld, &got, "STS");
	return ret ? ret : 1;
}

/* LIDIAGEN_CREDENTIAL_PROCESS_TIMEOUT: 1 to 3600 seconds, default 60. */
static int process_timeout(struct load *ld, long *out)
{
	const char *v = aws_env("LIDIAGEN_CREDENTIAL_PROCESS_TIMEOUT");
	char *end;

	*out = v ? strtol(v, &end, 10) : 60;
	if (v && (*end || *out < 1 || *out > 3600))
		return aws_fail(ld, -EINVAL,
				"LIDIAGEN_CREDENTIAL_PROCESS_TIMEOUT: 1 to 3600 seconds expected");
	return 0;
}

/* The profile's credential_process: 1 when it gave credentials, 0 when there is none. */
static int creds_process(struct load *ld)
{
	const char *cmd = profile_key(ld, SET_CREDENTIAL_PROCESS);
	struct s3_credentials got = { 0 };
	char why[512], q[80];
	long timeout;
	int ret;

	if (!cmd)
		return 0;
	aws_shown(ld->profile, q, sizeof(q));
	if ((ret = process_timeout(ld, &timeout)))
		return ret;
	if ((ret = process_credentials(cmd, timeout, &got, why, sizeof(why))))
		return aws_fail(ld, ret, "credential_process of profile '%s': %s", q, why);
	snprintf(ld->c->creds.source, sizeof(ld->c->creds.source), "credential_process");
	snprintf(ld->c->creds.where, sizeof(ld->c->creds.where), "(profile %s)", q);
	ret = creds_take(ld, &got, "the credential_process");
	return ret ? ret : 1;
}

/* 1 when a container's agent gave credentials, 0 when none is named. */
static int creds_from_container(struct load *ld)
{
	struct s3_credentials got = { 0 };
	char why[512];
	int ret;

	if (!container_configured())
		return 0;
	if ((ret = container_credentials(&got, why, sizeof(why))))
		return aws_fail(ld, ret, "container credentials: %s", why);
	snprintf(ld->c->creds.source, sizeof(ld->c->creds.source), "container");
	snprintf(ld->c->creds.where, sizeof(ld->c->creds.where), "%s", got.where);
	ret = creds_take(ld, &got, "the container's agent");
	return ret ? ret : 1;
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

	/* The AWS CLI's order (botocore's credentials.py). */
	if ((ret = creds_from_env(ld)) || (ret = creds_assume_role(ld)) ||
	    (ret = creds_web_identity(ld)) || (ret = creds_sso(ld)) ||
	    (ret = creds_from_file(ld, &ld->files[FILE_CREDENTIALS])) ||
	    (ret = creds_process(ld)) || (ret = creds_from_file(ld, &ld->files[FILE_CONFIG])) ||
	    (ret = creds_from_container(ld)) || (ret = creds_from_imds(ld, why, sizeof(why))))
		return ret < 0 ? ret : 0;
	return aws_fail(ld, -ENOKEY,
			"none found: not in the environment (AWS_ACCESS_KEY_ID), nor for profile "
			"'%s' in '%s' or '%s', nor from the instance metadata service (%s)",
			aws_shown(ld->profile, q, sizeof(q)), ld->files[FILE_CREDENTIALS].path,
			ld->files[FILE_CONFIG].path, why);
}
