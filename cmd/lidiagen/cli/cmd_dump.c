/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lidiagen dump: every range of a lidia file, in file order (by VA, then
 * depth), with its line rows: what lookup answers from, laid out whole.
 */
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "json.h"

static const struct cli_usage dump_usage = {
	.cmd = "dump",
	.synopsis = "usage: lidiagen dump [--json] [--no-crc] FILE.lidia\n",
	.about = "List every range of the file in its order (by address, then depth): one\n"
		 "line per range, then its line rows indented under it:\n"
		 "\n"
		 "  0x1139 len 0x8 depth 1: sq at /src/c.c (inlined at /src/c.c:10)\n"
		 "    0x1139 line 4\n"
		 "\n"
		 "Depth 0 is a function, depth N a frame inlined N levels deep, called from\n"
		 "the call site in parentheses. A line row holds from its address to the next\n"
		 "row's or the range's end. An empty name shows as ??.\n",
};

/* --json's help: the fields t_dump.sh checks the output against. */
static const char dump_json_help[] = "one JSON object per range (JSON Lines): va (hex string),\n"
				     "length, depth, function, file, call_file, call_line\n"
				     "(\"\" and 0 at depth 0), lines: [{va, offset, line}]";

static void text_str(struct lidia_str s)
{
	if (s.len)
		fwrite(s.ptr, 1, s.len, stdout);
	else
		fputs("??", stdout);
}

static void dump_str(const char *key, struct lidia_str s)
{
	printf(",\"%s\":", key);
	json_string(stdout, s.ptr, s.len);
}

static void print_range_text(const struct lidia_range_info *ri)
{
	printf("0x%" PRIx64 " len 0x%" PRIx64 " depth %" PRIu64 ": ", ri->va, ri->length,
	       (uint64_t)ri->depth);
	text_str(ri->func);
	fputs(" at ", stdout);
	text_str(ri->file);
	if (ri->depth) {
		fputs(" (inlined at ", stdout);
		text_str(ri->call_file);
		printf(":%" PRIu64 ")", (uint64_t)ri->call_line);
	}
	fputc('\n', stdout);
}

static void print_range_json(const struct lidia_range_info *ri)
{
	printf("{\"va\":\"0x%" PRIx64 "\",\"length\":%" PRIu64 ",\"depth\":%" PRIu64, ri->va,
	       ri->length, (uint64_t)ri->depth);
	dump_str("function", ri->func);
	dump_str("file", ri->file);
	dump_str("call_file", ri->call_file);
	printf(",\"call_line\":%" PRIu64 ",\"lines\":[", (uint64_t)ri->call_line);
}

/* Range i and its line rows; a negative error for a corrupt entry. */
static int dump_range(const struct lidia_reader *r, size_t i, bool json)
{
	struct lidia_range_info ri;
	struct lidia_line ln;
	int err = lidia_reader_range(r, i, &ri);

	if (err)
		return err;
	if (json)
		print_range_json(&ri);
	else
		print_range_text(&ri);
	for (uint64_t k = 0; k < ri.line_count; k++) {
		if ((err = lidia_reader_line(r, ri.line_idx + k, &ln)))
			break;
		if (json)
			printf("%s{\"va\":\"0x%" PRIx64 "\",\"offset\":%" PRIu32
			       ",\"line\":%" PRIu32 "}",
			       k ? "," : "", ri.va + ln.offset, ln.offset, ln.line);
		else
			printf("  0x%" PRIx64 " line %" PRIu32 "\n", ri.va + ln.offset, ln.line);
	}
	if (json)
		printf("]}\n");
	return err;
}

int cmd_dump(int argc, char **argv)
{
	struct reader_args a;
	struct lidia_reader *r;
	const char *path;
	int err = 0;
	size_t i, n;

	if ((err = reader_args_parse(&dump_usage, dump_json_help, argc, argv, &a)) >= 0)
		return err;
	if (optind + 1 < argc)
		return usage_error("dump", "one file at a time: '%s' is one too many",
				   argv[optind + 1]);
	path = argv[optind];
	err = open_reader(&r, path, a.check_crc);
	if (err) {
		error(path, "%s", lidia_strerror(err));
		return EXIT_FAILED;
	}
	n = lidia_reader_count(r);
	for (i = 0; i < n && !err; i++)
		err = dump_range(r, i, a.json);
	if (err)
		error(path, "range %zu: %s", i - 1, lidia_strerror(err));
	lidia_reader_close(r);
	if (fflush(stdout) || ferror(stdout)) {
		error(NULL, "standard output: write failed");
		return EXIT_FAILED;
	}
	return err ? EXIT_FAILED : EXIT_OK;
}
