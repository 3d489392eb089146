/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where s3_config_load finds things (cmd/lidiagen/publish/s3/aws_config.c), chain
 * by chain, with the environment and the AWS files of a temporary home:
 * s3://BUCKET/PREFIX and its errors; credentials from the environment,
 * the credentials file, the config file, and their order; the INI dialect
 * (comments, spacing, case, the "s3 =" block) and bad files; region,
 * endpoint, addressing style, retries; that no error ever holds a secret;
 * and keys and URLs (s3_url.c). Every case sets AWS_EC2_METADATA_DISABLED
 * but one, which points the metadata service at a closed port of
 * 127.0.0.1: no test sends anything to 169.254.169.254 (the service itself
 * is tested against a fake one by tests/t_*.sh).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aws_json.h"
#include "process.h"
#include "s3.h"
#include "unit.h"

#define ACCESS "AKIAIOSFODNN7EXAMPLE"
#define SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzSECRETz"
#define TOKEN "FwoGZXIvYXdzEJr//////////wEaDzTOKENz"
#define ACCESS2 "AKIAOTHERKEY00000002"
#define SECRET2 "s3cr3tFromTheConfigFile/zSECRET2z"

static const char *const vars[] = {
	"AWS_ACCESS_KEY_ID",
	"AWS_SECRET_ACCESS_KEY",
	"AWS_SESSION_TOKEN",
	"AWS_PROFILE",
	"AWS_SHARED_CREDENTIALS_FILE",
	"AWS_CONFIG_FILE",
	"AWS_REGION",
	"AWS_DEFAULT_REGION",
	"AWS_ENDPOINT_URL",
	"AWS_ENDPOINT_URL_S3",
	"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
	"AWS_MAX_ATTEMPTS",
	"LIDIAGEN_S3_TIMEOUT",
	"AWS_EC2_METADATA_SERVICE_ENDPOINT",
	"AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
	"AWS_METADATA_SERVICE_TIMEOUT",
	"AWS_METADATA_SERVICE_NUM_ATTEMPTS",
	"AWS_ENDPOINT_URL_STS",
	"AWS_WEB_IDENTITY_TOKEN_FILE",
	"AWS_ROLE_ARN",
	"AWS_ROLE_SESSION_NAME",
	"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
	"AWS_CONTAINER_CREDENTIALS_FULL_URI",
	"AWS_CONTAINER_AUTHORIZATION_TOKEN",
	"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
	"LIDIAGEN_CREDENTIAL_PROCESS_TIMEOUT",
};

/* The temporary home, and its two files (named by the variables). */
static char home[] = "/tmp/lidia-test-aws-XXXXXX";
static char creds_path[64], config_path[64];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		abort();
}

/* Nothing set but the home, the files' variables, and no instance metadata. */
static void env_reset(void)
{
	for (size_t i = 0; i < sizeof(vars) / sizeof(*vars); i++)
		unsetenv(vars[i]);
	setenv("HOME", home, 1);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", creds_path, 1);
	setenv("AWS_CONFIG_FILE", config_path, 1);
	unlink(creds_path);
	unlink(config_path);
}

static void env_keys(void)
{
	setenv("AWS_ACCESS_KEY_ID", ACCESS, 1);
	setenv("AWS_SECRET_ACCESS_KEY", SECRET, 1);
}

/* Whether msg holds any secret of the tests, or a good piece of one. */
static bool has_secret(const char *msg)
{
	static const char *const secrets[] = { SECRET, TOKEN, SECRET2, "zSECRET", "zTOKENz" };

	for (size_t i = 0; i < sizeof(secrets) / sizeof(*secrets); i++)
		if (strstr(msg, secrets[i]))
			return true;
	return false;
}

/* s3_config_load fails with code and a one-line message holding want, and no secret. */
static void expect_fail(const char *url, const struct s3_overrides *ov, int code, const char *want,
			const char *what)
{
	struct s3_config c;
	char err[512] = "";
	int ret = s3_config_load(&c, url, ov, err, sizeof(err));

	CHECK(ret == code && strstr(err, want) && !strchr(err, '\n') && !has_secret(err) &&
		      !c.bucket && !c.creds.secret_key,
	      "%s: %d, '%s'", what, ret, err);
	s3_config_free(&c); /* harmless after a failure */
}

/* s3_config_load succeeds; c is the caller's to free. */
static bool load_ok(struct s3_config *c, const char *url, const struct s3_overrides *ov)
{
	char err[512] = "";
	int ret = s3_config_load(c, url, ov, err, sizeof(err));

	if (ret)
		printf("# s3_config_load(%s): %d, '%s'\n", url, ret, err);
	return ret == 0;
}

static bool str_is(const char *s, const char *want)
{
	return want ? s && !strcmp(s, want) : !s;
}

/* ---- s3://BUCKET[/PREFIX] ---- */

static void url_detect(void)
{
	CHECK(s3_is_url("s3://b") && s3_is_url("s3://") && !s3_is_url("S3://b") &&
		      !s3_is_url("out/dir") && !s3_is_url("s3:/b") && !s3_is_url(NULL),
	      "s3_is_url: s3:// only");
}

