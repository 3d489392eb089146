/* SPDX-License-Identifier: Apache-2.0 */
/* What the subcommands that read one lidia file take alike (cli.h). */
#include <getopt.h>

#include "cli.h"

int reader_args_parse(const struct cli_usage *u, const char *json_help, int argc, char **argv,
		      struct reader_args *a)
{
	const struct cli_opt rows[] = {
		CLI_BOOL(0, "json", &a->json, json_help),
		CLI_BOOL_SET(0, "no-crc", &a->check_crc, false, "do not check the file's CRCs"),
	};
	int ret;

	*a = (struct reader_args){ .json = false, .check_crc = true };
	if ((ret = cli_parse(u, rows, CLI_NOPTS(rows), argc, argv)) >= 0)
		return ret;
	if (optind >= argc)
		return usage_error(u->cmd, "no lidia file given");
	return -1;
}
