/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The options of the convert command, in one table whose rows carry the
 * name, the argument, the help and the setter: the command line
 * (getopt_long), the YAML config file and --help all come from it, so that
 * the three never drift (git parse-options.h).
 */
#ifndef LIDIAGEN_OPTIONS_H
#define LIDIAGEN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "batch.h"

/* The most rows the table may have (struct opt_seen, the getopt tables). */
#define OPTS_MAX 64

enum opt_kind {
	OPT_FLAG,  /* no argument; in YAML true or false */
	OPT_VALUE, /* one argument */
	OPT_LIST,  /* repeatable; in YAML a sequence (or one scalar) */
};

/* The part of --help a row is listed in, in this order. */
enum opt_section {
	OPT_SEC_OUTPUT,
	OPT_SEC_S3,
	OPT_SEC_INPUTS,
	OPT_SEC_CONTENT,
	OPT_SEC_RUNNING,
};

struct opt_def;

/*
 * Apply one value of option d to o: value is the argument (NULL for a
 * flag), on the flag's value. On a bad value, returns -1 with the reason,
 * starting with the option's name, in err.
 */
typedef int opt_set_fn(struct batch_opts *o, const struct opt_def *d, const char *value, bool on,
		       char *err, size_t err_size);

struct opt_def {
	const char *name; /* the long option, and the YAML key */
	int short_name;	  /* 0: none */
	enum opt_kind kind;
	const char *arg; /* the argument's name in --help; NULL for a flag */
	enum opt_section section;
	const char *help; /* its text in --help; each '\n' starts another line */
	opt_set_fn *set;  /* NULL: the command line's own (--config, --help), not a YAML key */
	/* What the generic setters (options.c) need; the others ignore them. */
	size_t off;	   /* the field of struct batch_opts the value goes to */
	size_t off_count;  /* lists: the field counting the elements */
	unsigned min, max; /* numbers: the range; lists: max, the most elements */
	const char *what;  /* sizes: examples for messages; lists: what the elements are */
};

extern const struct opt_def convert_opts[];
extern const size_t nconvert_opts;

/* The row of the long option or YAML key name; NULL if there is none. */
const struct opt_def *option_find(const char *name);

/* Which list options the command line has set (its lists replace the config's). */
struct opt_seen {
	bool list[OPTS_MAX];
};

/*
 * Apply option d to o, with value its argument, or for a flag "true",
 * "false" (and yes/no, on/off, 1/0). On a bad value, returns -1 with the
 * reason in err. seen (the command line's; NULL for the config): the first
 * use of a list option empties the list the config file filled.
 */
int option_apply(struct batch_opts *o, const struct opt_def *d, const char *value,
		 struct opt_seen *seen, char *err, size_t err_size);

/* Print the rows under their section titles, as --help lists them. */
void options_help(FILE *f);

/* Set the defaults of every option. */
void options_defaults(struct batch_opts *o);

/* Check the options together once all are known (--layout template needs a template...). */
int options_check(struct batch_opts *o, char *err, size_t err_size);

#endif
