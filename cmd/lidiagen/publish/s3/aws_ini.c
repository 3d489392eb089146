/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The INI dialect of the AWS files, as the AWS CLI (Python's configparser)
 * and SDKs read it: [section] headers ("[NAME]" in the credentials file;
 * "[profile NAME]" and "[default]" in the config file), "name = value"
 * lines, comments from '#' or ';' (in a value, only after a blank), and
 * indented lines under a setting, which continue its value or, under a
 * "name =" without one, are a block of settings ("s3 =" and "sts =" are
 * the ones read). Of the profile wanted, the settings lidiagen reads are
 * kept (the last one given wins), pointing into the file's buffer, the
 * keys of every credential source among them. A bad line's message gives its file
 * and number, never its content, which could be a secret.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "aws_ini.h"

/* What indented lines belong to: nothing we read, or the "s3 =" or "sts =" block. */
enum { BLOCK_NONE, BLOCK_S3, BLOCK_STS, BLOCK_OTHER };

/* Each setting's name in the files. */
static const struct {
	const char *name;
	int block; /* BLOCK_NONE: at the profile's top; else its "s3 =" or "sts =" block */
} settings[SET_COUNT] = {
	[SET_ACCESS_KEY] = { "aws_access_key_id", BLOCK_NONE },
	[SET_SECRET_KEY] = { "aws_secret_access_key", BLOCK_NONE },
	[SET_SESSION_TOKEN] = { "aws_session_token", BLOCK_NONE },
	[SET_REGION] = { "region", BLOCK_NONE },
	[SET_ENDPOINT_URL] = { "endpoint_url", BLOCK_NONE },
	[SET_IGNORE_ENDPOINTS] = { "ignore_configured_endpoint_urls", BLOCK_NONE },
	[SET_MAX_ATTEMPTS] = { "max_attempts", BLOCK_NONE },
	[SET_S3_ENDPOINT_URL] = { "endpoint_url", BLOCK_S3 },
	[SET_S3_ADDRESSING_STYLE] = { "addressing_style", BLOCK_S3 },
	[SET_STS_ENDPOINT_URL] = { "endpoint_url", BLOCK_STS },
	[SET_ROLE_ARN] = { "role_arn", BLOCK_NONE },
	[SET_WEB_IDENTITY_TOKEN_FILE] = { "web_identity_token_file", BLOCK_NONE },
	[SET_ROLE_SESSION_NAME] = { "role_session_name", BLOCK_NONE },
	[SET_SOURCE_PROFILE] = { "source_profile", BLOCK_NONE },
	[SET_CREDENTIAL_SOURCE] = { "credential_source", BLOCK_NONE },
	[SET_SSO_SESSION] = { "sso_session", BLOCK_NONE },
	[SET_SSO_START_URL] = { "sso_start_url", BLOCK_NONE },
	[SET_CREDENTIAL_PROCESS] = { "credential_process", BLOCK_NONE },
};

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* Where a parse is in a file. */
struct ini {
	struct aws_file *f;
	bool is_config; /* sections are [profile NAME], and [default] */
	const char *want;
	unsigned line;
	bool seen_section;
	bool seen_setting; /* since the section's header: indented lines now continue it */
	bool in_profile;   /* the lines belong to the profile wanted */
	int block;	   /* what indented lines belong to */
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
static void ini_take(struct ini *st, const char *name, const char *value, int block)
{
	for (int i = 0; i < SET_COUNT; i++) {
		if (settings[i].block == block && !strcasecmp(settings[i].name, name)) {
			st->f->set[i] = *value ? value : NULL;
			return;
		}
	}
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
		if (st->in_profile && (st->block == BLOCK_S3 || st->block == BLOCK_STS))
			ini_take(st, name, value, st->block);
		return 0;
	}
	if (!st->seen_section)
		return ini_bad(ld, st, "a setting before any [section]");
	st->seen_setting = true;
	if (!*value) {
		st->block = !strcasecmp(name, "s3")    ? BLOCK_S3
			    : !strcasecmp(name, "sts") ? BLOCK_STS
						       : BLOCK_OTHER;
		return 0;
	}
	st->block = BLOCK_NONE;
	if (st->in_profile)
		ini_take(st, name, value, BLOCK_NONE);
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

/* The settings of ld->profile in f (its buffer cut into lines); is_config: the config file. */
int aws_ini_parse(struct load *ld, struct aws_file *f, bool is_config)
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