static void url_good(void)
{
	bool ok;
	static const struct {
		const char *url, *bucket, *prefix;
	} cases[] = {
		{ "s3://abc", "abc", "" },
		{ "s3://abc/", "abc", "" },
		{ "s3://my-bucket.v2/a", "my-bucket.v2", "a" },
		{ "s3://bucket/a/b/c", "bucket", "a/b/c" },
		{ "s3://bucket/a/b//", "bucket", "a/b" },
		{ "s3://bucket/.hidden/x..y/...", "bucket", ".hidden/x..y/..." },
		{ "s3://123/a b+c", "123", "a b+c" },
		{ "s3://1.2.3/x", "1.2.3", "x" },
	};
	char name[64];

	env_reset();
	env_keys();
	memset(name, 'b', 63);
	name[63] = '\0';
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct s3_config c;

		ok = load_ok(&c, cases[i].url, NULL);

		CHECK(ok && str_is(c.bucket, cases[i].bucket) && str_is(c.prefix, cases[i].prefix),
		      "url '%s': bucket '%s', prefix '%s'", cases[i].url, cases[i].bucket,
		      cases[i].prefix);
		s3_config_free(&c);
	}
	{
		struct s3_config c;
		char url[128];

		snprintf(url, sizeof(url), "s3://%s", name);
		ok = load_ok(&c, url, NULL) && strlen(c.bucket) == 63;
		CHECK(ok, "url: a 63-character bucket name");
		s3_config_free(&c);
	}
}

static void url_bad(void)
{
	bool ok;
	static const struct {
		const char *url, *want;
	} cases[] = {
		{ "http://bucket/x", "not an s3://" },
		{ "s3://", "3 to 63" },
		{ "s3:///x", "3 to 63" },
		{ "s3://ab", "3 to 63" },
		{ "s3://Bucket", "only a-z" },
		{ "s3://buck_et", "only a-z" },
		{ "s3://bucket?x=1", "only a-z" },
		{ "s3://-bucket", "starts and ends" },
		{ "s3://bucket-/x", "starts and ends" },
		{ "s3://.bucket", "starts and ends" },
		{ "s3://a..b", "no '..'" },
		{ "s3://192.168.1.2/x", "IP address" },
		{ "s3://bucket/a//b", "empty segment" },
		{ "s3://bucket//a/b", "empty segment" },
		{ "s3://bucket/./b", "'.' or '..' segment" },
		{ "s3://bucket/a/..", "'.' or '..' segment" },
		{ "s3://bucket/a/../b/", "'.' or '..' segment" },
		{ "s3://bucket/a\tb", "control character" },
	};
	char url[700], what[64];

	env_reset();
	env_keys();
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		snprintf(what, sizeof(what), "url %zu refused", i);
		expect_fail(cases[i].url, NULL, -EINVAL, cases[i].want, what);
	}
	snprintf(url, sizeof(url), "s3://%064d", 0);
	expect_fail(url, NULL, -EINVAL, "3 to 63", "url: a 64-character bucket name");
	snprintf(url, sizeof(url), "s3://bucket/%0512d/", 0);
	{
		struct s3_config c;

		ok = load_ok(&c, url, NULL) && strlen(c.prefix) == 512;
		CHECK(ok, "url: a 512-byte prefix (with its trailing '/')");
		s3_config_free(&c);
	}
	snprintf(url, sizeof(url), "s3://bucket/%0513d", 0);
	expect_fail(url, NULL, -EINVAL, "longer than 512", "url: a 513-byte prefix");
}

/* ---- credentials ---- */

/* Loads s3://bucket; whether the credentials are these, from source. */
static bool creds_are(const struct s3_overrides *ov, const char *access, const char *secret,
		      const char *token, const char *source)
{
	struct s3_config c;
	bool ok = load_ok(&c, "s3://bucket", ov);

	ok = ok && str_is(c.creds.access_key, access) && str_is(c.creds.secret_key, secret) &&
	     str_is(c.creds.session_token, token) && !strcmp(c.creds.source, source);
	if (!ok && c.creds.access_key)
		printf("# got %s from '%s'\n", c.creds.access_key, c.creds.source);
	s3_config_free(&c);
	return ok;
}

static void creds_env(void)
{
	bool ok;
	env_reset();
	write_file(creds_path, "[default]\naws_access_key_id = " ACCESS2
			       "\naws_secret_access_key = " SECRET2 "\n");
	env_keys();
	ok = creds_are(NULL, ACCESS, SECRET, NULL, "environment");
	CHECK(ok, "credentials: the environment's, before the profile's");
	setenv("AWS_SESSION_TOKEN", TOKEN, 1);
	ok = creds_are(NULL, ACCESS, SECRET, TOKEN, "environment");
	CHECK(ok, "credentials: AWS_SESSION_TOKEN with them");
	setenv("AWS_SESSION_TOKEN", "", 1);
	ok = creds_are(NULL, ACCESS, SECRET, NULL, "environment");
	CHECK(ok, "credentials: an empty AWS_SESSION_TOKEN is none");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	expect_fail("s3://bucket", NULL, -EINVAL, "AWS_ACCESS_KEY_ID is set without",
		    "credentials: AWS_ACCESS_KEY_ID alone is an error");
	unsetenv("AWS_ACCESS_KEY_ID");
	setenv("AWS_SECRET_ACCESS_KEY", SECRET, 1);
	expect_fail("s3://bucket", NULL, -EINVAL, "AWS_SECRET_ACCESS_KEY is set without",
		    "credentials: AWS_SECRET_ACCESS_KEY alone is an error");
	env_keys();
	setenv("AWS_SESSION_TOKEN", TOKEN "\r\nX-Evil: 1", 1);
	expect_fail("s3://bucket", NULL, -EINVAL, "control character",
		    "credentials: a token with CR LF is refused, unquoted");
	setenv("AWS_SESSION_TOKEN", TOKEN, 1);
	setenv("AWS_SECRET_ACCESS_KEY", SECRET " x", 1);
	expect_fail("s3://bucket", NULL, -EINVAL, "from the environment",
		    "credentials: a secret with a space is refused, unquoted");
}

static const char creds_file[] = "[default]\n"
				 "aws_access_key_id = " ACCESS "\n"
				 "aws_secret_access_key = " SECRET "\n"
				 "aws_session_token = " TOKEN "\n"
				 "[ci]\n"
				 "aws_access_key_id = " ACCESS2 "\n"
				 "aws_secret_access_key = " SECRET2 "\n";

