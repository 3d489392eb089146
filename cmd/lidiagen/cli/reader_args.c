/* SPDX-License-Identifier: Apache-2.0 */
/* What the subcommands that read one lidia file take alike (cli.h). */
#include <getopt.h>

#include "cli.h"

int reader_args_parse(const char *cmd, const char *usage, int argc, char **argv,
		      struct reader_args *a)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "no-crc", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;

	*a = (struct reader_args){ .json = false, .check_crc = true };
	while ((opt = cli_getopt(cmd, argc, argv, "h", longopts)) != -1) {
		switch (opt) {
		case 'j':
			a->json = true;
			break;
		case 'C':
			a->check_crc = false;
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_OK;
		default:
			return EXIT_USAGE; /* cli_getopt() said why */
		}
	}
	if (optind >= argc)
		return usage_error(cmd, "no lidia file given");
	return -1;
}
