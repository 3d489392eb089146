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

static const struct cli_usage lookup_usage = {
	.cmd = "lookup",
	.synopsis = "usage: lidiagen lookup [--json] [--no-crc] FILE.lidia [ADDR...]\n",
	.about = "Print the frames of each address, innermost first; without ADDR, read\n"
		 "addresses one per line from stdin.\n",
	.trailer =
		"ADDR is hexadecimal (0x optional): a virtual address of the ELF file the\n"
		"lidia file was made from, as its symbol table and nm give them; not a PC\n"
		"of a running process. For a PC, take the line of /proc/PID/maps that maps\n"
		"the file and holds the PC (START-END PERMS OFFSET ...), and the PT_LOAD\n"
		"segment of the file whose file range holds PC - START + OFFSET (readelf -lW\n"
		"FILE: its Offset and VirtAddr):\n"
		"  ADDR = PC - START + OFFSET - (Offset - VirtAddr)\n"
		"For a typical PIE or shared library, Offset == VirtAddr and ADDR = PC - load\n"
		"base (the START of the file's mapping at OFFSET 0); for a non-PIE\n"
		"executable, ADDR = PC. Example: PC 0x55eab3cf8090 in\n"
		"  55eab3cf7000-55eab3cf8000 r--p 00000000 fe:00 10986305  /usr/bin/app\n"
		"  55eab3cf8000-55eab3cf9000 r-xp 00001000 fe:00 10986305  /usr/bin/app\n"
		"with the segment  LOAD 0x001000 0x0000000000001000 ... R E:\n"
		"  ADDR = 0x55eab3cf8090 - 0x55eab3cf8000 + 0x1000 - (0x1000 - 0x1000) = 0x1090\n"
		"       = 0x55eab3cf8090 - 0x55eab3cf7000 (the load base)\n"
		"\n"
		"An ADDR that is not hexadecimal is a usage error (exit 2): on the command\n"
		"line, before any lookup; from stdin, once the other lines are answered.\n",
};

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

/* Look one address up; -1 when the file fails on it (a corrupt entry). */
static int lookup_one(const struct lidia_reader *r, const char *path, uint64_t addr, bool json)
{
	struct lidia_frame frames[MAX_FRAMES];
	int n = lidia_reader_lookup(r, addr, frames, MAX_FRAMES);

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

/*
 * Addresses from stdin, answered as they come (for use through a pipe). A
 * line that is no address is said at once and passed over; it makes the exit
 * status a usage error's once all lines are answered.
 */
static int lookup_stdin(const struct lidia_reader *r, const char *path, bool json)
{
	char line[256];
	unsigned long lineno = 0;
	bool failed = false, bad_addr = false;
	uint64_t addr;

	while (fgets(line, sizeof(line), stdin)) {
		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0])
			continue;
		if (!parse_addr(line, &addr)) {
			error(NULL, "stdin:%lu: invalid address '%s' (hexadecimal, 0x optional)",
			      lineno, line);
			bad_addr = true;
			continue;
		}
		failed |= lookup_one(r, path, addr, json) < 0;
		fflush(stdout);
	}
	return bad_addr ? EXIT_USAGE : failed ? EXIT_FAILED : EXIT_OK;
}

int cmd_lookup(int argc, char **argv)
{
	struct reader_args a;
	struct lidia_reader *r;
	bool failed = false;
	const char *path;
	uint64_t addr;
	int err, ret;

	if ((ret = reader_args_parse(&lookup_usage, "one JSON object per address (JSON Lines)",
				     argc, argv, &a)) >= 0)
		return ret;
	path = argv[optind++];
	/* Every address is checked before any work, as every usage error is. */
	for (int i = optind; i < argc; i++)
		if (!parse_addr(argv[i], &addr))
			return usage_error("lookup",
					   "invalid address '%s' (hexadecimal, 0x optional: an "
					   "ELF virtual address of the file)",
					   argv[i]);
	err = open_reader(&r, path, a.check_crc);
	if (err) {
		error(path, "%s", lidia_strerror(err));
		return EXIT_FAILED;
	}
	if (optind < argc) {
		for (int i = optind; i < argc; i++) {
			parse_addr(argv[i], &addr);
			failed |= lookup_one(r, path, addr, a.json) < 0;
		}
		ret = failed ? EXIT_FAILED : EXIT_OK;
	} else {
		ret = lookup_stdin(r, path, a.json);
	}
	lidia_reader_close(r);
	return ret;
}