static void creds_profile(void)
{
	bool ok;
	const struct s3_overrides ci = { .profile = "ci" }, other = { .profile = "other" };

	env_reset();
	write_file(creds_path, creds_file);
	ok = creds_are(NULL, ACCESS, SECRET, TOKEN, "profile default");
	CHECK(ok, "credentials: the credentials file's [default]");
	setenv("AWS_PROFILE", "ci", 1);
	ok = creds_are(NULL, ACCESS2, SECRET2, NULL, "profile ci");
	CHECK(ok, "credentials: AWS_PROFILE picks [ci]");
	setenv("AWS_PROFILE", "nope", 1);
	ok = creds_are(&ci, ACCESS2, SECRET2, NULL, "profile ci");
	CHECK(ok, "credentials: the profile option before AWS_PROFILE");
	expect_fail("s3://bucket", NULL, -ENOENT, "AWS profile 'nope' is in neither",
		    "credentials: AWS_PROFILE naming no profile is an error");
	unsetenv("AWS_PROFILE");
	expect_fail("s3://bucket", &other, -ENOENT, "'other'",
		    "credentials: the profile option naming no profile is an error");
	env_keys();
	expect_fail("s3://bucket", &other, -ENOENT, creds_path,
		    "credentials: a missing named profile is an error even with keys in the "
		    "environment");
}

static void creds_config_file(void)
{
	bool ok;
	env_reset();
	write_file(config_path,
		   "[default]\naws_access_key_id = " ACCESS "\naws_secret_access_key = " SECRET "\n"
		   "[profile ci]\naws_access_key_id = " ACCESS2 "\naws_secret_access_key = " SECRET2
		   "\n"
		   "[plain]\naws_access_key_id = " ACCESS "\naws_secret_access_key = " SECRET "\n");
	ok = creds_are(NULL, ACCESS, SECRET, NULL, "profile default");
	CHECK(ok, "credentials: the config file's [default]");
	setenv("AWS_PROFILE", "ci", 1);
	ok = creds_are(NULL, ACCESS2, SECRET2, NULL, "profile ci");
	CHECK(ok, "credentials: the config file's [profile ci]");
	setenv("AWS_PROFILE", "plain", 1);
	expect_fail("s3://bucket", NULL, -ENOENT, "'plain'",
		    "credentials: [plain] in the config file is not a profile");
	write_file(creds_path,
		   "[ci]\naws_access_key_id=" ACCESS "\naws_secret_access_key=" SECRET "\n");
	setenv("AWS_PROFILE", "ci", 1);
	ok = creds_are(NULL, ACCESS, SECRET, NULL, "profile ci");
	CHECK(ok, "credentials: the credentials file before the config file");
	write_file(config_path, "[profile default]\naws_access_key_id = " ACCESS2
				"\naws_secret_access_key = " SECRET2 "\n");
	unsetenv("AWS_PROFILE");
	ok = creds_are(NULL, ACCESS2, SECRET2, NULL, "profile default");
	CHECK(ok, "credentials: [profile default] in the config file");
}

static void creds_none(void)
{
	struct s3_config c;
	char err[1024] = "";
	int ret;

	env_reset();
	write_file(config_path, "[default]\nregion = eu-west-1\n");
	ret = s3_config_load(&c, "s3://bucket", NULL, err, sizeof(err));
	CHECK(ret == -ENOKEY && strstr(err, "AWS_ACCESS_KEY_ID") && strstr(err, "'default'") &&
		      strstr(err, creds_path) && strstr(err, config_path) &&
		      strstr(err, "disabled by AWS_EC2_METADATA_DISABLED") && !strchr(err, '\n'),
	      "credentials: none found: -ENOKEY naming each place: '%s'", err);
	s3_config_free(&c);
	setenv("AWS_EC2_METADATA_DISABLED", "TRUE", 1);
	expect_fail("s3://bucket", NULL, -ENOKEY, "disabled by AWS_EC2_METADATA_DISABLED",
		    "credentials: AWS_EC2_METADATA_DISABLED=TRUE (any case)");
	/* The metadata service tried, at a closed port of this host: refused at once. */
	unsetenv("AWS_EC2_METADATA_DISABLED");
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1/", 1);
	expect_fail("s3://bucket", NULL, -ENOKEY, "(http://127.0.0.1:1: ",
		    "credentials: the metadata service unreachable: its reason in the message");
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", "ftp://127.0.0.1:1", 1);
	expect_fail("s3://bucket", NULL, -ENOKEY, "AWS_EC2_METADATA_SERVICE_ENDPOINT",
		    "credentials: a metadata endpoint not http is refused");
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
}

static void creds_refused(void)
{
	env_reset();
	write_file(creds_path, "[default]\naws_access_key_id = " ACCESS "\n");
	expect_fail("s3://bucket", NULL, -EINVAL, "aws_access_key_id without aws_secret_access_key",
		    "credentials: a profile with half the keys is an error");
	write_file(creds_path, "[default]\naws_secret_access_key = " SECRET "\n");
	expect_fail("s3://bucket", NULL, -EINVAL, "aws_secret_access_key without",
		    "credentials: a profile with only the secret is an error");
	write_file(creds_path, "[default]\naws_access_key_id = " ACCESS
			       "\naws_secret_access_key = " SECRET "\x01\n");
	expect_fail("s3://bucket", NULL, -EINVAL, "control character",
		    "credentials: a secret with a control character, unquoted");
	unlink(creds_path);
	write_file(config_path,
		   "[profile prod]\nrole_arn = arn:aws:iam::1:role/x\nsource_profile = default\n");
	setenv("AWS_PROFILE", "prod", 1);
	expect_fail("s3://bucket", NULL, -ENOENT, "AWS profile 'default' is in neither",
		    "credentials: a role whose source_profile does not exist: said so");
	write_file(config_path, "[profile prod]\nsso_session = corp\n");
	expect_fail("s3://bucket", NULL, -ENOTSUP, "by sso_session",
		    "credentials: a profile with SSO is refused by name");
}

