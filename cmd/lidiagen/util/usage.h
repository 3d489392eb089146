/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every part of the command says and how it ends: exit codes, messages
 * on stderr and how many of them (-q, -v), usage errors. The library's
 * messages come here too, through its log callback (install_log). Nothing
 * here calls back into main.c or a subcommand.
 */
#ifndef LIDIAGEN_USAGE_H
#define LIDIAGEN_USAGE_H

#include <stddef.h>

struct option;

enum exit_code {
	EXIT_OK = 0,	 /* everything done */
	EXIT_FAILED = 1, /* some input failed; all others were done */
	EXIT_USAGE = 2,	 /* bad command line */
};

/* -q / -v: 0 quiet, 1 normal, 2 verbose. */
extern int verbosity;

/* "lidiagen: <what>: <msg>" on stderr. what may be NULL. */
void error(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "lidiagen: warning: <what>: <msg>" on stderr, unless -q. */
void warning(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A usage error, in two lines on stderr, never the whole help:
 *   lidiagen: <msg>
 *   Try 'lidiagen[ cmd] --help' for more information.
 * cmd: the subcommand whose help to point to; NULL for the top level.
 * Returns EXIT_USAGE.
 */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What cli_getopt() returns for a usage error it has said. */
#define OPT_USAGE_ERROR (-2)

/*
 * getopt_long over argc/argv with shortopts and longopts, saying its usage
 * errors our way (usage_error(), cmd's help): an unknown option (with "did
 * you mean" from longopts), an ambiguous one, a missing value, a value given
 * to a flag. A long option must be spelled whole: --rec is refused with
 * "did you mean '--recursive'?", so that a new option can never make a
 * script's abbreviation ambiguous. Returns the option's value, -1 after the
 * last option, or OPT_USAGE_ERROR once the error is said.
 */
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts);

/*
 * The one name of names[0..n) that word (word_len bytes) most likely
 * stands for: the only one it is a prefix of (two letters at least), else
 * the nearest by Damerau-Levenshtein distance (a swap of two letters counts
 * 1) if that is at most 2, less than word's length, and no tie. NULL if none.
 */
const char *suggest(const char *word, size_t word_len, const char *const *names, size_t n);

/* Install the library's log callback (warnings, and more with -v). */
void install_log(void);

#endif
