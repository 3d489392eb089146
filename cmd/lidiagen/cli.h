/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The subcommands main.c dispatches to, one cmd_<name>.c each. They all
 * speak through usage.h (exit codes, messages), included here for them.
 */
#ifndef LIDIAGEN_CLI_H
#define LIDIAGEN_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "lidia.h"
#include "usage.h"

int cmd_convert(int argc, char **argv);
int cmd_lookup(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_verify(int argc, char **argv);

#endif