/* ---- the files ---- */

static void ini_dialect(void)
{
	bool ok;
	env_reset();
	write_file(creds_path, "# a comment\n"
			       "; another\n"
			       "\n"
			       "[other]\r\n"
			       "aws_access_key_id = " ACCESS2 "\r\n"
			       "  [ ci ]   # spaced, and a comment\r\n"
			       "[  ci  ] ; spaced\r\n"
			       "\tAWS_Access_Key_ID\t=\t" ACCESS "  # trailing comment\r\n"
			       "  # an indented comment\r\n"
			       "Aws_Secret_Access_Key=" SECRET ";not#a-comment\r\n");
	setenv("AWS_PROFILE", "ci", 1);
	ok = creds_are(NULL, ACCESS, SECRET ";not#a-comment", NULL, "profile ci");
	CHECK(ok, "ini: comments, CRLF, spacing, case-insensitive keys");
	write_file(creds_path, "");
	write_file(config_path, "[profile    ci  ]\n"
				"region=ap-south-1\n"
				"aws_access_key_id = " ACCESS "\n"
				"aws_secret_access_key = " SECRET "\n");
	{
		struct s3_config c;

		ok = load_ok(&c, "s3://bucket", NULL) && str_is(c.region, "ap-south-1") &&
		     str_is(c.creds.access_key, ACCESS);
		CHECK(ok, "ini: '[profile    ci  ]' is profile ci");
		s3_config_free(&c);
	}
}

static void ini_bad_lines(void)
{
	env_reset();
	env_keys();
	write_file(creds_path, "[default]\n" SECRET "\n");
	expect_fail("s3://bucket", NULL, -EINVAL, ":2: expected 'name = value'",
		    "ini: a line without '=': its file and line, never its text");
	write_file(creds_path, "aws_secret_access_key = " SECRET "\n");
	expect_fail("s3://bucket", NULL, -EINVAL, ":1: a setting before any [section]",
		    "ini: a setting before any section");
	write_file(creds_path, "[default\n");
	expect_fail("s3://bucket", NULL, -EINVAL, ":1: a section's name",
		    "ini: a section without ']'");
	write_file(creds_path, "[default] x\n");
	expect_fail("s3://bucket", NULL, -EINVAL, ":1: a section's name",
		    "ini: text after a section's ']'");
	write_file(creds_path, "[default]\n = " SECRET "\n");
	expect_fail("s3://bucket", NULL, -EINVAL, ":2: a setting without a name",
		    "ini: a setting without a name");
}

static void ini_bad_files(void)
{
	bool ok;
	char *big = malloc((1 << 20) + 2);

	env_reset();
	env_keys();
	mkdir(creds_path, 0700);
	expect_fail("s3://bucket", NULL, -EISDIR, creds_path,
		    "ini: a file that cannot be read is an error naming it");
	rmdir(creds_path);
	memset(big, '#', (1 << 20) + 1);
	big[(1 << 20) - 1] = '\n';
	big[1 << 20] = '\0';
	write_file(config_path, big);
	{
		struct s3_config c;

		ok = load_ok(&c, "s3://bucket", NULL);
		CHECK(ok, "ini: a file of 1 MiB is read");
		s3_config_free(&c);
	}
	big[1 << 20] = '#';
	big[(1 << 20) + 1] = '\0';
	write_file(config_path, big);
	expect_fail("s3://bucket", NULL, -EFBIG, config_path,
		    "ini: a file larger than 1 MiB is an error naming it");
	free(big);
	{
		FILE *f = fopen(config_path, "w");

		fwrite("[default]\n\0x=1\n", 1, 15, f);
		fclose(f);
	}
	expect_fail("s3://bucket", NULL, -EINVAL, "NUL byte", "ini: a NUL byte is refused");
}

static void file_places(void)
{
	bool ok;
	char dir[128], path[160];

	env_reset();
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
	unsetenv("AWS_CONFIG_FILE");
	snprintf(dir, sizeof(dir), "%s/.aws", home);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/credentials", dir);
	write_file(path, creds_file);
	ok = creds_are(NULL, ACCESS, SECRET, TOKEN, "profile default");
	CHECK(ok, "files: ~/.aws/credentials by default");
	unlink(path);
	snprintf(path, sizeof(path), "%s/config", dir);
	write_file(path, "[profile ci]\naws_access_key_id = " ACCESS2
			 "\naws_secret_access_key = " SECRET2 "\n");
	setenv("AWS_PROFILE", "ci", 1);
	ok = creds_are(NULL, ACCESS2, SECRET2, NULL, "profile ci");
	CHECK(ok, "files: ~/.aws/config by default");
	unlink(path);
	rmdir(dir);
	snprintf(path, sizeof(path), "%s/my-creds", home);
	write_file(path, creds_file);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "~/my-creds", 1);
	ok = creds_are(NULL, ACCESS2, SECRET2, NULL, "profile ci");
	CHECK(ok, "files: '~/' in AWS_SHARED_CREDENTIALS_FILE is the home");
	unlink(path);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/dir/credentials", 1);
	env_keys();
	unsetenv("AWS_PROFILE");
	ok = creds_are(NULL, ACCESS, SECRET, NULL, "environment");
	CHECK(ok, "files: missing files are fine");
}

/* ---- region, endpoint, addressing, retries ---- */

static bool region_is(const struct s3_overrides *ov, const char *want)
{
	struct s3_config c;
	bool ok = load_ok(&c, "s3://bucket", ov) && str_is(c.region, want);

	s3_config_free(&c);
	return ok;
}

