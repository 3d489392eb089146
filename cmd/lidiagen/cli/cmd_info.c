/* SPDX-License-Identifier: Apache-2.0 */
/* lidiagen info: what a lidia file's header says, and whether its CRCs hold. */
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "cli.h"

static const struct cli_usage info_usage = {
	.cmd = "info",
	.synopsis = "usage: lidiagen info FILE.lidia...\n",
	.about = "Print each file's header: table widths, counts, offsets, sizes and CRC\n"
		 "status; what it holds (symbols, lines, inline frames) and how much, counted\n"
		 "as the manifest counts: functions (ranges of depth 0), inline ranges (depth\n"
		 "> 0), line rows (entries of the line table). Whether a file came from Go is\n"
		 "not recorded in it. Exit status 1 when a file is invalid.\n",
};

/*
 * What a file holds, by the counts below (counted as keep.c counts an
 * output for the manifest): lines only when it has line rows.
 */
static void holds(size_t functions, size_t inlines, uint64_t line_rows)
{
	printf("  holds    ");
	if (!functions && !inlines)
		printf("nothing");
	else
		printf("symbols%s%s", line_rows ? ", lines" : "", inlines ? ", inline frames" : "");
	printf("\n");
}

static void table(const char *name, const char *width_name, const struct lidia_table_info *t)
{
	printf("  %-8s %s %" PRIu64 ", count %" PRIu64 ", offset %" PRIu64 ", size %" PRIu64
	       ", crc %08x %s\n",
	       name, width_name, t->entry_size, t->count, t->offset, t->size, t->crc,
	       t->crc_ok ? "ok" : "MISMATCH");
}

static int info_one(const char *path)
{
	struct lidia_reader *r;
	struct lidia_file_info fi;
	size_t functions = 0, inlines = 0, bad;
	int err = lidia_reader_open(&r, path, NULL);

	if (err) {
		error(path, "%s", lidia_strerror(err));
		return -1;
	}
	lidia_reader_info(r, &fi);
	for (size_t i = 0; i < lidia_reader_count(r); i++) {
		struct lidia_range_info ri;

		if (lidia_reader_range(r, i, &ri))
			continue;
		if (ri.depth == 0)
			functions++;
		else
			inlines++;
	}
	err = lidia_reader_check(r, &bad);
	printf("%s:\n  version  %u, %" PRIu64 " bytes\n", path, fi.version, fi.file_size);
	table("va", "entry size", &fi.va);
	table("ranges", "field size", &fi.ranges);
	table("strings", "width", &fi.strings);
	table("lines", "field size", &fi.lines);
	holds(functions, inlines, fi.lines.count);
	printf("  content  %zu functions (depth 0), %zu inline ranges, %" PRIu64 " line rows\n",
	       functions, inlines, fi.lines.count);
	printf("  check    %s", err ? lidia_strerror(err) : "ok");
	if (err)
		printf(" (range %zu)", bad);
	printf("\n");
	lidia_reader_close(r);
	return err || !fi.va.crc_ok || !fi.ranges.crc_ok || !fi.strings.crc_ok || !fi.lines.crc_ok
		       ? -1
		       : 0;
}

int cmd_info(int argc, char **argv)
{
	bool failed = false;
	int ret;

	/* No rows: -h/--help only. */
	if ((ret = cli_parse(&info_usage, NULL, 0, argc, argv)) >= 0)
		return ret;
	if (optind >= argc)
		return usage_error("info", "no lidia file given");
	for (int i = optind; i < argc; i++)
		failed |= info_one(argv[i]) < 0;
	return failed ? EXIT_FAILED : EXIT_OK;
}
