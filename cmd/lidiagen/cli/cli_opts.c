/* SPDX-License-Identifier: Apache-2.0 */
/* The subcommands' option rows, made into getopt_long's tables and --help (cli_opts.h). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"
#include "usage.h"

/* getopt_long's value of row i when it has no short name, above every char. */
#define LONG_BASE 1000

/* The column the help of an option line starts at, at most: convert's (options.c). */
#define HELP_COLUMN_MAX 28

/* Every command's, so that none can lack it or list it otherwise: always last. */
static const struct cli_opt help_row = {
	.short_name = 'h',
	.name = "help",
	.help = "show this help",
	.kind = CLI_OPT_HELP,
};

/* Row i of rows[0..n), -h/--help being row n. */
static const struct cli_opt *row(const struct cli_opt *rows, size_t n, size_t i)
{
	return i < n ? &rows[i] : &help_row;
}

int cli_quiet(const struct cli_opt *o, const char *arg)
{
	verbosity = 0;
	return -1;
}

int cli_verbose(const struct cli_opt *o, const char *arg)
{
	verbosity = 2;
	return -1;
}

/* getopt_long's tables of rows[0..n]: n + 2 longopts, 2n + 3 bytes of shortopts. */
static void make_tables(const struct cli_opt *rows, size_t n, struct option *longopts,
			char *shortopts)
{
	size_t ns = 0;

	for (size_t i = 0; i <= n; i++) {
		const struct cli_opt *o = row(rows, n, i);

		longopts[i] =
			(struct option){ o->name, o->arg ? required_argument : no_argument, NULL,
					 o->short_name ? o->short_name : LONG_BASE + (int)i };
		if (o->short_name) {
			shortopts[ns++] = (char)o->short_name;
			if (o->arg)
				shortopts[ns++] = ':';
		}
	}
	longopts[n + 1] = (struct option){ 0 };
	shortopts[ns] = '\0';
}

/* The row getopt_long's value opt stands for; NULL if none. */
static const struct cli_opt *row_of(const struct cli_opt *rows, size_t n, int opt)
{
	if (opt >= LONG_BASE && opt <= LONG_BASE + (int)n)
		return row(rows, n, (size_t)(opt - LONG_BASE));
	for (size_t i = 0; opt > 0 && i <= n; i++)
		if (row(rows, n, i)->short_name == opt)
			return row(rows, n, i);
	return NULL;
}

/* Do what row o says, arg its argument. Returns -1 to go on, or the exit code. */
static int apply(const struct cli_usage *u, const struct cli_opt *rows, size_t n,
		 const struct cli_opt *o, const char *arg)
{
	switch (o->kind) {
	case CLI_OPT_BOOL:
		*(bool *)o->dest = o->value;
		break;
	case CLI_OPT_STRING:
		*(const char **)o->dest = arg;
		break;
	case CLI_OPT_CALL:
		return o->fn ? o->fn(o, arg) : -1;
	case CLI_OPT_HELP:
		cli_usage_print(stdout, u, rows, n);
		return EXIT_OK;
	}
	return -1;
}

int cli_parse(const struct cli_usage *u, const struct cli_opt *rows, size_t n, int argc,
	      char **argv)
{
	struct option longopts[CLI_OPTS_MAX + 2];
	char shortopts[2 * CLI_OPTS_MAX + 3];
	const struct cli_opt *o;
	int opt, ret;

	if (n > CLI_OPTS_MAX)
		abort(); /* a bug in a table, met by every run of its command */
	make_tables(rows, n, longopts, shortopts);
	while ((opt = cli_getopt(u->cmd, argc, argv, shortopts, longopts)) != -1) {
		if (!(o = row_of(rows, n, opt)))
			return EXIT_USAGE; /* cli_getopt() said why */
		if ((ret = apply(u, rows, n, o, o->arg ? optarg : NULL)) >= 0)
			return ret;
	}
	return -1;
}

/* "  -s, --name ARG" or "      --name ARG": the left of o's option line; its length. */
static int left_part(char *buf, size_t size, const struct cli_opt *o)
{
	return snprintf(buf, size, "  %c%c%c --%s%s%s", o->short_name ? '-' : ' ',
			o->short_name ? o->short_name : ' ', o->short_name ? ',' : ' ', o->name,
			o->arg ? " " : "", o->arg ? o->arg : "");
}

/* Two past the widest left part, so that short tables stay narrow; at most HELP_COLUMN_MAX. */
static int help_column(const struct cli_opt *rows, size_t n)
{
	char left[128];
	int col = 0;

	for (size_t i = 0; i <= n; i++) {
		int w = left_part(left, sizeof(left), row(rows, n, i)) + 2;

		if (w > col)
			col = w;
	}
	return col < HELP_COLUMN_MAX ? col : HELP_COLUMN_MAX;
}

/* o's lines: a left part too wide for col is followed by two spaces, its help then. */
static void option_line(FILE *f, const struct cli_opt *o, int col)
{
	char left[128];
	int w = left_part(left, sizeof(left), o) + 2;
	const char *line = o->help, *nl;

	fprintf(f, "%-*s", w > col ? w : col, left);
	while ((nl = strchr(line, '\n'))) {
		fprintf(f, "%.*s\n%*s", (int)(nl - line), line, col, "");
		line = nl + 1;
	}
	fprintf(f, "%s\n", line);
}

void cli_usage_print(FILE *f, const struct cli_usage *u, const struct cli_opt *rows, size_t n)
{
	int col = help_column(rows, n);

	fprintf(f, "%s\n%s\n", u->synopsis, u->about);
	if (u->title)
		fprintf(f, "%s\n", u->title);
	for (size_t i = 0; i <= n; i++)
		option_line(f, row(rows, n, i), col);
	if (u->trailer)
		fprintf(f, "\n%s", u->trailer);
}
