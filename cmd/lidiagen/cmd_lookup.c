/* SPDX-License-Identifier: Apache-2.0 */
/* lidiagen lookup: symbolize addresses with a lidia file, like llvm-symbolizer. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"

static const char lookup_usage[] =
	"usage: lidiagen lookup [--json] FILE.lidia [ADDR...]\n"
	"\n"
	"Print the frames of each address (hex, 0x optional), innermost first;\n"
	"without ADDR, read addresses one per line from stdin.\n"
	"\n"
	"  --json        one JSON object per address (JSON Lines)\n"
	"  --no-crc      do not check the file's CRCs\n"
	"  -h, --help    show this help\n";

#define MAX_FRAMES 256

static bool parse_addr(const char *s, uint64_t *out)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	if (!*s || *s == '-')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 16); /* accepts an optional 0x */
	while (isspace((unsigned char)*end))
		end++;
	return !errno && !*end;
}

static void print_text(uint64_t addr, const struct lidia_frame *f, int n)
{
	printf("0x%" PRIx64 ": ", addr);
	if (n == 0)
		printf("?? at ??:0\n");
	for (int i = 0; i < n; i++) {
		if (i)
			printf(" (inlined by) ");
		if (f[i].function.len)
			printf("%.*s", (int)f[i].function.len, f[i].function.ptr);
		else
			printf("??");
		if (f[i].file.len)
			printf(" at %.*s:%u\n", (int)f[i].file.len, f[i].file.ptr, f[i].line);
		else
			printf(" at ??:%u\n", f[i].line);
	}
	printf("\n");
}

static void print_json(uint64_t addr, const struct lidia_frame *f, int n)
{
	printf("{\"address\":\"0x%" PRIx64 "\",\"frames\":[", addr);
	for (int i = 0; i < n; i++) {
		printf("%s{\"function\":", i ? "," : "");
		json_string(stdout, f[i].function.ptr, f[i].function.len);
		printf(",\"file\":");
		json_string(stdout, f[i].file.ptr, f[i].file.len);
		printf(",\"line\":%u,\"inlined\":%s}", f[i].line, f[i].inlined ? "true" : "false");
	}
	printf("]}\n");
}

static int lookup_one(const struct lidia_reader *r, const char *path, const char *arg, bool json)
{
	struct lidia_frame frames[MAX_FRAMES];
	uint64_t addr;
	int n;

	if (!parse_addr(arg, &addr)) {
		error(NULL, "invalid address '%s'", arg);
		return -1;
	}
	n = lidia_reader_lookup(r, addr, frames, MAX_FRAMES);
	if (n < 0) {
		error(path, "0x%" PRIx64 ": %s", addr, lidia_strerror(n));
		return -1;
	}
	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	if (json)
		print_json(addr, frames, n);
	else
		print_text(addr, frames, n);
	return 0;
}

int cmd_lookup(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "no-crc", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct lidia_reader_opts ropts = LIDIA_READER_OPTS(.check_crc = true);
	struct lidia_reader *r;
	bool json = false, failed = false;
	const char *path;
	int opt, err;

	opterr = 0; /* unknown_option() says it */
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'C':
			ropts.check_crc = false;
			break;
		case 'h':
			fputs(lookup_usage, stdout);
			return EXIT_OK;
		default:
			unknown_option(argv);
			fputs(lookup_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		error(NULL, "no lidia file given");
		fputs(lookup_usage, stderr);
		return EXIT_USAGE;
	}
	path = argv[optind++];
	err = lidia_reader_open(&r, path, &ropts);
	if (err) {
		error(path, "%s", lidia_strerror(err));
		return EXIT_FAILED;
	}
	if (optind < argc) {
		for (int i = optind; i < argc; i++)
			failed |= lookup_one(r, path, argv[i], json) < 0;
	} else {
		char line[256];

		while (fgets(line, sizeof(line), stdin)) {
			line[strcspn(line, "\r\n")] = '\0';
			if (!line[0])
				continue;
			failed |= lookup_one(r, path, line, json) < 0;
			fflush(stdout); /* answer each line at once, for use through a pipe */
		}
	}
	lidia_reader_close(r);
	return failed ? EXIT_FAILED : EXIT_OK;
}
