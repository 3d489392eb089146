/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Settings and credentials for S3, looked for where the AWS CLI and SDKs
 * look and in their order, so that a CI job set up for `aws s3 cp` needs
 * nothing new (doc/publishing.md). This file holds the order of things
 * (s3_config_load, s3_config_free) and the settings of the connection:
 *
 *  - bucket and prefix: s3://BUCKET[/PREFIX] (aws_url.c);
 *  - the profile (AWS_PROFILE, else "default"), read from
 *    AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials, sections [NAME]) and
 *    AWS_CONFIG_FILE (~/.aws/config, sections [profile NAME] and
 *    [default]) (aws_files.c, aws_ini.c);
 *  - region, endpoint and addressing style: the overrides, then the
 *    environment, then the profile in the config file;
 *  - retries: AWS_MAX_ATTEMPTS or the profile's max_attempts;
 *  - deadlines: --connect-timeout (default 10 s), and --read-timeout, else
 *    LIDIAGEN_S3_TIMEOUT (1 to 3600, default 30): the seconds a transfer
 *    may move nothing before it is cut (the options and YAML keys checked
 *    their ranges);
 *  - libcurl and libexpat, loaded here (curl_load.c, expat_load.c), once
 *    the settings are read and before the instance's role may be asked:
 *    their absence is a problem of the setup, said before any work;
 *  - STS's endpoint, for the roles of the credentials chain;
 *  - credentials: the AWS CLI's chain (aws_credentials.c), and a keeper
 *    that refreshes them when they expire (aws_refresh.c).
 *
 * Secrets are copied once, into the config, and wiped when freed; no
 * message holds one, nor any line of a file, which could be one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws_credentials.h"
#include "aws_files.h"
#include "aws_refresh.h"
#include "aws_url.h"
#include "aws_util.h"
#include "curl_load.h"
#include "expat_load.h"
#include "s3_request.h"

#define REGION_MAX 32
#define ENDPOINT_MAX 1024
#define DEFAULT_REGION "us-east-1"
#define DEFAULT_ATTEMPTS 5
#define ATTEMPTS_MAX 20
#define DEFAULT_RETRY_SECONDS 60.0
#define DEFAULT_CONNECT_MS 10000
#define DEFAULT_LOW_SPEED_SECONDS 30
#define LOW_SPEED_SECONDS_MAX 3600

/* A decimal number in [lo, hi], digits only. */
static bool parse_number(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	unsigned long v = 0;

	if (!*s)
		return false;
	/* hi is small: v * 10 + 9 cannot overflow while v <= hi. */
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > hi)
			return false;
	}
	*out = v;
	return v >= lo;
}

/* ---- region, endpoint, retries ---- */

/* A value and where it came from, for messages. */
struct choice {
	const char *value, *from;
};

/* Where a setting came from, for -v, into *out: "from FROM", or the default's own words. */
static int keep_from(struct load *ld, char **out, const char *from, bool is_default)
{
	if (asprintf(out, "%s%s", is_default ? "" : "from ", from) < 0) {
		*out = NULL;
		return aws_fail(ld, -ENOMEM, "out of memory");
	}
	return 0;
}

/* The first choice with a value, or NULL. */
static const struct choice *first_given(const struct choice *ch, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ch[i].value && *ch[i].value)
			return &ch[i];
	return NULL;
}

static int pick_region(struct load *ld)
{
	const struct choice ch[] = {
		{ ld->ov->region, "the options" },
		{ aws_env("AWS_REGION"), "AWS_REGION" },
		{ aws_env("AWS_DEFAULT_REGION"), "AWS_DEFAULT_REGION" },
		{ aws_profile_setting(ld, SET_REGION), ld->in_config },
		{ DEFAULT_REGION, "the default" },
	};
	size_t count = sizeof(ch) / sizeof(*ch);
	const struct choice *r = first_given(ch, count);
	size_t n = strlen(r->value);
	char q[80];

	if (n > REGION_MAX || strspn(r->value, "abcdefghijklmnopqrstuvwxyz0123456789-") != n)
		return aws_fail(ld, -EINVAL,
				"region '%s' (from %s): 1 to 32 of a-z, 0-9 and '-' expected",
				aws_shown(r->value, q, sizeof(q)), r->from);
	if (!(ld->c->region = strdup(r->value)))
		return aws_fail(ld, -ENOMEM, "out of memory");
	return keep_from(ld, &ld->c->region_from, r->from, r == &ch[count - 1]);
}

