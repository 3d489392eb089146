/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: one zlib stream inflated in two parts (lib/input/
 * inflate_split.c, inflate_marked.c) on arbitrary bytes. Built with
 * libFuzzer by `make fuzz` (build/fuzz/fuzz_inflate_split) and with
 * tests/fuzz/replay.c by `make test`, which replays
 * tests/fuzz/corpus/inflate_split/ (zlib streams of 200 to 300 KiB of text,
 * of text and random bytes, and of copies that never stop reaching back;
 * made by Python's zlib, tests/fuzz/make_inflate_corpus.py).
 *
 * The input's first byte picks where the boundary is looked for, the rest
 * is the stream. Its size is what libdeflate inflates it to, or 256 KiB
 * when libdeflate refuses it. What it checks: the split never says it
 * inflated a stream that libdeflate refuses, nor to other bytes, and puts
 * back the stream's bytes it wrote over.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

#include "inflate_split.h"

#define MAX_SIZE (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	unsigned char *ref = malloc(MAX_SIZE), *out = NULL, *z = NULL;
	size_t n = 256u << 10;
	bool good = false;
	struct inflate_split s;

	if (size < 2 || !d || !ref)
		goto done;
	if (libdeflate_zlib_decompress(d, data + 1, size - 1, ref, MAX_SIZE, &n) ==
	    LIBDEFLATE_SUCCESS)
		good = true;
	/* The split writes over three bytes of the stream while it runs: a copy. */
	if (!(out = malloc(n ? n : 1)) || !(z = malloc(size - 1)))
		goto done;
	memcpy(z, data + 1, size - 1);
	if (inflate_split_plan(&s, z, size - 1, out, n, (data[0] % 9 + 1) / 10.0)) {
		inflate_split_second(&s);
		inflate_split_first(&s);
		if (inflate_split_end(&s) && (!good || memcmp(out, ref, n)))
			abort();
		if (memcmp(z, data + 1, size - 1))
			abort(); /* the stream's bytes not put back */
	}
done:
	free(out);
	free(z);
	free(ref);
	libdeflate_free_decompressor(d);
	return 0;
}
