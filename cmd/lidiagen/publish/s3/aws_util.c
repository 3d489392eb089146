/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the aws_* files share to do their jobs (aws_util.h):
 * the one-line message of a load that fails, values quoted in it cut and
 * made printable, the environment read as the AWS tools read it, and
 * secrets wiped before they are freed. Nothing here calls another aws_*
 * file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws_util.h"

/* One line in ld->err; returns code. */
__attribute__((format(printf, 3, 4))) int aws_fail(struct load *ld, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ld->err, ld->err_size, fmt, ap);
	va_end(ap);
	return code;
}

/* s cut to fit buf, control characters as '?', for quoting in a one-line message. */
const char *aws_shown(const char *s, char *buf, size_t size)
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
const char *aws_env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* Whether v is "true", in any case; NULL is not. */
bool aws_is_true(const char *v)
{
	return v && !strcasecmp(v, "true");
}

/* Wipe a secret before it goes back to the allocator. */
void aws_free_secret(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}