static void region_chain(void)
{
	bool ok;
	const struct s3_overrides opt = { .region = "ca-central-1" };

	env_reset();
	env_keys();
	ok = region_is(NULL, "us-east-1");
	CHECK(ok, "region: us-east-1 by default");
	write_file(config_path, "[default]\nregion = eu-central-1\n");
	write_file(creds_path, "[default]\nregion = sa-east-1\n");
	ok = region_is(NULL, "eu-central-1");
	CHECK(ok, "region: the config file's, not the credentials'");
	setenv("AWS_DEFAULT_REGION", "eu-west-3", 1);
	ok = region_is(NULL, "eu-west-3");
	CHECK(ok, "region: AWS_DEFAULT_REGION before the profile");
	setenv("AWS_REGION", "us-west-2", 1);
	ok = region_is(NULL, "us-west-2");
	CHECK(ok, "region: AWS_REGION before AWS_DEFAULT_REGION");
	ok = region_is(&opt, "ca-central-1");
	CHECK(ok, "region: the option before all");
	setenv("AWS_REGION", "", 1);
	ok = region_is(NULL, "eu-west-3");
	CHECK(ok, "region: an empty AWS_REGION is none");
	setenv("AWS_REGION", "US-EAST-1", 1);
	expect_fail("s3://bucket", NULL, -EINVAL, "region 'US-EAST-1' (from AWS_REGION)",
		    "region: upper case refused, naming where it came from");
	setenv("AWS_REGION", "us-east-1\nx", 1);
	expect_fail("s3://bucket", NULL, -EINVAL, "region 'us-east-1?x'",
		    "region: a newline refused, shown as '?'");
	setenv("AWS_REGION", "abcdefghij-abcdefghij-abcdefghij1", 1);
	expect_fail("s3://bucket", NULL, -EINVAL, "1 to 32", "region: 33 characters refused");
}

/* Loads url; whether the endpoint and style are these. */
static bool endpoint_is(const char *url, const struct s3_overrides *ov, const char *want,
			bool path_style)
{
	struct s3_config c;
	bool ok = load_ok(&c, url, ov);

	ok = ok && str_is(c.endpoint, want) && c.path_style == path_style;
	if (!ok && c.endpoint)
		printf("# got %s, path style %d\n", c.endpoint, c.path_style);
	s3_config_free(&c);
	return ok;
}

static void endpoint_aws(void)
{
	bool ok;
	const struct s3_overrides path = { .path_style = true };

	env_reset();
	env_keys();
	setenv("AWS_REGION", "eu-west-1", 1);
	ok = endpoint_is("s3://bucket", NULL, "https://s3.eu-west-1.amazonaws.com", false);
	CHECK(ok, "endpoint: AWS's, virtual-hosted, by default");
	ok = endpoint_is("s3://my.bucket", NULL, "https://s3.eu-west-1.amazonaws.com", true);
	CHECK(ok, "endpoint: AWS's with a dotted bucket: path style");
	ok = endpoint_is("s3://bucket", &path, "https://s3.eu-west-1.amazonaws.com", true);
	CHECK(ok, "endpoint: AWS's, path style by the option");
	write_file(config_path, "[default]\ns3 =\n  addressing_style = path\n");
	ok = endpoint_is("s3://bucket", NULL, "https://s3.eu-west-1.amazonaws.com", true);
	CHECK(ok, "endpoint: AWS's, path style by the profile's s3 block");
	write_file(config_path, "[default]\ns3 =\n  addressing_style = auto\n");
	ok = endpoint_is("s3://bucket", NULL, "https://s3.eu-west-1.amazonaws.com", false);
	CHECK(ok, "endpoint: addressing_style = auto is virtual on AWS");
	write_file(config_path, "[default]\ns3 =\n  addressing_style = sideways\n");
	expect_fail("s3://bucket", NULL, -EINVAL, "addressing_style 'sideways'",
		    "endpoint: an unknown addressing_style is an error");
	setenv("AWS_REGION", "cn-north-1", 1);
	unlink(config_path);
	ok = endpoint_is("s3://bucket", NULL, "https://s3.cn-north-1.amazonaws.com.cn", false);
	CHECK(ok, "endpoint: AWS's in China");
}

static void endpoint_chain(void)
{
	bool ok;
	const struct s3_overrides opt = { .endpoint_url = "http://opt:1/" };

	env_reset();
	env_keys();
	write_file(config_path, "[default]\n"
				"endpoint_url = http://top:5\n"
				"dynamodb =\n"
				"  endpoint_url = http://dynamo:6\n"
				"region = us-west-1\n");
	ok = endpoint_is("s3://bucket", NULL, "http://top:5", true);
	CHECK(ok, "endpoint: the profile's endpoint_url (not another service's), path style");
	write_file(config_path, "[default]\n"
				"endpoint_url = http://top:5\n"
				"S3 =\n"
				"  # the S3 block\n"
				"  Endpoint_URL = https://minio.local:9000//\n"
				"\n"
				"  addressing_style = virtual\n");
	ok = endpoint_is("s3://bucket", NULL, "https://minio.local:9000", false);
	CHECK(ok,
	      "endpoint: the s3 block's before the top, trailing '/' cut, virtual by the profile");
	ok = endpoint_is("s3://my.bucket", NULL, "https://minio.local:9000", true);
	CHECK(ok, "endpoint: virtual asked, but a dotted bucket over https: path style");
	setenv("AWS_ENDPOINT_URL", "http://env:3", 1);
	ok = endpoint_is("s3://bucket", NULL, "http://env:3", false);
	CHECK(ok, "endpoint: AWS_ENDPOINT_URL before the profile's");
	unlink(config_path);
	ok = endpoint_is("s3://bucket", NULL, "http://env:3", true);
	CHECK(ok, "endpoint: a custom endpoint is path style");
	setenv("AWS_ENDPOINT_URL_S3", "https://s3env:4/base/", 1);
	ok = endpoint_is("s3://bucket", NULL, "https://s3env:4/base", true);
	CHECK(ok, "endpoint: AWS_ENDPOINT_URL_S3 before AWS_ENDPOINT_URL, with a path");
	ok = endpoint_is("s3://bucket", &opt, "http://opt:1", true);
	CHECK(ok, "endpoint: the option before all");
	setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true", 1);
	setenv("AWS_REGION", "eu-north-1", 1);
	ok = endpoint_is("s3://bucket", NULL, "https://s3.eu-north-1.amazonaws.com", false);
	CHECK(ok, "endpoint: AWS_IGNORE_CONFIGURED_ENDPOINT_URLS ignores the environment's");
	ok = endpoint_is("s3://bucket", &opt, "http://opt:1", true);
	CHECK(ok, "endpoint: ... but not the option's");
}

