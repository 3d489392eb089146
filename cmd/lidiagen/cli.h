/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The subcommands main.c dispatches to, one cmd_<name>.c each. They all
 * speak through usage.h (exit codes, messages), included here for them.
 */
#ifndef LIDIAGEN_CLI_H
#define LIDIAGEN_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lidia.h"
#include "usage.h"

int cmd_convert(int argc, char **argv);
int cmd_lookup(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_verify(int argc, char **argv);

/*
 * lidia_reader_open() of path, CRCs checked or not, with options zeroed
 * whole: the library refuses a non-zero byte past the fields it knows, tail
 * padding included, and an initialiser (LIDIA_READER_OPTS) need not zero
 * padding.
 */
static inline int open_reader(struct lidia_reader **r, const char *path, bool check_crc)
{
	struct lidia_reader_opts o;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.check_crc = check_crc;
	return lidia_reader_open(r, path, &o);
}

#endif
