/* SPDX-License-Identifier: Apache-2.0 */
/* What the subcommands of lidiagen share: exit codes and messages. */
#ifndef LIDIAGEN_CLI_H
#define LIDIAGEN_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "lidia.h"

enum exit_code {
	EXIT_OK = 0,	 /* everything done */
	EXIT_FAILED = 1, /* some input failed; all others were done */
	EXIT_USAGE = 2,	 /* bad command line */
};

/* -q / -v: 0 quiet, 1 normal, 2 verbose. */
extern int verbosity;

/* "lidiagen: <what>: <msg>" on stderr. what may be NULL. */
void error(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void warning(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Install the library's log callback (warnings, and more with -v). */
void install_log(void);

/* Print s[0..len) as a JSON string, quotes included. */
void json_string(FILE *f, const char *s, size_t len);

int cmd_convert(int argc, char **argv);
int cmd_lookup(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_verify(int argc, char **argv);

#endif
