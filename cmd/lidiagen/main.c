/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lidiagen: turn build outputs into Lidia symbol files. This file only
 * dispatches to the subcommands (cli.h); what they share is in usage.c.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] =
	"usage: lidiagen [convert] [OPTIONS] PATH... -o DIR\n"
	"                            ELF files, archives, directories (-r) to Lidia files\n"
	"       lidiagen lookup [--json] FILE.lidia [ADDR...]\n"
	"       lidiagen info FILE.lidia\n"
	"       lidiagen verify PATH...\n"
	"       lidiagen --help | --version\n"
	"\n"
	"Run 'lidiagen COMMAND --help' for a command's options; see lidiagen(1).\n";

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "convert", cmd_convert },
	{ "lookup", cmd_lookup },
	{ "info", cmd_info },
	{ "verify", cmd_verify },
};

int main(int argc, char **argv)
{
	if (argc >= 2) {
		if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
		    !strcmp(argv[1], "help")) {
			fputs(usage_text, stdout);
			return EXIT_OK;
		}
		if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
			printf("lidiagen %s\n", lidia_version());
			return EXIT_OK;
		}
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				return commands[i].fn(argc - 1, argv + 1);
	}
	if (argc < 2) {
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	/* No subcommand named: convert, the main job. */
	return cmd_convert(argc, argv);
}
