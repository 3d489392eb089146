/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The command line of lookup, info, dump, verify and upload: one table of
 * rows per command, each row an option's names, argument, help and what it
 * does. The getopt_long tables and the option lines of --help are both made
 * from the rows, so that what the help lists and what the parser takes
 * cannot drift (git's parse-options.h, as options.h is for convert).
 */
#ifndef LIDIAGEN_CLI_OPTS_H
#define LIDIAGEN_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The most rows a command may have, -h/--help aside. */
#define CLI_OPTS_MAX 32

/* The rows of a table declared as an array. */
#define CLI_NOPTS(rows) (sizeof(rows) / sizeof((rows)[0]))

/* What a command's --help says around its option lines. */
struct cli_usage {
	const char *cmd;      /* the subcommand, as usage errors name it: "lookup" */
	const char *synopsis; /* the "usage: lidiagen ..." lines */
	const char *about;    /* the paragraphs between the synopsis and the options */
	const char *title;    /* a line above the options ("Options:"); NULL: none */
	const char *trailer;  /* the paragraphs after the options; NULL: none */
};

enum cli_opt_kind {
	CLI_OPT_BOOL,	/* *dest (a bool) = value */
	CLI_OPT_STRING, /* *dest (a const char *) = the argument */
	CLI_OPT_CALL,	/* fn(row, argument); no fn: taken, done before the parse (--config) */
	CLI_OPT_HELP,	/* print the usage and end: cli_parse()'s own row */
};

struct cli_opt;

/*
 * An option's action: arg is its argument (NULL for a flag). Returns -1 to
 * go on, or the exit code to end with (a usage error, once said).
 */
typedef int cli_opt_fn(const struct cli_opt *o, const char *arg);

struct cli_opt {
	int short_name;	  /* 0: none */
	const char *name; /* the long option, without "--" */
	const char *arg;  /* the argument's name in --help; NULL: a flag */
	const char *help; /* its text in --help; each '\n' starts another line */
	enum cli_opt_kind kind;
	void *dest;	/* what BOOL and STRING set, and what fn may use */
	bool value;	/* BOOL: what *dest is set to */
	cli_opt_fn *fn; /* CALL */
};

/* p, refused at compile time unless of type t: what a row's dest points to is known. */
#define CLI_DEST(p, t) _Generic((p), t : (p))
#define CLI_BOOL_SET(s, l, p, v, h)                                                                \
	{                                                                                          \
		.short_name = s, .name = l, .help = h, .kind = CLI_OPT_BOOL,                       \
		.dest = CLI_DEST(p, bool *), .value = v                                            \
	}
#define CLI_BOOL(s, l, p, h) CLI_BOOL_SET(s, l, p, true, h)
#define CLI_STRING(s, l, a, p, h)                                                                  \
	{                                                                                          \
		.short_name = s, .name = l, .arg = a, .help = h, .kind = CLI_OPT_STRING,           \
		.dest = CLI_DEST(p, const char **)                                                 \
	}
#define CLI_CALL(s, l, a, f, p, h)                                                                 \
	{                                                                                          \
		.short_name = s, .name = l, .arg = a, .help = h, .kind = CLI_OPT_CALL, .dest = p,  \
		.fn = f                                                                            \
	}
/* An option read before the parse (upload's --config): listed, taken, passed over. */
#define CLI_EARLY(l, a, h) CLI_CALL(0, l, a, NULL, NULL, h)
/* -q and -v, as every command takes them (verbosity, usage.h). */
#define CLI_QUIET(h) CLI_CALL('q', "quiet", NULL, cli_quiet, NULL, h)
#define CLI_VERBOSE(h) CLI_CALL('v', "verbose", NULL, cli_verbose, NULL, h)

int cli_quiet(const struct cli_opt *o, const char *arg);
int cli_verbose(const struct cli_opt *o, const char *arg);

/*
 * Parse the options of argv with rows[0..n) and -h/--help (added last),
 * applying each row as it comes; usage errors are said as cli_getopt()
 * says them, for u->cmd. Returns -1 to go on, argv[optind] being the first
 * operand, or the exit code to end with: EXIT_OK after --help printed the
 * usage, EXIT_USAGE after a usage error, or what a row's fn returned.
 */
int cli_parse(const struct cli_usage *u, const struct cli_opt *rows, size_t n, int argc,
	      char **argv);

/* The usage --help prints: u's texts around the option lines of rows[0..n) and -h/--help. */
void cli_usage_print(FILE *f, const struct cli_usage *u, const struct cli_opt *rows, size_t n);

#endif