/* Why url is not an endpoint (http[s]://host[:port][/path]), or NULL. */
static const char *endpoint_problem(const char *url)
{
	const char *rest;
	size_t host;

	if (strlen(url) > ENDPOINT_MAX)
		return "longer than 1024 bytes";
	if (!strncasecmp(url, "http://", 7))
		rest = url + 7;
	else if (!strncasecmp(url, "https://", 8))
		rest = url + 8;
	else
		return "http:// or https:// expected";
	host = strcspn(rest, "/");
	if (!host)
		return "no host";
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '?' || *p == '#')
			return "a space, control character, '?' or '#' in it";
	/* user:password@ would end up in messages and logs (a password may have a '/'). */
	if (strchr(rest, '@'))
		return "an '@' in it: a user or password has no place there";
	return NULL;
}

/* AWS_IGNORE_CONFIGURED_ENDPOINT_URLS or the profile's: only the options' endpoint counts. */
static bool ignore_configured_endpoints(const struct load *ld)
{
	const char *v = aws_env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");

	return aws_is_true(v ? v : aws_profile_setting(ld, SET_IGNORE_ENDPOINTS));
}

/* The endpoint given, checked and without trailing '/'; NULL and 0 when none is. */
static int given_endpoint(struct load *ld, char **out)
{
	bool ignore = ignore_configured_endpoints(ld);
	const struct choice ch[] = {
		{ ld->ov->endpoint_url, "the options" },
		{ ignore ? NULL : aws_env("AWS_ENDPOINT_URL_S3"), "AWS_ENDPOINT_URL_S3" },
		{ ignore ? NULL : aws_env("AWS_ENDPOINT_URL"), "AWS_ENDPOINT_URL" },
		{ ignore ? NULL : aws_profile_setting(ld, SET_S3_ENDPOINT_URL), ld->in_config },
		{ ignore ? NULL : aws_profile_setting(ld, SET_ENDPOINT_URL), ld->in_config },
	};
	const struct choice *e = first_given(ch, sizeof(ch) / sizeof(*ch));
	const char *why;
	size_t n;
	char q[128];

	*out = NULL;
	if (!e)
		return 0;
	/* Not quoted when it holds '@': what comes before may be a password. */
	if ((why = endpoint_problem(e->value)))
		return aws_fail(ld, -EINVAL, "endpoint URL '%s' (from %s): %s",
				strchr(e->value, '@') ? "..." : aws_shown(e->value, q, sizeof(q)),
				e->from, why);
	for (n = strlen(e->value); e->value[n - 1] == '/'; n--)
		;
	if (!(*out = strndup(e->value, n)))
		return aws_fail(ld, -ENOMEM, "out of memory");
	return keep_from(ld, &ld->c->endpoint_from, e->from, false);
}

/* AWS's regional endpoint: China's regions have their own domain. */
static int aws_endpoint(struct load *ld, char **out)
{
	const char *domain =
		strncmp(ld->c->region, "cn-", 3) ? "amazonaws.com" : "amazonaws.com.cn";

	if (asprintf(out, "https://s3.%s.%s", ld->c->region, domain) < 0) {
		*out = NULL;
		return aws_fail(ld, -ENOMEM, "out of memory");
	}
	return keep_from(ld, &ld->c->endpoint_from, "AWS's, for the region", true);
}

/*
 * Path style when asked for, or when the endpoint is not AWS's (most
 * S3-compatible servers have no DNS per bucket) unless the profile asks
 * for virtual; and whenever a dotted bucket would break the TLS
 * certificate's one-level wildcard.
 */
static int pick_addressing(struct load *ld, bool custom)
{
	const char *style = aws_profile_setting(ld, SET_S3_ADDRESSING_STYLE);
	bool https = !strncasecmp(ld->c->endpoint, "https://", 8);
	char q[80];

	if (style && strcasecmp(style, "path") && strcasecmp(style, "virtual") &&
	    strcasecmp(style, "auto"))
		return aws_fail(ld, -EINVAL,
				"addressing_style '%s' (from %s): path, virtual or auto expected",
				aws_shown(style, q, sizeof(q)), ld->in_config);
	ld->c->path_style = true;
	if (ld->ov->path_style)
		ld->c->addressing_why = "asked for in the options";
	else if (style && !strcasecmp(style, "path"))
		ld->c->addressing_why = "the profile's addressing_style";
	else if (https && strchr(ld->c->bucket, '.'))
		ld->c->addressing_why =
			"a dotted bucket name, which the certificate would not cover";
	else if (custom && !(style && !strcasecmp(style, "virtual")))
		ld->c->addressing_why = "a custom endpoint";
	else
		ld->c->path_style = false;
	if (!ld->c->path_style)
		ld->c->addressing_why =
			custom ? "the profile's addressing_style" : "AWS's endpoint";
	return 0;
}

