/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The options of the convert command, in one table shared by the command
 * line (getopt_long) and the YAML config file, so that the two never drift.
 */
#ifndef LIDIAGEN_OPTIONS_H
#define LIDIAGEN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "batch.h"

enum opt_kind {
	OPT_FLAG,   /* no argument; in YAML true or false */
	OPT_STRING, /* one argument */
	OPT_LIST,   /* repeatable; in YAML a sequence (or one scalar) */
};

struct opt_def {
	const char *name; /* the long option, and the YAML key */
	int short_name;	  /* 0: none */
	enum opt_kind kind;
	const char *arg;  /* what the argument is, for --help */
};

extern const struct opt_def convert_opts[];
extern const size_t nconvert_opts;

/* Which list options the command line has set (its lists replace the config's). */
struct opt_seen {
	bool list[64];
};

/*
 * Apply option name (its value, or "true"/"false" for a flag) to o. On a bad
 * value, returns -1 with the reason in err. from_cli: the command line's
 * first use of a list option empties the list the config file filled.
 */
int option_apply(struct batch_opts *o, const char *name, const char *value, bool from_cli,
		 struct opt_seen *seen, char *err, size_t err_size);

/* Set the defaults of every option. */
void options_defaults(struct batch_opts *o);

/* Check the options together once all are known (--layout template needs a template...). */
int options_check(struct batch_opts *o, char *err, size_t err_size);

#endif
