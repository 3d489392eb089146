/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: the whole conversion of one input, through the public API
 * (lib/lidia.h) only, as lidiagen runs it on each file it is given:
 *
 *   identify  lidia_elf_open_mem, lidia_elf_info, lidia_elf_build_id
 *   extract   lidia_extract: symbols, MiniDebugInfo (.gnu_debugdata), the Go
 *             pclntab, DWARF (compressed sections, line programs, ranges)
 *   write     lidia_builder_finalize, lidia_builder_write_mem
 *   read      lidia_reader_open_mem with the CRC check, lidia_reader_check,
 *             and lookups at the start and end of the first ranges
 *
 * Built with libFuzzer by `make fuzz` (build/fuzz/fuzz_convert) and with
 * tests/fuzz/replay.c by `make test`, which replays tests/fuzz/corpus/convert/
 * (see its README). Nothing is looked for outside the input (no debug
 * search), so a run depends on its bytes alone.
 *
 * Besides "never crash, hang or leak", it checks what the API promises: an
 * extraction that succeeded leaves a builder that finalizes and writes a file
 * the reader opens with CRCs on and lidia_reader_check() accepts, holding the
 * ranges the statistics counted. LIDIA_FUZZ_VERBOSE=1 prints each input's
 * outcome and the library's messages on stderr.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lidia.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool verbose;

static void on_log(enum lidia_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	if (verbose)
		fprintf(stderr, "  lidia: %s\n", msg);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	verbose = getenv("LIDIA_FUZZ_VERBOSE") != NULL;
	lidia_set_log(on_log, NULL);
	return 0;
}

/* Read back what was written: it must be a valid file, and answer lookups. */
static void check_output(struct lidia_builder *b, const struct lidia_extract_stats *st)
{
	struct lidia_reader_opts ro = LIDIA_READER_OPTS(.check_crc = true);
	struct lidia_reader *r = NULL;
	void *file = NULL;
	size_t file_size = 0, n;

	if (lidia_builder_finalize(b) || lidia_builder_write_mem(b, &file, &file_size) ||
	    file_size != lidia_builder_file_size(b) ||
	    lidia_reader_open_mem(&r, file, file_size, &ro) || lidia_reader_check(r, NULL))
		abort(); /* what the builder took, it must write as a valid file */
	n = lidia_reader_count(r);
	if (n != lidia_builder_count(b) || n < st->inline_ranges)
		abort();
	/* A few lookups, as a symbolizer would make them. */
	for (size_t i = 0; i < n && i < 64; i++) {
		struct lidia_range_info ri;
		struct lidia_frame fr[8];

		if (lidia_reader_range(r, i, &ri))
			abort();
		if (lidia_reader_lookup(r, ri.va, fr, 8) < 0 ||
		    lidia_reader_lookup(r, ri.va + ri.length - 1, fr, 8) < 0)
			abort();
	}
	lidia_reader_close(r);
	free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lidia_extract_opts opts = LIDIA_EXTRACT_OPTS(.no_debug_search = true);
	struct lidia_extract_stats st = { 0 };
	struct lidia_builder *b = NULL;
	struct lidia_elf *elf = NULL;
	struct lidia_elf_info info;
	char id[130];
	void *copy;
	int err;

	if (!lidia_is_elf(data, size))
		return 0;
	/* libelf may convert an image of the other byte order in place: a copy. */
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (lidia_elf_open_mem(&elf, copy, size, "fuzz"))
		goto out;
	lidia_elf_info(elf, &info);
	err = lidia_elf_build_id(elf, id, sizeof(id));
	if (!err && strlen(id) % 2)
		abort();
	if (lidia_builder_new(&b))
		goto out;
	err = lidia_extract(b, &elf, 1, &opts, &st);
	if (verbose)
		fprintf(stderr, "%s: %s%s%s%s; %zu functions (%zu Go, %zu DWARF), %zu inline ranges, %zu line rows, %zu bad%s\n",
			err ? lidia_strerror(err) : "ok", info.debug_file ? "debug file, " : "",
			info.has_symtab ? "symtab, " : "", info.has_dwarf ? "DWARF, " : "",
			info.has_go ? "Go" : "", st.functions, st.go_functions, st.dwarf_functions,
			st.inline_ranges, st.line_rows, st.bad_functions,
			st.used_minidebuginfo ? ", MiniDebugInfo" : "");
	if (!err)
		check_output(b, &st);
out:
	lidia_builder_free(b);
	lidia_elf_close(elf);
	free(copy);
	return 0;
}
