/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lidiagen: turn build outputs into Lidia symbol files. This file only
 * dispatches to the subcommands (cli.h); what they share is in usage.c.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "huge_heap.h"

static const char usage_text[] =
	"usage: lidiagen [convert] [OPTIONS] PATH... -o DIR|s3://BUCKET[/PREFIX]\n"
	"                            ELF files, archives, directories (-r) to Lidia files\n"
	"       lidiagen upload [OPTIONS] DIR s3://BUCKET[/PREFIX]\n"
	"                            publish a tree written earlier\n"
	"       lidiagen index [OPTIONS] PATH... -o INDEX | --merge SLICE... -o INDEX\n"
	"                            what each input holds, for convert --index --shard\n"
	"       lidiagen lookup [--json] FILE.lidia [ADDR...]\n"
	"       lidiagen info FILE.lidia...\n"
	"       lidiagen dump [--json] FILE.lidia\n"
	"       lidiagen verify PATH...\n"
	"       lidiagen --help | --version\n"
	"\n"
	"Run 'lidiagen COMMAND --help' for a command's options; see lidiagen(1).\n";

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	bool converts; /* fills much memory: malloc on huge pages (huge_heap.h) */
} commands[] = {
	{ "convert", cmd_convert, true }, { "lookup", cmd_lookup, false },
	{ "info", cmd_info, false },	  { "dump", cmd_dump, false },
	{ "verify", cmd_verify, false },  { "upload", cmd_upload, false },
	{ "index", cmd_index, true },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/*
 * A first argument that is no command is an input of convert; one that
 * names no file, has no '/' and nearly spells a command is a typo of it.
 */
static int command_typo(const char *arg)
{
	const char *names[NCOMMANDS], *s;
	struct stat st;

	if (arg[0] == '-' || strchr(arg, '/') || !lstat(arg, &st))
		return 0;
	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	s = suggest(arg, strlen(arg), names, NCOMMANDS);
	if (!s)
		return 0;
	return usage_error(NULL, "'%s' is not a lidiagen command, nor a file; did you mean '%s'?",
			   arg, s);
}

int main(int argc, char **argv)
{
	int ret;

	if (argc < 2)
		return usage_error(NULL, "no command or input given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(usage_text, stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("lidiagen %s\n", lidia_version());
		return EXIT_OK;
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		if (commands[i].converts)
			huge_heap_setup(argv);
		return commands[i].fn(argc - 1, argv + 1);
	}
	if ((ret = command_typo(argv[1])))
		return ret;
	/* No subcommand named: convert, the main job. */
	huge_heap_setup(argv);
	return cmd_convert(argc, argv);
}
