/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: the Go pclntab reader (lib/go/pclntab.c, go_extract.c) on arbitrary bytes.
 * Built with libFuzzer by `make fuzz` (build/fuzz/fuzz_pclntab) and with
 * tests/fuzz/replay.c by `make test`, which replays tests/fuzz/corpus/pclntab/.
 *
 * The input is a pclntab blob mapped at FUZZ_VA. It is parsed as little-
 * and as big-endian; each time it parses, every function is extracted (inline
 * frames, lines and files on) into a builder, which is finalized and written.
 * The program around the blob is the blob itself: read_va and read_word (the
 * inline trees, 1.2-1.17 funcdata pointers) serve addresses inside
 * [FUZZ_VA, FUZZ_VA + size), and go:func.* (1.18+) is FUZZ_VA, so an input can
 * carry its own inline trees. tests/unit/test_pclntab.c writes its synthetic
 * images for this layout (see tests/fuzz/corpus/pclntab/README).
 *
 * Besides "never crash", it checks what the API promises: gotab_extract
 * fails only for want of memory or with a builder error that its input made
 * (not a crash; LIDIA_FUZZ_VERBOSE=1 prints every parse's outcome and
 * counts on stderr), and a builder it filled always finalizes and writes a file
 * that the reader opens with the CRC check and lidia_reader_check() accepts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "go_extract.h"
#include "intervals.h"
#include "lidia.h"

#define FUZZ_VA 0x10000u

struct input {
	const uint8_t *data;
	size_t size;
	unsigned ptr;
	bool be;
};

static const unsigned char *read_va(void *ctx, uint64_t va, uint64_t size)
{
	const struct input *in = ctx;

	if (va < FUZZ_VA || va - FUZZ_VA > in->size || size > in->size - (va - FUZZ_VA))
		return NULL;
	return in->data + (va - FUZZ_VA);
}

static bool read_word(void *ctx, uint64_t va, uint64_t *value)
{
	const struct input *in = ctx;
	const unsigned char *p = read_va(ctx, va, in->ptr);
	uint64_t v = 0;

	if (!p)
		return false;
	for (unsigned i = 0; i < in->ptr; i++)
		v |= (uint64_t)p[in->be ? in->ptr - 1 - i : i] << (8 * i);
	*value = v;
	return true;
}

static void one(const uint8_t *data, size_t size, bool be)
{
	struct extract_ctx x = { .inlines = true, .lines = true, .files = true };
	struct lidia_extract_stats *stats = &x.st;
	struct intervals *covered = &x.covered;
	struct input in = { data, size, 0, be };
	struct lidia_builder *b = NULL;
	struct lidia_reader *r = NULL;
	struct lidia_reader_opts ro = LIDIA_READER_OPTS(.check_crc = true);
	struct gotab t;
	void *file = NULL;
	size_t file_size = 0;
	int err;

	if (gotab_parse(&t, data, size, FUZZ_VA, be))
		return;
	if (t.base != data || t.size != size || t.nfunc > size)
		abort(); /* a parsed header describes this blob */
	/* The old header's inline slots depend on the release: any of Go 1.11 to 1.14. */
	gotab_set_release(&t, 11 + size % 4);
	in.ptr = t.ptr_size;
	t.read_va = read_va;
	t.read_word = read_word;
	t.ctx = &in;
	t.gofunc = FUZZ_VA;
	t.have_gofunc = true;
	if (lidia_builder_new(&b))
		return;
	x.b = b;
	err = gotab_extract(&x, &t);
	if (err == LIDIA_E_GO)
		abort(); /* malformed functions are skipped, never fatal */
	if (getenv("LIDIA_FUZZ_VERBOSE"))
		fprintf(stderr, "%s: version %d, %u-bit, nfunc %llu: %s; %zu functions, %zu bad, %zu inline ranges, %zu line rows\n",
			be ? "BE" : "LE", (int)t.version, t.ptr_size * 8, (unsigned long long)t.nfunc,
			err ? lidia_strerror(err) : "ok", stats->functions, stats->bad_functions,
			stats->inline_ranges, stats->line_rows);
	if (!err) {
		if (stats->functions > t.nfunc || stats->bad_functions > t.nfunc)
			abort();
		intervals_normalize(covered);
		if (lidia_builder_finalize(b) || lidia_builder_write_mem(b, &file, &file_size) ||
		    lidia_reader_open_mem(&r, file, file_size, &ro) || lidia_reader_check(r, NULL))
			abort(); /* what the builder took, it must write as a valid file */
		if (lidia_reader_count(r) < stats->functions)
			abort();
		/* A few lookups, as a symbolizer would make them. */
		for (size_t i = 0; i < covered->n && i < 64; i++) {
			struct lidia_frame fr[8];

			if (lidia_reader_lookup(r, covered->v[i].lo, fr, 8) < 0 ||
			    lidia_reader_lookup(r, covered->v[i].hi - 1, fr, 8) < 0)
				abort();
		}
	}
	lidia_reader_close(r);
	free(file);
	extract_ctx_release(&x);
	lidia_builder_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(data, size, false);
	one(data, size, true);
	return 0;
}
