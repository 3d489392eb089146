/* SPDX-License-Identifier: Apache-2.0 */
/* Messages and verbosity (usage.h), as git's usage.c beside git.c. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>

#include "lidia.h"
#include "usage.h"

int verbosity = 1;

static void vmsg(const char *kind, const char *what, const char *fmt, va_list ap)
{
	fputs("lidiagen: ", stderr);
	if (kind)
		fprintf(stderr, "%s: ", kind);
	if (what)
		fprintf(stderr, "%s: ", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void error(const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(NULL, what, fmt, ap);
	va_end(ap);
}

void warning(const char *what, const char *fmt, ...)
{
	va_list ap;

	if (verbosity < 1)
		return;
	va_start(ap, fmt);
	vmsg("warning", what, fmt, ap);
	va_end(ap);
}

void unknown_option(char **argv)
{
	if (optopt)
		error(NULL, "unknown option '-%c'", optopt);
	else
		error(NULL, "unknown option '%s'", argv[optind - 1]);
}

static void log_cb(enum lidia_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == LIDIA_LOG_WARN && verbosity >= 1)
		fprintf(stderr, "lidiagen: warning: %s\n", msg);
	else if (level != LIDIA_LOG_WARN && verbosity >= 2)
		fprintf(stderr, "lidiagen: %s\n", msg);
}

void install_log(void)
{
	lidia_set_log(log_cb, NULL);
}
