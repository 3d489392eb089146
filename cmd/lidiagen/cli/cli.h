/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The subcommands main.c dispatches to, one cmd_<name>.c each. They all
 * speak through usage.h (exit codes, messages); all but convert and index
 * (options.h) parse their options with cli_opts.h. Both are included here.
 */
#ifndef LIDIAGEN_CLI_H
#define LIDIAGEN_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli_opts.h"
#include "lidia.h"
#include "usage.h"

int cmd_convert(int argc, char **argv);
int cmd_lookup(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_upload(int argc, char **argv);
int cmd_index(int argc, char **argv);

/*
 * Before a command publishes: libcurl is told not to touch signals
 * (CURLOPT_NOSIGNAL: threads), and OpenSSL writes to its sockets with
 * write(2), so a server that closes a TLS connection must not kill the run
 * with SIGPIPE. The command's own choice for the process, never publish.c's.
 */
static inline void ignore_sigpipe(void)
{
	signal(SIGPIPE, SIG_IGN);
}

/* lidia_reader_open() of path, its CRCs checked or not. */
static inline int open_reader(struct lidia_reader **r, const char *path, bool check_crc)
{
	return lidia_reader_open(r, path, &LIDIA_READER_OPTS(.check_crc = check_crc));
}

/* The options of the commands that read one lidia file: lookup and dump. */
struct reader_args {
	bool json, check_crc; /* --json; not --no-crc */
};

/*
 * Parse --json (its help json_help), --no-crc and --help for u->cmd, and
 * require a file after them (argv[optind]). Returns -1 to go on, or the exit
 * code to end with: --help printed u, or a usage error was said.
 */
int reader_args_parse(const struct cli_usage *u, const char *json_help, int argc, char **argv,
		      struct reader_args *a);

#endif
