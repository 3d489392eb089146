/* SPDX-License-Identifier: Apache-2.0 */
/* lidiagen: turn build outputs into Lidia symbol files; subcommand dispatch. */
#include <stdarg.h>
#include <string.h>

#include "cli.h"

int verbosity = 1;

static const char usage_text[] =
	"usage: lidiagen [convert] [OPTIONS] PATH... -o DIR\n"
	"                            ELF files, archives, directories (-r) to Lidia files\n"
	"       lidiagen lookup [--json] FILE.lidia [ADDR...]\n"
	"       lidiagen info FILE.lidia\n"
	"       lidiagen verify PATH...\n"
	"       lidiagen --help | --version\n"
	"\n"
	"Run 'lidiagen COMMAND --help' for a command's options; see lidiagen(1).\n";

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "convert", cmd_convert },
	{ "lookup", cmd_lookup },
	{ "info", cmd_info },
	{ "verify", cmd_verify },
};

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

static void log_cb(enum lidia_log_level level, const char *msg, void *ctx)
{
	if (level == LIDIA_LOG_WARN && verbosity >= 1)
		fprintf(stderr, "lidiagen: warning: %s\n", msg);
	else if (level != LIDIA_LOG_WARN && verbosity >= 2)
		fprintf(stderr, "lidiagen: %s\n", msg);
}

void install_log(void)
{
	lidia_set_log(log_cb, NULL);
}

void json_string(FILE *f, const char *s, size_t len)
{
	fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int main(int argc, char **argv)
{
	if (argc >= 2) {
		if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
		    !strcmp(argv[1], "help")) {
			fputs(usage_text, stdout);
			return EXIT_OK;
		}
		if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
			printf("lidiagen %s\n", lidia_version());
			return EXIT_OK;
		}
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				return commands[i].fn(argc - 1, argv + 1);
	}
	if (argc < 2) {
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	/* No subcommand named: convert, the main job. */
	return cmd_convert(argc, argv);
}
