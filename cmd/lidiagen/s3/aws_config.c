/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Settings and credentials for S3, looked for where the AWS CLI and SDKs
 * look and in their order, so that a CI job set up for `aws s3 cp` needs
 * nothing new (doc/publishing.md):
 *
 *  - bucket and prefix: s3://BUCKET[/PREFIX];
 *  - credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and
 *    AWS_SESSION_TOKEN); else the profile's keys, in the credentials file
 *    first, then in the config file; else the instance's role, from the
 *    instance metadata service (imds.c) unless AWS_EC2_METADATA_DISABLED;
 *  - region, endpoint and addressing style: the overrides, then the
 *    environment, then the profile in the config file;
 *  - retries: AWS_MAX_ATTEMPTS or the profile's max_attempts;
 *  - LIDIAGEN_S3_TIMEOUT: seconds (1 to 3600, default 30) a transfer may
 *    move nothing before it is cut, so that tests against a stalled server
 *    fail fast.
 *
 * The profile (AWS_PROFILE, else "default") is read from
 * AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials, sections [NAME]) and
 * AWS_CONFIG_FILE (~/.aws/config, sections [profile NAME] and [default]).
 * Secrets are copied once, into the config, and wiped when freed; no
 * message holds one, nor any line of a file, which could be one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "imds.h"
#include "s3.h"

#define FILE_MAX_SIZE (1 << 20)
#define PREFIX_MAX 512
#define REGION_MAX 32
#define ENDPOINT_MAX 1024
#define DEFAULT_REGION "us-east-1"
#define DEFAULT_ATTEMPTS 5
#define ATTEMPTS_MAX 20
#define DEFAULT_RETRY_SECONDS 60.0
#define DEFAULT_CONNECT_MS 10000
#define DEFAULT_LOW_SPEED_SECONDS 30
#define LOW_SPEED_SECONDS_MAX 3600

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

static const struct {
	const char *name;
	bool in_s3; /* in the profile's "s3 =" block rather than at its top */
} settings[SET_COUNT] = {
	[SET_ACCESS_KEY] = { "aws_access_key_id", false },
	[SET_SECRET_KEY] = { "aws_secret_access_key", false },
	[SET_SESSION_TOKEN] = { "aws_session_token", false },
	[SET_REGION] = { "region", false },
	[SET_ENDPOINT_URL] = { "endpoint_url", false },
	[SET_IGNORE_ENDPOINTS] = { "ignore_configured_endpoint_urls", false },
	[SET_MAX_ATTEMPTS] = { "max_attempts", false },
	[SET_S3_ENDPOINT_URL] = { "endpoint_url", true },
	[SET_S3_ADDRESSING_STYLE] = { "addressing_style", true },
};

/*
 * Keys of the credential sources the AWS tools have and we do not (roles
 * to assume, SSO, processes). Most come before static keys in the AWS
 * chain, so a profile naming one is refused rather than read otherwise.
 */
static const char *const unsupported_keys[] = { "role_arn", "web_identity_token_file",
						"sso_session", "sso_start_url",
						"credential_process" };

enum { FILE_CREDENTIALS, FILE_CONFIG, FILE_COUNT };

/* One of the two files, read whole; the values point into buf. */
struct aws_file {
	char path[PATH_MAX]; /* "": no home directory to find it in */
	char *buf;
	size_t len;
	bool found; /* it has a section for the profile */
	const char *set[SET_COUNT];
	const char *unsupported; /* the first unsupported_keys entry the profile has */
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

/* One line in ld->err; returns code. */
__attribute__((format(printf, 3, 4))) static int fail(struct load *ld, int code, const char *fmt,
						      ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ld->err, ld->err_size, fmt, ap);
	va_end(ap);
	return code;
}

/* s cut to fit buf, control characters as '?', for quoting in a one-line message. */
static const char *shown(const char *s, char *buf, size_t size)
{
	size_t n = 0;

	for (; s[n] && n + 1 < size; n++)
		buf[n] = (unsigned char)s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n];
	buf[n] = '\0';
	if (s[n] && size > 4)
		memcpy(buf + size - 4, "...", 4);
	return buf;
}

