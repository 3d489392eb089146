/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every part of the command says and how it ends: exit codes, messages
 * on stderr and how many of them (-q, -v). The library's messages come here
 * too, through its log callback (install_log). Nothing here calls back into
 * main.c or a subcommand.
 */
#ifndef LIDIAGEN_USAGE_H
#define LIDIAGEN_USAGE_H

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
 * "lidiagen: unknown option '...'" for the option getopt_long refused last
 * in argv; the subcommands set opterr to 0, so that getopt says nothing.
 */
void unknown_option(char **argv);

/* Install the library's log callback (warnings, and more with -v). */
void install_log(void);

#endif