static int pick_endpoint(struct load *ld)
{
	int ret = given_endpoint(ld, &ld->c->endpoint);
	bool custom = ld->c->endpoint != NULL;

	if (!ret && !custom)
		ret = aws_endpoint(ld, &ld->c->endpoint);
	return ret ? ret : pick_addressing(ld, custom);
}

/*
 * STS's endpoint, for the roles of the chain, as the AWS CLI picks it:
 * AWS_ENDPOINT_URL_STS, the profile's "sts =" endpoint_url, then the
 * endpoints for every service; else AWS's regional one (what current SDKs
 * use rather than the global sts.amazonaws.com). Never --endpoint-url,
 * which is S3's.
 */
static int pick_sts_endpoint(struct load *ld)
{
	bool ignore = ignore_configured_endpoints(ld);
	const struct choice ch[] = {
		{ ignore ? NULL : aws_env("AWS_ENDPOINT_URL_STS"), "AWS_ENDPOINT_URL_STS" },
		{ ignore ? NULL : aws_profile_setting(ld, SET_STS_ENDPOINT_URL), ld->in_config },
		{ ignore ? NULL : aws_env("AWS_ENDPOINT_URL"), "AWS_ENDPOINT_URL" },
		{ ignore ? NULL : aws_profile_setting(ld, SET_ENDPOINT_URL), ld->in_config },
	};
	const struct choice *e = first_given(ch, sizeof(ch) / sizeof(*ch));
	const char *why,
		*domain = strncmp(ld->c->region, "cn-", 3) ? "amazonaws.com" : "amazonaws.com.cn";
	char q[128];
	size_t n;

	if (!e) {
		if (asprintf(&ld->c->sts_endpoint, "https://sts.%s.%s", ld->c->region, domain) < 0)
			ld->c->sts_endpoint = NULL;
		return ld->c->sts_endpoint ? 0 : aws_fail(ld, -ENOMEM, "out of memory");
	}
	if ((why = endpoint_problem(e->value)))
		return aws_fail(ld, -EINVAL, "STS endpoint URL '%s' (from %s): %s",
				strchr(e->value, '@') ? "..." : aws_shown(e->value, q, sizeof(q)),
				e->from, why);
	for (n = strlen(e->value); e->value[n - 1] == '/'; n--)
		;
	if (!(ld->c->sts_endpoint = strndup(e->value, n)))
		return aws_fail(ld, -ENOMEM, "out of memory");
	return 0;
}

static int pick_retries(struct load *ld)
{
	const char *v = aws_env("AWS_MAX_ATTEMPTS"), *from = "AWS_MAX_ATTEMPTS";
	unsigned long n = DEFAULT_ATTEMPTS;
	char q[80];

	if (!v) {
		v = aws_profile_setting(ld, SET_MAX_ATTEMPTS);
		from = v ? ld->in_config : NULL;
	}
	if (v && !parse_number(v, 1, ATTEMPTS_MAX, &n))
		return aws_fail(ld, -EINVAL, "max attempts '%s' (from %s): 1 to 20 expected",
				aws_shown(v, q, sizeof(q)), from);
	ld->c->max_attempts = (unsigned)n;
	if (keep_from(ld, &ld->c->attempts_from, from ? from : "the default", !from))
		return -ENOMEM;
	n = DEFAULT_LOW_SPEED_SECONDS;
	if ((v = aws_env("LIDIAGEN_S3_TIMEOUT")) && !parse_number(v, 1, LOW_SPEED_SECONDS_MAX, &n))
		return aws_fail(ld, -EINVAL, "LIDIAGEN_S3_TIMEOUT '%s': 1 to 3600 seconds expected",
				aws_shown(v, q, sizeof(q)));
	ld->c->low_speed_seconds = ld->ov->read_timeout ? (long)ld->ov->read_timeout : (long)n;
	ld->c->max_retry_seconds = DEFAULT_RETRY_SECONDS;
	ld->c->connect_timeout_ms =
		ld->ov->connect_timeout ? 1000L * ld->ov->connect_timeout : DEFAULT_CONNECT_MS;
	if (s3_breaker_new(&ld->c->breaker))
		return aws_fail(ld, -ENOMEM, "out of memory");
	return 0;
}

/* ---- the whole ---- */

