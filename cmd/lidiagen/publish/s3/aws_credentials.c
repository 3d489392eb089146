/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The credentials, from the first source that has them, in the AWS chain's
 * order (botocore's):
 *   the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 *     AWS_SESSION_TOKEN);
 *   the profile's role_arn, assumed (STS's AssumeRole, sts.c) with the
 *     credentials of its source_profile or credential_source;
 *   a web identity (STS's AssumeRoleWithWebIdentity);
 *   SSO (refused: it needs a browser);
 *   the profile's keys in the credentials file;
 *   its credential_process (process.c);
 *   its keys in the config file;
 *   a container's agent (ECS, EKS Pod Identity: container.c);
 *   the instance's role (imds.c), unless AWS_EC2_METADATA_DISABLED.
 * A source named but failing is an error rather than skipped: the next
 * one would be some other identity. The credentials are checked, copied
 * into the config, and never put in a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aws_credentials.h"
#include "aws_files.h"
#include "aws_util.h"
#include "container.h"
#include "imds.h"
#include "process.h"
#include "sts.h"

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
 * role_session_name (botocore takes them one by one so; a source profile's,
 * the profile's only); 1 when they gave credentials, 0 when there is no
 * token file.
 */
static int web_identity(struct load *ld, bool use_env)
{
	const char *file = use_env ? aws_env("AWS_WEB_IDENTITY_TOKEN_FILE") : NULL,
		   *arn = use_env ? aws_env("AWS_ROLE_ARN") : NULL,
		   *name = use_env ? aws_env("AWS_ROLE_SESSION_NAME") : NULL;
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

static int creds_web_identity(struct load *ld)
{
	return web_identity(ld, true);
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
	ret = creds_take(ld, &got, "the instance metadata service");
	return ret ? ret : 1;
}

/* ---- roles assumed with a source's credentials ---- */

#define ROLE_DEPTH_MAX 5 /* source_profile links followed: past that, a loop */

static int creds_assume_role(struct load *ld, int depth);

/*
 * A source profile's credentials, as botocore resolves them: its own role,
 * its web identity (not the environment's), its credential_process, its
 * keys. keys_only: a profile naming itself as its source means its keys.
 */
static int profile_creds(struct load *ld, int depth, bool keys_only)
{
	int ret = 0;

	if (!keys_only && ((ret = creds_assume_role(ld, depth)) ||
			   (ret = web_identity(ld, false)) || (ret = creds_process(ld))))
		return ret;
	if ((ret = creds_from_file(ld, &ld->files[FILE_CREDENTIALS])) ||
	    (ret = creds_from_file(ld, &ld->files[FILE_CONFIG])))
		return ret;
	return 0;
}

/* The credentials of profile name into sc, through a load of its own. */
static int source_profile(struct load *ld, const char *name, struct s3_config *sc, int depth)
{
	const struct s3_overrides ov = { .profile = name };
	struct load *sub = calloc(1, sizeof(*sub));
	char q[80];
	int ret;

	if (!sub)
		return aws_fail(ld, -ENOMEM, "out of memory");
	*sub = (struct load){ .c = sc, .ov = &ov, .err = ld->err, .err_size = ld->err_size };
	ret = aws_profile_load(sub);
	if (!ret)
		ret = profile_creds(sub, depth, !strcmp(name, ld->profile));
	if (!ret)
		ret = aws_fail(ld, -ENOKEY, "source_profile '%s' has no credentials",
			       aws_shown(name, q, sizeof(q)));
	aws_files_release(sub);
	free(sub);
	return ret < 0 ? ret : 0;
}

/* credential_source: Environment, Ec2InstanceMetadata or EcsContainer, into sc. */
static int credential_source(struct load *ld, const char *name, struct s3_config *sc)
{
	struct load sub = *ld;
	char why[256] = "", q[80];
	int ret = -ENOKEY;

	sub.c = sc;
	if (!strcmp(name, "Environment"))
		ret = creds_from_env(&sub);
	else if (!strcmp(name, "EcsContainer"))
		ret = creds_from_container(&sub);
	else if (!strcmp(name, "Ec2InstanceMetadata"))
		ret = creds_from_imds(&sub, why, sizeof(why));
	else
		return aws_fail(ld, -EINVAL,
				"credential_source '%s': Environment, Ec2InstanceMetadata or "
				"EcsContainer expected",
				aws_shown(name, q, sizeof(q)));
	if (!ret)
		ret = aws_fail(ld, -ENOKEY, "credential_source %s gave no credentials%s%s", name,
			       *why ? ": " : "", why);
	return ret < 0 ? ret : 0;
}

/* AssumeRole signed with sc's credentials; into ld->c->creds. */
static int assume_with(struct load *ld, const char *arn, const struct s3_config *sc,
		       const char *via)
{
	struct s3_credentials got = { 0 };
	struct sts_call call = { .endpoint = ld->c->sts_endpoint,
				 .region = ld->c->region,
				 .role_arn = arn,
				 .source = &sc->creds };
	char sess[80], why[512], q[200];
	int ret;

	session_name(profile_key(ld, SET_ROLE_SESSION_NAME), sess, sizeof(sess));
	call.session_name = sess;
	if ((ret = sts_assume(&call, &got, why, sizeof(why))))
		return aws_fail(ld, ret, "assume role (%s): %s", via, why);
	snprintf(ld->c->creds.source, sizeof(ld->c->creds.source), "assume role");
	snprintf(ld->c->creds.where, sizeof(ld->c->creds.where), "(role %s with %s, from %s)",
		 aws_shown(arn, q, sizeof(q)), via, ld->c->sts_endpoint);
	ret = creds_take(ld, &got, "STS");
	return ret ? ret : 1;
}

/*
 * The profile's role_arn with source_profile or credential_source: the
 * source's credentials found, then AssumeRole signed with them. 1 when it
 * gave credentials, 0 when the profile names no such role.
 */
static int creds_assume_role(struct load *ld, int depth)
{
	const char *arn = profile_key(ld, SET_ROLE_ARN), *src = profile_key(ld, SET_SOURCE_PROFILE),
		   *cs = profile_key(ld, SET_CREDENTIAL_SOURCE);
	struct s3_config sc = { .region = ld->c->region, .sts_endpoint = ld->c->sts_endpoint };
	char via[120], q[80];
	int ret;

	if (!arn || (!src && !cs))
		return 0;
	if (src && cs)
		return aws_fail(ld, -EINVAL,
				"AWS profile '%s': both source_profile and "
				"credential_source",
				aws_shown(ld->profile, q, sizeof(q)));
	if (depth >= ROLE_DEPTH_MAX)
		return aws_fail(ld, -ELOOP,
				"source_profile: more than %d roles in a chain (a loop?)",
				ROLE_DEPTH_MAX);
	ret = src ? source_profile(ld, src, &sc, depth + 1) : credential_source(ld, cs, &sc);
	snprintf(via, sizeof(via), "%s %s", src ? "source_profile" : "credential_source",
		 aws_shown(src ? src : cs, q, sizeof(q)));
	if (!ret)
		ret = assume_with(ld, arn, &sc, via);
	aws_free_secret(sc.creds.access_key);
	aws_free_secret(sc.creds.secret_key);
	aws_free_secret(sc.creds.session_token);
	return ret;
}

int aws_find_credentials(struct load *ld)
{
	char why[256], q[80];
	int ret;

	/* The AWS CLI's order (botocore's credentials.py). */
	if ((ret = creds_from_env(ld)) || (ret = creds_assume_role(ld, 0)) ||
	    (ret = creds_web_identity(ld)) || (ret = creds_sso(ld)) ||
	    (ret = creds_from_file(ld, &ld->files[FILE_CREDENTIALS])) ||
	    (ret = creds_process(ld)) || (ret = creds_from_file(ld, &ld->files[FILE_CONFIG])) ||
	    (ret = creds_from_container(ld)) || (ret = creds_from_imds(ld, why, sizeof(why))))
		return ret < 0 ? ret : 0;
	return aws_fail(ld, -ENOKEY,
			"none found: not in the environment (AWS_ACCESS_KEY_ID, "
			"AWS_WEB_IDENTITY_TOKEN_FILE, AWS_CONTAINER_CREDENTIALS_FULL_URI or "
			"_RELATIVE_URI), nor for profile '%s' in '%s' or '%s', nor from the "
			"instance metadata service (%s)",
			aws_shown(ld->profile, q, sizeof(q)), ld->files[FILE_CREDENTIALS].path,
			ld->files[FILE_CONFIG].path, why);
}