/* The variable's value; NULL when unset or empty, as CI systems set unused ones empty. */
static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static bool is_true(const char *v)
{
	return v && !strcasecmp(v, "true");
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

static bool is_lower_or_digit(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

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

/* Wipe a secret before it goes back to the allocator. */
static void free_secret(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

bool s3_is_url(const char *arg)
{
	return arg && !strncmp(arg, "s3://", 5);
}

/* ---- s3://BUCKET[/PREFIX] ---- */

/* Why b (n bytes) is not a bucket name by S3's rules, or NULL. */
static const char *bucket_problem(const char *b, size_t n)
{
	size_t dots = 0, digits = 0;

	if (n < 3 || n > 63)
		return "a bucket name has 3 to 63 characters";
	for (size_t i = 0; i < n; i++) {
		if (!is_lower_or_digit(b[i]) && b[i] != '.' && b[i] != '-')
			return "a bucket name has only a-z, 0-9, '.' and '-'";
		if (i && b[i] == '.' && b[i - 1] == '.')
			return "a bucket name has no '..'";
		dots += b[i] == '.';
		digits += b[i] >= '0' && b[i] <= '9';
	}
	if (!is_lower_or_digit(b[0]) || !is_lower_or_digit(b[n - 1]))
		return "a bucket name starts and ends with a letter or a digit";
	if (dots == 3 && dots + digits == n)
		return "a bucket name is not an IP address";
	return NULL;
}

/* Why PREFIX (n bytes, without leading or trailing '/') is refused, or NULL. */
static const char *prefix_problem(const char *p, size_t n)
{
	size_t seg = 0; /* where the segment at hand starts */

	if (n > PREFIX_MAX)
		return "the prefix is longer than 512 bytes";
	for (size_t i = 0; n && i <= n; i++) {
		if (i < n && ((unsigned char)p[i] < 0x20 || p[i] == 0x7f))
			return "the prefix has a control character";
		if (i < n && p[i] != '/')
			continue;
		if (i == seg)
			return "the prefix has an empty segment ('//')";
		if ((i - seg == 1 && p[seg] == '.') || (i - seg == 2 && !strncmp(p + seg, "..", 2)))
			return "the prefix has a '.' or '..' segment";
		seg = i + 1;
	}
	return NULL;
}

static int parse_url(struct load *ld, const char *url)
{
	const char *b, *p, *why;
	size_t bn, pn;
	char q[128];

	if (!s3_is_url(url))
		return fail(ld, -EINVAL, "'%s': not an s3://BUCKET[/PREFIX] URL",
			    shown(url ? url : "", q, sizeof(q)));
	b = url + 5;
	bn = strcspn(b, "/");
	if ((why = bucket_problem(b, bn)))
		return fail(ld, -EINVAL, "'%s': %s", shown(url, q, sizeof(q)), why);
	/* Slashes around the prefix are only separators: s3://b/x/ is s3://b/x. */
	for (p = b + bn; *p == '/'; p++)
		;
	for (pn = strlen(p); pn && p[pn - 1] == '/'; pn--)
		;
	if ((why = prefix_problem(p, pn)))
		return fail(ld, -EINVAL, "'%s': %s", shown(url, q, sizeof(q)), why);
	ld->c->bucket = strndup(b, bn);
	ld->c->prefix = strndup(p, pn);
	if (!ld->c->bucket || !ld->c->prefix)
		return fail(ld, -ENOMEM, "out of memory");
	return 0;
}

/* ---- the files ---- */

/* Where a file is: its variable (a leading "~/" meaning the home), else ~/.aws/LEAF. */
static int file_locate(struct load *ld, struct aws_file *f, const char *var, const char *leaf)
{
	const char *path = env(var), *home = getenv("HOME");
	struct passwd pw, *found = NULL;
	char pwbuf[4096];
	int n;

	if ((!home || !*home) && !getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &found) && found)
		home = pw.pw_dir;
	if (path && strncmp(path, "~/", 2))
		n = snprintf(f->path, sizeof(f->path), "%s", path);
	else if (!home || !*home)
		n = 0; /* nowhere to look: as if missing */
	else if (path)
		n = snprintf(f->path, sizeof(f->path), "%s/%s", home, path + 2);
	else
		n = snprintf(f->path, sizeof(f->path), "%s/.aws/%s", home, leaf);
	if (n < 0 || (size_t)n >= sizeof(f->path))
		return fail(ld, -ENAMETOOLONG, "the path of the AWS %s file is too long", leaf);
	f->path[n] = '\0';
	return 0;
}

/* A larger copy of buf, the old one wiped: the credentials file holds secrets. */
static char *grow(char *buf, size_t len, size_t cap)
{
	char *p = malloc(cap);

	if (p && len)
		memcpy(p, buf, len);
	if (buf) {
		explicit_bzero(buf, len);
		free(buf);
	}
	return p;
}

/* All of fd into f->buf, NUL-terminated; -EFBIG past FILE_MAX_SIZE. */
static int read_whole(int fd, struct aws_file *f)
{
	size_t cap = 0;
	ssize_t got;

	for (;;) {
		if (f->len == cap) {
			if (cap > FILE_MAX_SIZE)
				return -EFBIG;
			cap = cap ? cap * 2 : 16384;
			if (cap > FILE_MAX_SIZE + 1)
				cap = FILE_MAX_SIZE + 1;
			if (!(f->buf = grow(f->buf, f->len, cap + 1)))
				return -ENOMEM;
		}
		got = read(fd, f->buf + f->len, cap - f->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (!got)
			break;
		f->len += (size_t)got;
	}
	f->buf[f->len] = '\0';
	return 0;
}

/* f->buf from f->path; a missing file is an empty one. */
static int file_read(struct load *ld, struct aws_file *f)
{
	int fd, ret;

	if (!f->path[0])
		return 0;
	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	ret = fd < 0 ? errno : 0;
	if (ret == ENOENT || ret == ENOTDIR)
		return 0;
	if (ret)
		return fail(ld, -ret, "cannot open '%s': %s", f->path, strerror(ret));
	ret = read_whole(fd, f);
	close(fd);
	if (ret == -EFBIG)
		return fail(ld, ret, "'%s' is larger than 1 MiB: not an AWS profile file", f->path);
	if (ret)
		return fail(ld, ret, "cannot read '%s': %s", f->path, strerror(-ret));
	if (memchr(f->buf, '\0', f->len))
		return fail(ld, -EINVAL, "'%s' has a NUL byte: not an AWS profile file", f->path);
	return 0;
}

/* ---- the INI dialect of the AWS files ---- */

/* Where a parse is in a file. */
struct ini {
	struct aws_file *f;
	bool is_config; /* sections are [profile NAME], and [default] */
	const char *want;
	unsigned line;
	bool seen_section;
	bool seen_setting; /* since the section's header: indented lines now continue it */
	bool in_profile;   /* the lines belong to the profile wanted */
	enum { BLOCK_NONE, BLOCK_S3, BLOCK_OTHER } block; /* what indented lines belong to */
};

__attribute__((format(printf, 3, 4))) static int ini_bad(struct load *ld, const struct ini *st,
							 const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(ld->err, ld->err_size, "%s:%u: ", st->f->path, st->line);

	if (n >= 0 && (size_t)n < ld->err_size) {
		va_start(ap, fmt);
		vsnprintf(ld->err + n, ld->err_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static char *trim(char *s)
{
	size_t n;

	while (is_blank(*s))
		s++;
	for (n = strlen(s); n && is_blank(s[n - 1]); n--)
		s[n - 1] = '\0';
	return s;
}

/* Cut s at a '#' or ';' (in a value, only one after a blank, as the AWS SDKs do). */
static void cut_comment(char *s, bool after_blank)
{
	for (char *p = s; *p; p++) {
		if ((*p == '#' || *p == ';') && (!after_blank || (p > s && is_blank(p[-1])))) {
			*p = '\0';
			return;
		}
	}
}

/* The profile a section's name is, or NULL for other sections ([sso-session x]...). */
static const char *section_profile(char *name, bool is_config)
{
	name = trim(name);
	if (!is_config || !strcmp(name, "default"))
		return name;
	if (!strncmp(name, "profile", 7) && is_blank(name[7]))
		return trim(name + 8);
	return NULL;
}

static int ini_section(struct load *ld, struct ini *st, char *line)
{
	char *close;
	const char *name;

	cut_comment(line, false);
	close = strchr(line, ']');
	if (!close || *trim(close + 1))
		return ini_bad(ld, st, "a section's name is in '[' and ']', alone on its line");
	*close = '\0';
	name = section_profile(line + 1, st->is_config);
	st->seen_section = true;
	st->seen_setting = false;
	st->block = BLOCK_NONE;
	st->in_profile = name && !strcmp(name, st->want);
	st->f->found |= st->in_profile;
	return 0;
}

/* name = value in the profile wanted: keep what we read (the last one given wins). */
static void ini_take(struct ini *st, const char *name, const char *value, bool in_s3)
{
	for (int i = 0; i < SET_COUNT; i++) {
		if (settings[i].in_s3 == in_s3 && !strcasecmp(settings[i].name, name)) {
			st->f->set[i] = *value ? value : NULL;
			return;
		}
	}
	for (size_t i = 0; !in_s3 && i < sizeof(unsupported_keys) / sizeof(*unsupported_keys); i++)
		if (!st->f->unsupported && !strcasecmp(unsupported_keys[i], name))
			st->f->unsupported = unsupported_keys[i];
}

/*
 * "name = value"; at the top of a section, "name =" opens a block of
 * indented "name = value" lines (only "s3 =" matters to us).
 */
static int ini_setting(struct load *ld, struct ini *st, char *line, bool indented)
{
	char *eq = strchr(line, '='), *name, *value;

	/* A line's content is never quoted: it could be a secret. */
	if (!eq)
		return ini_bad(ld, st, "expected 'name = value' or '[section]'");
	*eq = '\0';
	name = trim(line);
	value = eq + 1;
	cut_comment(value, true);
	value = trim(value);
	if (!*name)
		return ini_bad(ld, st, "a setting without a name");
	if (indented) {
		if (st->in_profile && st->block == BLOCK_S3)
			ini_take(st, name, value, true);
		return 0;
	}
	if (!st->seen_section)
		return ini_bad(ld, st, "a setting before any [section]");
	st->seen_setting = true;
	if (!*value) {
		st->block = strcasecmp(name, "s3") ? BLOCK_OTHER : BLOCK_S3;
		return 0;
	}
	st->block = BLOCK_NONE;
	if (st->in_profile)
		ini_take(st, name, value, false);
	return 0;
}

static int ini_line(struct load *ld, struct ini *st, char *line)
{
	/* Indentation only matters under a setting, as in Python's configparser. */
	bool indented = is_blank(*line) && st->seen_setting;
	char *s = trim(line);

	if (!*s || *s == '#' || *s == ';')
		return 0;
	/* Indented: a value's continuation (ignored) or a line of a block. */
	if (indented && st->block == BLOCK_NONE)
		return 0;
	if (!indented && *s == '[')
		return ini_section(ld, st, s);
	return ini_setting(ld, st, s, indented);
}

static int ini_parse(struct load *ld, struct aws_file *f, bool is_config)
{
	struct ini st = { .f = f, .is_config = is_config, .want = ld->profile };
	char *line = f->buf, *nl;
	int ret = 0;

	for (; line && *line && !ret; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		st.line++;
		ret = ini_line(ld, &st, line);
	}
	return ret;
}

/* ---- the profile ---- */

static int profile_load(struct load *ld)
{
	struct aws_file *cr = &ld->files[FILE_CREDENTIALS], *cf = &ld->files[FILE_CONFIG];
	char q[80];
	int ret;

	ld->profile = ld->ov->profile && *ld->ov->profile ? ld->ov->profile : env("AWS_PROFILE");
	ld->profile_named = ld->profile != NULL;
	if (!ld->profile)
		ld->profile = "default";
	if ((ret = file_locate(ld, cr, "AWS_SHARED_CREDENTIALS_FILE", "credentials")) ||
	    (ret = file_locate(ld, cf, "AWS_CONFIG_FILE", "config")) || (ret = file_read(ld, cr)) ||
	    (ret = file_read(ld, cf)) || (cr->buf && (ret = ini_parse(ld, cr, false))) ||
	    (cf->buf && (ret = ini_parse(ld, cf, true))))
		return ret;
	snprintf(ld->in_config, sizeof(ld->in_config), "profile '%.80s' in %.4096s",
		 shown(ld->profile, q, sizeof(q)), cf->path);
	if (ld->profile_named && !cr->found && !cf->found)
		return fail(ld, -ENOENT, "AWS profile '%s' is in neither '%s' nor '%s'",
			    shown(ld->profile, q, sizeof(q)), cr->path, cf->path);
	return 0;
}

static void files_release(struct load *ld)
{
	for (int i = 0; i < FILE_COUNT; i++) {
		if (ld->files[i].buf) {
			explicit_bzero(ld->files[i].buf, ld->files[i].len);
			free(ld->files[i].buf);
		}
	}
}

/* A setting of the profile in the config file (where the AWS tools read settings from). */
static const char *profile_setting(const struct load *ld, enum setting s)
{
	return ld->files[FILE_CONFIG].set[s];
}

/* ---- region, endpoint, retries ---- */

/* A value and where it came from, for messages. */
struct choice {
	const char *value, *from;
};

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
		{ env("AWS_REGION"), "AWS_REGION" },
		{ env("AWS_DEFAULT_REGION"), "AWS_DEFAULT_REGION" },
		{ profile_setting(ld, SET_REGION), ld->in_config },
		{ DEFAULT_REGION, "the default" },
	};
	const struct choice *r = first_given(ch, sizeof(ch) / sizeof(*ch));
	size_t n = strlen(r->value);
	char q[80];

	if (n > REGION_MAX || strspn(r->value, "abcdefghijklmnopqrstuvwxyz0123456789-") != n)
		return fail(ld, -EINVAL,
			    "region '%s' (from %s): 1 to 32 of a-z, 0-9 and '-' expected",
			    shown(r->value, q, sizeof(q)), r->from);
	if (!(ld->c->region = strdup(r->value)))
		return fail(ld, -ENOMEM, "out of memory");
	return 0;
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
	const char *v = env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");

	return is_true(v ? v : profile_setting(ld, SET_IGNORE_ENDPOINTS));
}

/* The endpoint given, checked and without trailing '/'; NULL and 0 when none is. */
static int given_endpoint(struct load *ld, char **out)
{
	bool ignore = ignore_configured_endpoints(ld);
	const struct choice ch[] = {
		{ ld->ov->endpoint_url, "the options" },
		{ ignore ? NULL : env("AWS_ENDPOINT_URL_S3"), "AWS_ENDPOINT_URL_S3" },
		{ ignore ? NULL : env("AWS_ENDPOINT_URL"), "AWS_ENDPOINT_URL" },
		{ ignore ? NULL : profile_setting(ld, SET_S3_ENDPOINT_URL), ld->in_config },
		{ ignore ? NULL : profile_setting(ld, SET_ENDPOINT_URL), ld->in_config },
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
		return fail(ld, -EINVAL, "endpoint URL '%s' (from %s): %s",
			    strchr(e->value, '@') ? "..." : shown(e->value, q, sizeof(q)), e->from,
			    why);
	for (n = strlen(e->value); e->value[n - 1] == '/'; n--)
		;
	if (!(*out = strndup(e->value, n)))
		return fail(ld, -ENOMEM, "out of memory");
	return 0;
}

/* AWS's regional endpoint: China's regions have their own domain. */
static int aws_endpoint(struct load *ld, char **out)
{
	const char *domain =
		strncmp(ld->c->region, "cn-", 3) ? "amazonaws.com" : "amazonaws.com.cn";

	if (asprintf(out, "https://s3.%s.%s", ld->c->region, domain) < 0) {
		*out = NULL;
		return fail(ld, -ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * Path style when asked for, or when the endpoint is not AWS's (most
 * S3-compatible servers have no DNS per bucket) unless the profile asks
 * for virtual; and whenever a dotted bucket would break the TLS
 * certificate's one-level wildcard.
 */
static int pick_addressing(struct load *ld, bool custom)
{
	const char *style = profile_setting(ld, SET_S3_ADDRESSING_STYLE);
	bool https = !strncasecmp(ld->c->endpoint, "https://", 8);
	char q[80];

	if (style && strcasecmp(style, "path") && strcasecmp(style, "virtual") &&
	    strcasecmp(style, "auto"))
		return fail(ld, -EINVAL,
			    "addressing_style '%s' (from %s): path, virtual or auto expected",
			    shown(style, q, sizeof(q)), ld->in_config);
	if (ld->ov->path_style || (style && !strcasecmp(style, "path")))
		ld->c->path_style = true;
	else if (https && strchr(ld->c->bucket, '.'))
		ld->c->path_style = true;
	else
		ld->c->path_style = custom && !(style && !strcasecmp(style, "virtual"));
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

static int pick_retries(struct load *ld)
{
	const char *v = env("AWS_MAX_ATTEMPTS"), *from = "AWS_MAX_ATTEMPTS";
	unsigned long n = DEFAULT_ATTEMPTS;
	char q[80];

	if (!v) {
		v = profile_setting(ld, SET_MAX_ATTEMPTS);
		from = ld->in_config;
	}
	if (v && !parse_number(v, 1, ATTEMPTS_MAX, &n))
		return fail(ld, -EINVAL, "max attempts '%s' (from %s): 1 to 20 expected",
			    shown(v, q, sizeof(q)), from);
	ld->c->max_attempts = (unsigned)n;
	n = DEFAULT_LOW_SPEED_SECONDS;
	if ((v = env("LIDIAGEN_S3_TIMEOUT")) && !parse_number(v, 1, LOW_SPEED_SECONDS_MAX, &n))
		return fail(ld, -EINVAL, "LIDIAGEN_S3_TIMEOUT '%s': 1 to 3600 seconds expected",
			    shown(v, q, sizeof(q)));
	ld->c->low_speed_seconds = (long)n;
	ld->c->max_retry_seconds = DEFAULT_RETRY_SECONDS;
	ld->c->connect_timeout_ms = DEFAULT_CONNECT_MS;
	return 0;
}

/* ---- credentials ---- */

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
		return fail(ld, -EINVAL,
			    "the AWS credentials from %s have a space or control character", from);
	cr->access_key = strdup(access);
	cr->secret_key = strdup(secret);
	cr->session_token = token ? strdup(token) : NULL;
	if (!cr->access_key || !cr->secret_key || (token && !cr->session_token))
		return fail(ld, -ENOMEM, "out of memory");
	return 0;
}

/* 1 when the environment has credentials, 0 when it has none. */
static int creds_from_env(struct load *ld)
{
	const char *access = env("AWS_ACCESS_KEY_ID"), *secret = env("AWS_SECRET_ACCESS_KEY");
	int ret;

	if (!access && !secret)
		return 0;
	if (!access || !secret)
		return fail(ld, -EINVAL, "%s is set without %s",
			    access ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
			    access ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
	snprintf(ld->c->creds.source, sizeof(ld->c->creds.source), "environment");
	ret = creds_set(ld, access, secret, env("AWS_SESSION_TOKEN"), "the environment");
	return ret ? ret : 1;
}

/* 1 when the profile has keys in f, 0 when it has none. */
static int creds_from_file(struct load *ld, const struct aws_file *f)
{
	const char *access = f->set[SET_ACCESS_KEY], *secret = f->set[SET_SECRET_KEY];
	char q[80], from[PATH_MAX + 96];
	int ret;

	shown(ld->profile, q, sizeof(q));
	snprintf(from, sizeof(from), "profile '%s' in %s", q, f->path);
	if (!access && !secret)
		return 0;
	if (!access || !secret)
		return fail(ld, -EINVAL, "%s: %s without %s", from,
			    access ? "aws_access_key_id" : "aws_secret_access_key",
			    access ? "aws_secret_access_key" : "aws_access_key_id");
	snprintf(ld->c->creds.source, sizeof(ld->c->creds.source), "profile %.55s", q);
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
			return fail(ld, -ENOTSUP,
				    "AWS profile '%s' gets its credentials by %s, which lidiagen "
				    "does not: export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
				    "(aws configure export-credentials)",
				    shown(ld->profile, q, sizeof(q)), other);
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

	if (is_true(getenv("AWS_EC2_METADATA_DISABLED"))) {
		snprintf(why, why_size, "disabled by AWS_EC2_METADATA_DISABLED");
		return 0;
	}
	if (imds_credentials(&got, why, why_size))
		return 0;
	snprintf(ld->c->creds.source, sizeof(ld->c->creds.source), "instance metadata");
	ret = creds_set(ld, got.access_key, got.secret_key, got.session_token,
			"the instance metadata service");
	free_secret(got.access_key);
	free_secret(got.secret_key);
	free_secret(got.session_token);
	return ret ? ret : 1;
}

static int find_credentials(struct load *ld)
{
	char why[256], q[80];
	int ret;

	if ((ret = creds_from_env(ld)) || (ret = creds_from_profile(ld)) ||
	    (ret = creds_from_imds(ld, why, sizeof(why))))
		return ret < 0 ? ret : 0;
	return fail(ld, -ENOKEY,
		    "no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID), nor for "
		    "profile '%s' in '%s' or '%s', nor from the instance metadata service (%s)",
		    shown(ld->profile, q, sizeof(q)), ld->files[FILE_CREDENTIALS].path,
		    ld->files[FILE_CONFIG].path, why);
}

/* ---- the whole ---- */

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
	if ((ret = parse_url(ld, url)) || (ret = profile_load(ld)) || (ret = pick_region(ld)) ||
	    (ret = pick_endpoint(ld)) || (ret = pick_retries(ld)) || (ret = find_credentials(ld)))
		s3_config_free(c);
	files_release(ld);
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
	free_secret(c->creds.access_key);
	free_secret(c->creds.secret_key);
	free_secret(c->creds.session_token);
	memset(c, 0, sizeof(*c));
}