static void endpoint_bad(void)
{
	static const struct {
		const char *url, *want;
	} cases[] = {
		{ "minio:9000", "http:// or https:// expected" },
		{ "ftp://minio", "http:// or https:// expected" },
		{ "http://", "no host" },
		{ "http:///x", "no host" },
		{ "http://minio:9000/?x", "'?' or '#'" },
		{ "http://mi nio", "a space" },
		{ "http://user:" SECRET "@minio/", "a user or password" },
		{ "http://minio:9000/a@b", "an '@'" },
	};
	char what[64];

	env_reset();
	env_keys();
	/* The last holds the secret as a password: refused, and not quoted. */
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		snprintf(what, sizeof(what), "endpoint %zu refused", i);
		setenv("AWS_ENDPOINT_URL_S3", cases[i].url, 1);
		expect_fail("s3://bucket", NULL, -EINVAL, cases[i].want, what);
	}
}

static void retries(void)
{
	bool ok;
	struct s3_config c;

	env_reset();
	env_keys();
	ok = load_ok(&c, "s3://bucket", NULL) && c.max_attempts == 5 && c.max_retry_seconds == 60 &&
	     c.connect_timeout_ms == 10000 && c.low_speed_seconds == 30;
	CHECK(ok, "retries: 5 attempts in 60 s, 10 s to connect, 30 s stalled, by default");
	s3_config_free(&c);
	write_file(config_path, "[default]\nmax_attempts = 7\n");
	ok = load_ok(&c, "s3://bucket", NULL) && c.max_attempts == 7;
	CHECK(ok, "retries: the profile's max_attempts");
	s3_config_free(&c);
	setenv("AWS_MAX_ATTEMPTS", "1", 1);
	setenv("LIDIAGEN_S3_TIMEOUT", "2", 1);
	ok = load_ok(&c, "s3://bucket", NULL) && c.max_attempts == 1 && c.low_speed_seconds == 2;
	CHECK(ok, "retries: AWS_MAX_ATTEMPTS before the profile; LIDIAGEN_S3_TIMEOUT");
	s3_config_free(&c);
	setenv("AWS_MAX_ATTEMPTS", "20", 1);
	setenv("LIDIAGEN_S3_TIMEOUT", "3600", 1);
	ok = load_ok(&c, "s3://bucket", NULL) && c.max_attempts == 20 &&
	     c.low_speed_seconds == 3600;
	CHECK(ok, "retries: 20 attempts and 3600 s are the most");
	s3_config_free(&c);
	setenv("AWS_MAX_ATTEMPTS", "0", 1);
	expect_fail("s3://bucket", NULL, -EINVAL, "'0' (from AWS_MAX_ATTEMPTS)",
		    "retries: AWS_MAX_ATTEMPTS=0 refused");
	setenv("AWS_MAX_ATTEMPTS", "21", 1);
	expect_fail("s3://bucket", NULL, -EINVAL, "1 to 20",
		    "retries: AWS_MAX_ATTEMPTS=21 refused");
	setenv("AWS_MAX_ATTEMPTS", "99999999999999999999999", 1);
	expect_fail("s3://bucket", NULL, -EINVAL, "1 to 20", "retries: a huge number refused");
	setenv("AWS_MAX_ATTEMPTS", "3x", 1);
	expect_fail("s3://bucket", NULL, -EINVAL, "1 to 20", "retries: '3x' refused");
	unsetenv("AWS_MAX_ATTEMPTS");
	setenv("LIDIAGEN_S3_TIMEOUT", "0", 1);
	expect_fail("s3://bucket", NULL, -EINVAL, "LIDIAGEN_S3_TIMEOUT",
		    "retries: timeout 0 refused");
	setenv("LIDIAGEN_S3_TIMEOUT", "3601", 1);
	expect_fail("s3://bucket", NULL, -EINVAL, "1 to 3600", "retries: timeout 3601 refused");
}

/* ---- keys and URLs ---- */

