/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: the lidia reader on arbitrary bytes. Built with libFuzzer by
 * `make fuzz` (build/fuzz/fuzz_reader) and with tests/fuzz/replay.c by
 * `make test`, which replays tests/fuzz/corpus/reader/.
 *
 * Besides "never crash", it asserts what the API promises, so a wrong answer
 * is a finding too: a failed open leaves *out NULL; a file opened with the
 * CRC check has every table's crc_ok set; when lidia_reader_check() passes,
 * every range reads and no lookup reports a corrupt entry; a lookup never
 * returns more frames than there are ranges.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lidia.h"

/* Lookups per input are capped: a walk back can be as long as the file. */
#define MAX_PROBED_RANGES 512
#define FRAMES 16

static volatile uint64_t sink;

/* Touch every byte of s, so a sanitizer sees a string that leaves the buffer. */
static void touch(struct lidia_str s)
{
	uint64_t h = 0;

	for (size_t i = 0; i < s.len; i++)
		h = h * 31 + (unsigned char)s.ptr[i];
	sink += h;
}

static void lookup(const struct lidia_reader *r, uint64_t addr, int check)
{
	struct lidia_frame frames[FRAMES];
	int n = lidia_reader_lookup(r, addr, frames, FRAMES);

	if (n < 0) {
		if (check == 0)
			abort(); /* check passed, yet an entry is corrupt */
		return;
	}
	if ((size_t)n > lidia_reader_count(r))
		abort();
	for (int i = 0; i < n && i < FRAMES; i++) {
		touch(frames[i].function);
		touch(frames[i].file);
		sink += frames[i].line + frames[i].depth;
	}
	if (n > FRAMES) { /* the documented retry with more room */
		struct lidia_frame *more = malloc((size_t)n * sizeof(*more));
		int again;

		if (!more)
			return;
		again = lidia_reader_lookup(r, addr, more, (size_t)n);
		/*
		 * The retry must find the same frames, even in a corrupt file:
		 * every frame is checked whether or not there was room for it
		 * (see test_corrupt "lookup does not depend on cap").
		 */
		if (again != n)
			abort();
		for (int i = 0; i < again; i++)
			touch(more[i].function);
		free(more);
	}
}

static void exercise(const struct lidia_reader *r, int check_crc)
{
	struct lidia_file_info fi;
	struct lidia_range_info ri;
	struct lidia_line line;
	size_t count = lidia_reader_count(r), step, bad = 0;
	int check;

	if (lidia_reader_info(r, &fi))
		abort();
	if (check_crc && !(fi.va.crc_ok && fi.ranges.crc_ok && fi.strings.crc_ok &&
			   fi.lines.crc_ok))
		abort();
	check = lidia_reader_check(r, &bad);
	if (check && bad > count)
		abort();

	for (size_t i = 0; i < count; i++) {
		int err = lidia_reader_range(r, i, &ri);

		if (err) {
			if (check == 0)
				abort();
			continue;
		}
		touch(ri.func);
		touch(ri.file);
		touch(ri.call_file);
		for (uint64_t k = 0; k < ri.line_count && k < 64; k++)
			if (lidia_reader_line(r, ri.line_idx + k, &line))
				abort(); /* range() said the slice is in bounds */
	}
	if (lidia_reader_range(r, count, &ri) == 0)
		abort();
	if (lidia_reader_line(r, fi.lines.count, &line) == 0)
		abort();

	lookup(r, 0, check);
	lookup(r, UINT64_MAX, check);
	step = count > MAX_PROBED_RANGES ? count / MAX_PROBED_RANGES : 1;
	for (size_t i = 0; i < count; i += step) {
		if (lidia_reader_range(r, i, &ri))
			continue;
		lookup(r, ri.va, check);
		lookup(r, ri.va + ri.length - 1, check);
		lookup(r, ri.va + ri.length, check);
		lookup(r, ri.va - 1, check);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int check_crc = 0; check_crc < 2; check_crc++) {
		struct lidia_reader_opts opts = LIDIA_READER_OPTS(.check_crc = check_crc);
		struct lidia_reader *r = NULL;
		int err = lidia_reader_open_mem(&r, data, size, &opts);

		if (err) {
			if (r || err >= 0)
				abort();
			continue;
		}
		exercise(r, check_crc);
		lidia_reader_close(r);
	}
	return 0;
}