/*
 * "subject: " before the message in err, so that it says what it is about
 * (the bucket's settings, the credentials) rather than the option that
 * named the bucket; the message's end is cut if it must be.
 */
static void name_subject(char *err, size_t size, const char *subject)
{
	size_t n = strlen(subject) + 2, len;

	if (n >= size)
		return;
	len = strnlen(err, size - 1);
	if (len > size - 1 - n)
		len = size - 1 - n;
	memmove(err + n, err, len);
	err[n + len] = '\0';
	memcpy(err, subject, n - 2);
	memcpy(err + n - 2, ": ", 2);
}

/* After the URL: the profile, the connection's settings, the libraries. */
static int load_settings(struct load *ld)
{
	int ret;

	if ((ret = aws_profile_load(ld)) || (ret = pick_region(ld)) || (ret = pick_endpoint(ld)) ||
	    (ret = pick_sts_endpoint(ld)) || (ret = pick_retries(ld)) ||
	    (ret = s3_curl_load(ld->err, ld->err_size)) ||
	    (ret = s3_expat_load(ld->err, ld->err_size)))
		return ret;
	return 0;
}

/* The URL (its message quotes it), the settings (named by the bucket), the credentials. */
static int load_all(struct load *ld, const char *url)
{
	char bucket[640];
	int ret;

	if ((ret = aws_parse_url(ld, url)))
		return ret;
	snprintf(bucket, sizeof(bucket), "s3://%s%s%.560s", ld->c->bucket,
		 *ld->c->prefix ? "/" : "", ld->c->prefix);
	if ((ret = load_settings(ld)))
		name_subject(ld->err, ld->err_size, bucket);
	else if ((ret = aws_find_credentials(ld)))
		name_subject(ld->err, ld->err_size, "credentials");
	else if ((ret = aws_keeper_new(ld->c, ld->ov->profile)))
		snprintf(ld->err, ld->err_size, "out of memory");
	return ret;
}

int s3_config_load(struct s3_config *c, const char *url, const struct s3_overrides *ov, char *err,
		   size_t err_size)
{
	static const struct s3_overrides none;
	struct load *ld = calloc(1, sizeof(*ld)); /* two paths: too large for some stacks */
	int ret;

	memset(c, 0, sizeof(*c));
	if (!ld) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	*ld = (struct load){ .c = c, .ov = ov ? ov : &none, .err = err, .err_size = err_size };
	if ((ret = load_all(ld, url)))
		s3_config_free(c);
	aws_files_release(ld);
	free(ld);
	return ret;
}

void s3_config_free(struct s3_config *c)
{
	if (!c)
		return;
	free(c->bucket);
	free(c->prefix);
	free(c->region);
	free(c->endpoint);
	free(c->sts_endpoint);
	free(c->region_from);
	free(c->endpoint_from);
	free(c->attempts_from);
	aws_free_secret(c->creds.access_key);
	aws_free_secret(c->creds.secret_key);
	aws_free_secret(c->creds.session_token);
	s3_breaker_free(c->breaker);
	aws_keeper_free(c->keeper);
	memset(c, 0, sizeof(*c));
}

/* ---- for -v ---- */

/*
 * The access key id as `aws configure list` shows it: 16 '*', then its last
 * 4 characters when it has 16 or more (AWS's have 20), so that at most a
 * quarter of it is shown; a shorter one, not a character of it.
 */
static void masked_key(const char *key, char *buf, size_t size)
{
	size_t n = key ? strlen(key) : 0;

	snprintf(buf, size, "****************%s", n >= 16 ? key + n - 4 : "");
}

void s3_config_describe(const struct s3_config *c, char *buf, size_t size)
{
	const struct s3_credentials *cr = &c->creds;
	char key[24];

	masked_key(cr->access_key, key, sizeof(key));
	snprintf(buf, size,
		 "endpoint %s (%s), %s style (%s)\n"
		 "region %s (%s)\n"
		 "at most %u attempts a request (%s), within %.0f s; deadlines: %ld s to "
		 "connect, %ld s with no byte moving\n"
		 "credentials: %s%s%s, access key id %s%s",
		 c->endpoint, c->endpoint_from, c->path_style ? "path" : "virtual-hosted",
		 c->addressing_why, c->region, c->region_from, c->max_attempts, c->attempts_from,
		 c->max_retry_seconds, c->connect_timeout_ms / 1000, c->low_speed_seconds,
		 cr->source, *cr->where ? " " : "", cr->where, key,
		 cr->session_token ? ", with a session token" : "");
}