static void urls(void)
{
	bool ok;
	struct s3_config c = { .bucket = "bkt",
			       .prefix = "",
			       .endpoint = "https://s3.eu-west-1.amazonaws.com" };
	char buf[2048];

	ok = !s3_full_key(&c, "symbolizer/anonymous/ab", buf, sizeof(buf)) &&
	     !strcmp(buf, "symbolizer/anonymous/ab");
	CHECK(ok, "key: without a prefix, the key");
	ok = !s3_object_url(&c, "a/b", buf, sizeof(buf)) &&
	     !strcmp(buf, "https://bkt.s3.eu-west-1.amazonaws.com/a/b");
	CHECK(ok, "url: virtual-hosted: %s", buf);
	ok = !s3_bucket_url(&c, buf, sizeof(buf)) &&
	     !strcmp(buf, "https://bkt.s3.eu-west-1.amazonaws.com");
	CHECK(ok, "url: the bucket's, virtual-hosted: %s", buf);
	c.prefix = "p q/r";
	ok = !s3_full_key(&c, "x", buf, sizeof(buf)) && !strcmp(buf, "p q/r/x");
	CHECK(ok, "key: PREFIX/key");
	c.path_style = true;
	c.endpoint = "http://127.0.0.1:9000/base";
	ok = !s3_object_url(&c, "a+b=c&d%e é~f_g.h-i/j", buf, sizeof(buf)) &&
	     !strcmp(buf, "http://127.0.0.1:9000/base/bkt/p%20q/r/"
			  "a%2Bb%3Dc%26d%25e%20%C3%A9~f_g.h-i/j");
	CHECK(ok, "url: path style, every byte outside A-Za-z0-9-._~/ encoded: %s", buf);
	ok = !s3_bucket_url(&c, buf, sizeof(buf)) && !strcmp(buf, "http://127.0.0.1:9000/base/bkt");
	CHECK(ok, "url: the bucket's, path style: %s", buf);
	c.path_style = false;
	c.endpoint = "http://minio:9000/base";
	ok = !s3_object_url(&c, "k", buf, sizeof(buf)) &&
	     !strcmp(buf, "http://bkt.minio:9000/base/p%20q/r/k");
	CHECK(ok, "url: virtual-hosted with a port and a path: %s", buf);
}

static void key_limits(void)
{
	bool ok;
	struct s3_config c = { .bucket = "bkt",
			       .prefix = "p q/r",
			       .endpoint = "http://minio:9000/base" };
	char buf[2048], key[1100];

	/* "http://bkt.minio:9000/base/p%20q/r/k" is 36 bytes: 37 fit, 36 do not. */
	ok = !s3_object_url(&c, "k", buf, 37) && s3_object_url(&c, "k", buf, 36) == -ENAMETOOLONG &&
	     buf[0] == '\0';
	CHECK(ok, "url: -ENAMETOOLONG when the NUL does not fit, and an empty buffer");
	ok = s3_full_key(&c, "k", buf, 7) == -ENAMETOOLONG && !s3_full_key(&c, "k", buf, 8);
	CHECK(ok, "key: -ENAMETOOLONG when it does not fit");
	ok = s3_full_key(&c, "", buf, sizeof(buf)) == -EINVAL &&
	     s3_object_url(&c, "", buf, sizeof(buf)) == -EINVAL;
	CHECK(ok, "key: an empty key is -EINVAL");
	memset(key, 'k', 1018);
	key[1018] = '\0';
	ok = !s3_full_key(&c, key, buf, sizeof(buf));
	CHECK(ok, "key: 1024 bytes with the prefix");
	key[1018] = 'k';
	key[1019] = '\0';
	ok = s3_full_key(&c, key, buf, sizeof(buf)) == -ENAMETOOLONG &&
	     s3_object_url(&c, key, buf, sizeof(buf)) == -ENAMETOOLONG;
	CHECK(ok, "key: 1025 bytes is more than S3 takes");
}

/* A load's output, from the environment, as the command uses it: end to end. */
static void loaded_url(void)
{
	bool ok;
	struct s3_config c;
	char buf[512];

	env_reset();
	env_keys();
	setenv("AWS_REGION", "us-east-2", 1);
	ok = load_ok(&c, "s3://bucket/ci/", NULL) &&
	     !s3_object_url(&c, "symbolizer/anonymous/f00d", buf, sizeof(buf)) &&
	     !strcmp(buf, "https://bucket.s3.us-east-2.amazonaws.com/ci/symbolizer/"
			  "anonymous/f00d");
	CHECK(ok, "url: of a loaded config: %s", buf);
	s3_config_free(&c);
}

/* -v's description (s3_config_describe) of s3://bucket, loaded; "" when it does not load. */
static void described(char *buf, size_t size)
{
	struct s3_config c;

	buf[0] = '\0';
	if (load_ok(&c, "s3://bucket", NULL))
		s3_config_describe(&c, buf, size);
	s3_config_free(&c);
}

/* Whether s ends with end. */
static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && !strcmp(s + n - m, end);
}

/* A description's lines as "# " lines, when a check of it failed. */
static void show(bool ok, const char *buf)
{
	const char *p = buf;

	while (!ok && *p) {
		size_t n = strcspn(p, "\n");

		printf("# %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

/* What -v says: where each setting came from, a masked key id, never a secret. */
static void describe(void)
{
	char buf[8192], want[256];
	bool ok;

	env_reset();
	env_keys();
	setenv("AWS_SESSION_TOKEN", TOKEN, 1);
	described(buf, sizeof(buf));
	ok = strstr(buf, "endpoint https://s3.us-east-1.amazonaws.com (AWS's, for the region), "
			 "virtual-hosted style (AWS's endpoint)\n") &&
	     strstr(buf, "region us-east-1 (the default)\n") &&
	     strstr(buf, "at most 5 attempts a request (the default)") &&
	     ends_with(buf, "credentials: environment, access key id ****************MPLE, "
			    "with a session token") &&
	     !has_secret(buf) && !strstr(buf, ACCESS);
	show(ok, buf);
	CHECK(ok, "describe: the defaults, and the environment's key id masked");
	env_reset();
	write_file(creds_path, "[ci]\naws_access_key_id = ABCDEFGH1234\n"
			       "aws_secret_access_key = " SECRET2 "\n");
	write_file(config_path, "[profile ci]\nregion = eu-west-1\nmax_attempts = 7\n"
				"s3 =\n  endpoint_url = http://minio:9000\n");
	setenv("AWS_PROFILE", "ci", 1);
	described(buf, sizeof(buf));
	snprintf(want, sizeof(want),
		 "credentials: profile ci in %s, access key id ****************", creds_path);
	ok = strstr(buf, "endpoint http://minio:9000 (from profile 'ci' in ") &&
	     strstr(buf, "path style (a custom endpoint)") &&
	     strstr(buf, "region eu-west-1 (from profile 'ci' in ") &&
	     strstr(buf, "at most 7 attempts a request (from profile 'ci' in ") &&
	     ends_with(buf, want) && !strstr(buf, "1234") && !has_secret(buf);
	show(ok, buf);
	CHECK(ok, "describe: the profile's settings and keys; a short key id, not a character");
}

/* A failure after the URL says what it is about: the bucket's settings, or the credentials. */
static void subjects(void)
{
	env_reset();
	env_keys();
	setenv("AWS_REGION", "Nope", 1);
	expect_fail("s3://bucket/p/", NULL, -EINVAL,
		    "s3://bucket/p: region 'Nope' (from AWS_REGION)",
		    "subject: a bad region is the bucket's");
	unsetenv("AWS_REGION");
	unsetenv("AWS_ACCESS_KEY_ID");
	expect_fail("s3://bucket/p", NULL, -EINVAL,
		    "credentials: AWS_SECRET_ACCESS_KEY is set without",
		    "subject: a lone secret key is the credentials'");
	expect_fail("s3://Bucket", NULL, -EINVAL,
		    "'s3://Bucket': ", "subject: a bad URL quotes the URL, nothing before it");
}

/* STS's endpoint, for the roles: as the AWS CLI picks it (never --endpoint-url). */
static bool sts_is(const struct s3_overrides *ov, const char *want)
{
	struct s3_config c;
	char err[512] = "";
	bool ok = !s3_config_load(&c, "s3://bucket", ov, err, sizeof(err)) && c.sts_endpoint &&
		  !strcmp(c.sts_endpoint, want);

	if (!ok)
		printf("# sts endpoint %s, want %s (%s)\n", c.sts_endpoint ? c.sts_endpoint : "?",
		       want, err);
	s3_config_free(&c);
	return ok;
}

static void sts_endpoint(void)
{
	const struct s3_overrides opt = { .endpoint_url = "http://opt:1" };

	env_reset();
	env_keys();
	setenv("AWS_REGION", "eu-west-3", 1);
	CHECK(sts_is(&opt, "https://sts.eu-west-3.amazonaws.com"),
	      "sts: the regional endpoint; --endpoint-url is S3's only");
	write_file(config_path, "[default]\nendpoint_url = http://top:5\n");
	CHECK(sts_is(NULL, "http://top:5"), "sts: the profile's endpoint_url");
	setenv("AWS_ENDPOINT_URL", "http://env:3", 1);
	CHECK(sts_is(NULL, "http://env:3"), "sts: AWS_ENDPOINT_URL before the profile's");
	write_file(config_path, "[default]\nsts =\n  endpoint_url = http://stsblock:7/\n");
	CHECK(sts_is(NULL, "http://stsblock:7"), "sts: the sts block before AWS_ENDPOINT_URL");
	setenv("AWS_ENDPOINT_URL_STS", "http://stsenv:8", 1);
	CHECK(sts_is(NULL, "http://stsenv:8"), "sts: AWS_ENDPOINT_URL_STS first");
	setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true", 1);
	CHECK(sts_is(NULL, "https://sts.eu-west-3.amazonaws.com"),
	      "sts: AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: the regional one");
	env_reset();
}

/* credential_process's words, as Python's shlex.split gives them. */
static bool split_is(const char *cmd, int n, const char *const *want)
{
	char buf[256], *argv[8];
	int got = process_split(cmd, buf, argv, 8);

	if (got != n)
		return false;
	for (int i = 0; i < n; i++)
		if (strcmp(argv[i], want[i]))
			return false;
	return true;
}

static void process_words(void)
{
	static const char *const a[] = { "/bin/x", "a b", "c'd", "e\\f", "g\"h", "i" };
	static const char *const b[] = { "tool", "--x=1 2", "" };
	time_t t = 0;

	CHECK(split_is("/bin/x 'a b' \"c'd\" e\\\\f \"g\\\"h\" \\i", 6, a),
	      "credential_process: quotes and backslashes as shlex.split");
	CHECK(split_is("  tool\t--x='1 2' ''", 3, b), "credential_process: blanks, an empty word");
	CHECK(process_split("a 'b", (char[8]){ 0 }, (char *[4]){ 0 }, 4) == -EINVAL &&
		      process_split("a\\", (char[8]){ 0 }, (char *[4]){ 0 }, 4) == -EINVAL &&
		      process_split("  ", (char[8]){ 0 }, (char *[4]){ 0 }, 4) == -EINVAL,
	      "credential_process: an unclosed quote, a final backslash, nothing: refused");
	CHECK(!aws_parse_time("2026-12-03T09:00:00Z", &t) && t == 1796288400 &&
		      !aws_parse_time("2026-12-03T09:00:00.123+00:00", &t) && t == 1796288400 &&
		      aws_parse_time("2026-12-03 09:00", &t),
	      "Expiration: ISO 8601 in UTC, fractions allowed; anything else refused");
}

int main(void)
{
	if (!mkdtemp(home))
		return 1;
	snprintf(creds_path, sizeof(creds_path), "%s/credentials", home);
	snprintf(config_path, sizeof(config_path), "%s/config", home);
	url_detect();
	url_good();
	url_bad();
	creds_env();
	creds_profile();
	creds_config_file();
	creds_none();
	creds_refused();
	ini_dialect();
	ini_bad_lines();
	ini_bad_files();
	file_places();
	region_chain();
	endpoint_aws();
	endpoint_chain();
	endpoint_bad();
	retries();
	urls();
	key_limits();
	loaded_url();
	describe();
	subjects();
	sts_endpoint();
	process_words();
	env_reset();
	rmdir(home);
	return unit_exit();
}
