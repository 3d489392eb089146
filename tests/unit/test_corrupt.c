/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reader against corrupt and hostile files (spec section 2; STYLE.md "the
 * reader trusts nothing"), starting from valid files the builder writes.
 *
 * Every corrupted copy is opened from a heap buffer of exactly its size, so
 * that under ASan a read past the end is caught, not just a wrong answer.
 * Header offsets, CRC32C and the table layout are re-stated here from the spec
 * rather than taken from lib/, so that the test is an independent oracle.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lidia.h"
#include "unit.h"

/* Header layout, spec section 2. */
#define H_MAGIC 0x00
#define H_VERSION 0x04
#define H_VA_SIZE 0x08
#define H_VA_COUNT 0x10
#define H_VA_OFF 0x18
#define H_VA_CRC 0x20
#define H_FIELD_SIZE 0x28
#define H_RANGE_COUNT 0x30
#define H_RANGE_OFF 0x38
#define H_RANGE_CRC 0x40
#define H_STR_SIZE 0x48
#define H_STR_OFF 0x50
#define H_STR_CRC 0x58
#define H_LINE_SIZE 0x60
#define H_LINE_COUNT 0x68
#define H_LINE_OFF 0x70
#define H_LINE_CRC 0x78
#define HEADER 128

/* Range table fields, spec section 3. */
enum { F_LENGTH, F_DEPTH, F_FUNC, F_FILE, F_LINE_IDX, F_LINE_COUNT, F_CALL_FILE, F_CALL_LINE };

static const char *const table_name[4] = { "VA", "range", "strings", "line" };
static const unsigned h_off[4] = { H_VA_OFF, H_RANGE_OFF, H_STR_OFF, H_LINE_OFF };
static const unsigned h_crc[4] = { H_VA_CRC, H_RANGE_CRC, H_STR_CRC, H_LINE_CRC };

static uint64_t get(const unsigned char *p, unsigned width)
{
	uint64_t v = 0;

	for (unsigned i = width; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static void put(unsigned char *p, unsigned width, uint64_t v)
{
	for (unsigned i = 0; i < width; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

/* Bitwise CRC32C (reflected Castagnoli polynomial 0x82f63b78): the oracle. */
static uint32_t crc32c_bitwise(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
	}
	return ~c;
}

/* ---- Base files ---- */

struct file {
	unsigned char *buf;
	size_t len;
	unsigned va_w, field_w, line_w;
	uint64_t count, nlines, ssize;
	uint64_t off[4], size[4];
};

static void parse_layout(struct file *f)
{
	const unsigned char *h = f->buf;

	f->va_w = (unsigned)get(h + H_VA_SIZE, 8);
	f->field_w = (unsigned)get(h + H_FIELD_SIZE, 8);
	f->line_w = (unsigned)get(h + H_LINE_SIZE, 8);
	f->count = get(h + H_VA_COUNT, 8);
	f->nlines = get(h + H_LINE_COUNT, 8);
	f->ssize = get(h + H_STR_SIZE, 8);
	for (int t = 0; t < 4; t++)
		f->off[t] = get(h + h_off[t], 8);
	f->size[0] = f->count * f->va_w;
	f->size[1] = f->count * 8 * f->field_w;
	f->size[2] = f->ssize;
	f->size[3] = f->nlines * 2 * f->line_w;
}

/*
 * Functions with inlined ranges and lines, so every table is non-empty. wide
 * pushes every width up (VA past 4 GiB, a length of 4 GiB, a line past 65535).
 * File order: alpha, beta (in alpha), gamma (in beta), delta, eps.
 */
static int make_base(struct file *f, bool wide)
{
	static const struct lidia_line la[] = { { 0, 10 }, { 0x10, 11 }, { 0x80, 12 } };
	static const struct lidia_line lb[] = { { 0, 20 }, { 4, 21 } };
	static const struct lidia_line lg[] = { { 0, 30 } };
	static const struct lidia_line ld[] = { { 0, 40 }, { 8, 70000 } };
	static const struct lidia_line ld16[] = { { 0, 40 }, { 8, 41 } };
	uint64_t base = wide ? 0x500000000ull : 0;
	struct lidia_range_desc r[] = {
		{ .va = base + 0x1024, .length = 8, .depth = 2, .func = "gamma", .file = "g.h",
		  .call_file = "b.h", .call_line = 21, .lines = lg, .line_count = 1 },
		{ .va = base + 0x1000, .length = 0x100, .func = "alpha", .file = "a.c",
		  .lines = la, .line_count = 3 },
		{ .va = base + 0x1020, .length = 0x20, .depth = 1, .func = "beta", .file = "b.h",
		  .call_file = "a.c", .call_line = 11, .lines = lb, .line_count = 2 },
		{ .va = base + 0x1100, .length = 0x40, .func = "delta", .file = "a.c",
		  .lines = wide ? ld : ld16, .line_count = 2 },
		{ .va = base + 0x1200, .length = wide ? 1ull << 32 : 0x10, .func = "eps" },
	};
	struct lidia_builder *b;
	void *buf = NULL;
	int err = lidia_builder_new(&b);

	for (size_t i = 0; !err && i < sizeof(r) / sizeof(r[0]); i++)
		err = lidia_builder_add(b, &r[i]);
	if (!err)
		err = lidia_builder_finalize(b);
	if (!err)
		err = lidia_builder_write_mem(b, &buf, &f->len);
	lidia_builder_free(b);
	f->buf = buf;
	if (!err)
		parse_layout(f);
	return err;
}

/* ---- Writing the corrupt images out ---- */

/*
 * With LIDIA_CORRUPT_DIR=DIR in the environment, every distinct image this
 * test makes that the reader refuses with check_crc (the way Pyroscope opens
 * files) is also written to DIR as NNNN-SECTION.lidia, and the two base files
 * as good-narrow.lidia and good-wide.lidia. tests/t_pyroscope_reader.sh then
 * requires the Pyroscope reader oracle to refuse the first and open the
 * second. Without the variable nothing is written.
 */
static const char *dump_dir;
static char dump_section[64] = "misc";
static unsigned dump_count;
static uint64_t *dump_seen;
static size_t dump_nseen, dump_cap;

static void dump_file(const char *name, const unsigned char *buf, size_t len)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dump_dir, name);
	fp = fopen(path, "wb");
	if (!fp || fwrite(buf, 1, len, fp) != len || fclose(fp)) {
		printf("# cannot write %s: %s\n", path, strerror(errno));
		abort();
	}
}

/* FNV-1a over the length and the bytes: which images were written already. */
static uint64_t image_hash(const unsigned char *buf, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ len;

	for (size_t i = 0; i < len; i++)
		h = (h ^ buf[i]) * 0x100000001b3ull;
	return h;
}

static void dump_refused(const unsigned char *buf, size_t len)
{
	struct lidia_reader_opts opts = LIDIA_READER_OPTS(.check_crc = true);
	struct lidia_reader *r = NULL;
	unsigned char *p;
	uint64_t h;
	char name[96];
	int err;

	if (!dump_dir)
		return;
	h = image_hash(buf, len);
	for (size_t i = 0; i < dump_nseen; i++)
		if (dump_seen[i] == h)
			return;
	p = malloc(len ? len : 1);
	if (!p)
		abort();
	memcpy(p, buf, len);
	err = lidia_reader_open_mem(&r, p, len, &opts);
	lidia_reader_close(r);
	free(p);
	if (!err)
		return;
	if (dump_nseen == dump_cap) {
		dump_cap = dump_cap ? 2 * dump_cap : 256;
		dump_seen = realloc(dump_seen, dump_cap * sizeof(*dump_seen));
		if (!dump_seen)
			abort();
	}
	dump_seen[dump_nseen++] = h;
	snprintf(name, sizeof(name), "%04u-%s.lidia", ++dump_count, dump_section);
	dump_file(name, buf, len);
}

/* Name the images the next step makes: SECTION-FILE (e.g. truncation-narrow). */
static void dump_as(const char *section, const char *file)
{
	snprintf(dump_section, sizeof(dump_section), "%s%s%s", section, file ? "-" : "",
		 file ? file : "");
}

/* ---- Opening copies ---- */

/* An exact-size heap copy of buf[0..len), so ASan sees any read past its end. */
static unsigned char *copy(const unsigned char *buf, size_t len)
{
	unsigned char *p = malloc(len ? len : 1);

	if (!p)
		abort();
	if (len)
		memcpy(p, buf, len);
	return p;
}

/* Open buf[0..len) and close it again; the error of the open. */
static int try_open(const unsigned char *buf, size_t len, bool check_crc)
{
	struct lidia_reader_opts opts = LIDIA_READER_OPTS(.check_crc = check_crc);
	unsigned char *p = copy(buf, len);
	static char poison;
	struct lidia_reader *r = (struct lidia_reader *)&poison; /* open must reset it */
	int err;

	dump_refused(buf, len);
	err = lidia_reader_open_mem(&r, p, len, &opts);
	if (err && r) {
		printf("# open failed with %d but left *out set\n", err);
		r = NULL;
		err = 1;
	}
	lidia_reader_close(r);
	free(p);
	return err;
}

/* The same error with and without the CRC check. */
static int try_open_both(const unsigned char *buf, size_t len)
{
	int a = try_open(buf, len, false), b = try_open(buf, len, true);

	return a == b ? a : 1;
}

/* A copy of f with header field at off (width bytes) set to v; opened both ways. */
static int open_with_header(const struct file *f, unsigned off, unsigned width, uint64_t v)
{
	unsigned char *p = copy(f->buf, f->len);
	int err;

	put(p + off, width, v);
	err = try_open_both(p, f->len);
	free(p);
	return err;
}

/* ---- Truncation ---- */

static void truncation(const struct file *f, const char *name)
{
	static const unsigned fields[] = { 0,	 4,    8,    0x10, 0x18, 0x20, 0x24,
					   0x28, 0x30, 0x38, 0x40, 0x44, 0x48, 0x50,
					   0x58, 0x5c, 0x60, 0x68, 0x70, 0x78, 0x7c };
	bool ok = true;
	int err;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		err = try_open_both(f->buf, fields[i]);
		if (err != LIDIA_E_TRUNCATED) {
			printf("# %u bytes: %s\n", fields[i], lidia_strerror(err));
			ok = false;
		}
	}
	CHECK(ok, "%s: truncated at each of the %zu header field boundaries: LIDIA_E_TRUNCATED",
	      name, sizeof(fields) / sizeof(fields[0]));
	ok = true;
	for (size_t len = 0; len < HEADER; len++) {
		err = try_open_both(f->buf, len);
		if (err != LIDIA_E_TRUNCATED) {
			printf("# %zu bytes: %s\n", len, lidia_strerror(err));
			ok = false;
		}
	}
	CHECK(ok, "%s: truncated at every byte inside the header: LIDIA_E_TRUNCATED", name);

	for (int t = 0; t < 4; t++) {
		ok = f->size[t] > 0;
		for (uint64_t len = f->off[t]; ok && len < f->off[t] + f->size[t]; len++) {
			err = try_open_both(f->buf, len);
			if (err != LIDIA_E_OFFSET) {
				printf("# %" PRIu64 " bytes: %s\n", len, lidia_strerror(err));
				ok = false;
			}
		}
		CHECK(ok, "%s: truncated inside the %s table (%" PRIu64 " lengths): LIDIA_E_OFFSET",
		      name, table_name[t], f->size[t]);
	}
	err = try_open(f->buf, f->len, true);
	CHECK(err == 0, "%s: the whole file opens with check_crc (%s)", name,
	      lidia_strerror(err));
}

/* Truncated and empty files opened by path and by fd take the small-file path. */
static void truncated_paths(const struct file *f)
{
	char path[] = "/tmp/lidia-corrupt.XXXXXX";
	struct lidia_reader *r = NULL;
	int fd = mkstemp(path), err;
	bool ok;

	if (fd < 0) {
		CHECK(0, "mkstemp: %s", strerror(errno));
		return;
	}
	err = lidia_reader_open(&r, path, NULL);
	CHECK(err == LIDIA_E_TRUNCATED && !r, "open of an empty file: LIDIA_E_TRUNCATED (%s)",
	      lidia_strerror(err));
	lidia_reader_close(r);
	ok = write(fd, f->buf, 100) == 100;
	err = lidia_reader_open(&r, path, NULL);
	CHECK(ok && err == LIDIA_E_TRUNCATED && !r,
	      "open of a 100-byte prefix by path: LIDIA_E_TRUNCATED (%s)", lidia_strerror(err));
	lidia_reader_close(r);
	err = lidia_reader_open_fd(&r, fd, NULL);
	CHECK(err == LIDIA_E_TRUNCATED && !r,
	      "open of a 100-byte prefix by fd: LIDIA_E_TRUNCATED (%s)", lidia_strerror(err));
	lidia_reader_close(r);
	ok = ftruncate(fd, 0) == 0 && pwrite(fd, f->buf, f->len - 1, 0) == (ssize_t)(f->len - 1);
	err = lidia_reader_open(&r, path, NULL);
	CHECK(ok && err == LIDIA_E_OFFSET && !r,
	      "open of a file missing its last byte by path: LIDIA_E_OFFSET (%s)",
	      lidia_strerror(err));
	lidia_reader_close(r);
	close(fd);
	unlink(path);

	err = lidia_reader_open(&r, "/nonexistent/lidia/file", NULL);
	CHECK(err == -ENOENT && !r, "open of a missing path: -ENOENT (%s)", lidia_strerror(err));
	err = lidia_reader_open(&r, "/tmp", NULL);
	CHECK(err < 0 && !r, "open of a directory: an error (%s)", lidia_strerror(err));
}

/* ---- Header fields ---- */

static void header_fields(const struct file *f, const char *name)
{
	static const uint64_t bad_va[] = { 0, 2, 3, 5, 16, UINT64_MAX, 0x100000004ull };
	static const uint64_t bad_field[] = { 0, 2, 3, 16, UINT64_MAX, 0x100000004ull };
	static const uint64_t bad_line[] = { 0, 1, 3, 8, UINT64_MAX, 0x100000002ull };
	static const uint32_t bad_version[] = { 0, 2, 0x101, 0x01000000, UINT32_MAX };
	unsigned char *p;
	bool ok = true;
	int err;

	for (int i = 0; i < 4; i++) {
		p = copy(f->buf, f->len);
		p[i] ^= 0xff;
		err = try_open_both(p, f->len);
		free(p);
		ok &= err == LIDIA_E_FORMAT;
	}
	CHECK(ok, "%s: each magic byte changed: LIDIA_E_FORMAT", name);
	p = calloc(1, HEADER);
	err = p ? try_open_both(p, HEADER) : 1;
	free(p);
	CHECK(err == LIDIA_E_FORMAT, "128 zero bytes: LIDIA_E_FORMAT (%s)", lidia_strerror(err));
	err = try_open_both((const unsigned char *)"\x7f" "ELF\x02\x01\x01", 7);
	CHECK(err < 0, "7 bytes of ELF header: an error (%s)", lidia_strerror(err));

	ok = true;
	for (size_t i = 0; i < sizeof(bad_version) / sizeof(bad_version[0]); i++) {
		err = open_with_header(f, H_VERSION, 4, bad_version[i]);
		if (err != LIDIA_E_VERSION) {
			printf("# version %" PRIu32 ": %s\n", bad_version[i], lidia_strerror(err));
			ok = false;
		}
	}
	CHECK(ok, "%s: versions 0, 2, 0x101, 0x01000000, 2^32-1: LIDIA_E_VERSION", name);

	ok = true;
	for (size_t i = 0; i < sizeof(bad_va) / sizeof(bad_va[0]); i++) {
		err = open_with_header(f, H_VA_SIZE, 8, bad_va[i]);
		if (err != LIDIA_E_WIDTH) {
			printf("# va width %" PRIu64 ": %s\n", bad_va[i], lidia_strerror(err));
			ok = false;
		}
	}
	CHECK(ok, "%s: VA widths 0, 2, 3, 5, 16, 2^64-1, 2^32+4: LIDIA_E_WIDTH", name);
	ok = true;
	for (size_t i = 0; i < sizeof(bad_field) / sizeof(bad_field[0]); i++) {
		err = open_with_header(f, H_FIELD_SIZE, 8, bad_field[i]);
		if (err != LIDIA_E_WIDTH) {
			printf("# field width %" PRIu64 ": %s\n", bad_field[i],
			       lidia_strerror(err));
			ok = false;
		}
	}
	CHECK(ok, "%s: range field widths 0, 2, 3, 16, 2^64-1, 2^32+4: LIDIA_E_WIDTH", name);
	ok = true;
	for (size_t i = 0; i < sizeof(bad_line) / sizeof(bad_line[0]); i++) {
		err = open_with_header(f, H_LINE_SIZE, 8, bad_line[i]);
		if (err != LIDIA_E_WIDTH) {
			printf("# line width %" PRIu64 ": %s\n", bad_line[i], lidia_strerror(err));
			ok = false;
		}
	}
	CHECK(ok, "%s: line field widths 0, 1, 3, 8, 2^64-1, 2^32+2: LIDIA_E_WIDTH", name);

	err = open_with_header(f, H_RANGE_COUNT, 8, f->count + 1);
	CHECK(err == LIDIA_E_COUNT, "%s: range count = VA count + 1: LIDIA_E_COUNT (%s)", name,
	      lidia_strerror(err));
	err = open_with_header(f, H_VA_COUNT, 8, f->count - 1);
	CHECK(err == LIDIA_E_COUNT, "%s: VA count = range count - 1: LIDIA_E_COUNT (%s)", name,
	      lidia_strerror(err));
	err = open_with_header(f, H_RANGE_COUNT, 8, 0);
	CHECK(err == LIDIA_E_COUNT, "%s: range count 0: LIDIA_E_COUNT (%s)", name,
	      lidia_strerror(err));
}

/* Counts and offsets whose products or sums overflow 64 bits. */
static void overflow(const struct file *f, const char *name)
{
	static const uint64_t counts[] = { 1ull << 59, 1ull << 60, 1ull << 61, 1ull << 62,
					   1ull << 63, UINT64_MAX, UINT64_MAX / 3 };
	static const uint64_t offsets[] = { UINT64_MAX - 10, UINT64_MAX, 1ull << 63,
					    (1ull << 32) + HEADER };
	unsigned char *p;
	bool ok = true;
	int err;

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		p = copy(f->buf, f->len);
		put(p + H_VA_COUNT, 8, counts[i]);
		put(p + H_RANGE_COUNT, 8, counts[i]);
		err = try_open_both(p, f->len);
		free(p);
		if (err != LIDIA_E_OFFSET) {
			printf("# VA and range count %#" PRIx64 ": %s\n", counts[i],
			       lidia_strerror(err));
			ok = false;
		}
		err = open_with_header(f, H_LINE_COUNT, 8, counts[i]);
		if (err != LIDIA_E_OFFSET) {
			printf("# line count %#" PRIx64 ": %s\n", counts[i], lidia_strerror(err));
			ok = false;
		}
		err = open_with_header(f, H_STR_SIZE, 8, counts[i]);
		if (err != LIDIA_E_OFFSET) {
			printf("# strings size %#" PRIx64 ": %s\n", counts[i], lidia_strerror(err));
			ok = false;
		}
	}
	CHECK(ok, "%s: counts 2^59..2^64-1 (products wrap to small sizes): LIDIA_E_OFFSET", name);

	ok = true;
	for (int t = 0; t < 4; t++) {
		for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
			err = open_with_header(f, h_off[t], 8, offsets[i]);
			if (err != LIDIA_E_OFFSET) {
				printf("# %s offset %#" PRIx64 ": %s\n", table_name[t], offsets[i],
				       lidia_strerror(err));
				ok = false;
			}
		}
		/* One byte too far: offset + size is the file size plus one. */
		err = open_with_header(f, h_off[t], 8, f->len - f->size[t] + 1);
		if (err != LIDIA_E_OFFSET) {
			printf("# %s table one byte past the end: %s\n", table_name[t],
			       lidia_strerror(err));
			ok = false;
		}
	}
	CHECK(ok, "%s: offsets 2^64-11, 2^64-1, 2^63, 2^32+128 and one byte too far, each table:"
		  " LIDIA_E_OFFSET",
	      name);

	/* offset + size == 2^64 exactly: wraps to 0 if added without care. */
	p = copy(f->buf, f->len);
	put(p + H_STR_SIZE, 8, 0 - f->off[2]);
	err = try_open_both(p, f->len);
	free(p);
	CHECK(err == LIDIA_E_OFFSET, "%s: strings offset + size = 2^64: LIDIA_E_OFFSET (%s)", name,
	      lidia_strerror(err));
	/* An empty table may sit at the very end, not past it. */
	p = copy(f->buf, f->len);
	put(p + H_LINE_COUNT, 8, 0);
	put(p + H_LINE_OFF, 8, f->len);
	err = try_open(p, f->len, false);
	CHECK(err == 0, "%s: an empty line table at offset = file size opens (%s)", name,
	      lidia_strerror(err));
	put(p + H_LINE_OFF, 8, f->len + 1);
	err = try_open(p, f->len, false);
	CHECK(err == LIDIA_E_OFFSET, "%s: an empty line table at file size + 1: LIDIA_E_OFFSET"
				     " (%s)",
	      name, lidia_strerror(err));
	free(p);
}

/* ---- CRC ---- */

static void crc(const struct file *f, const char *name)
{
	bool ok = true;
	int err;

	for (int t = 0; t < 4; t++) {
		uint32_t stored = (uint32_t)get(f->buf + h_crc[t], 4);
		uint32_t want = crc32c_bitwise(f->buf + f->off[t], (size_t)f->size[t]);

		if (stored != want) {
			printf("# %s table: stored %08" PRIx32 ", computed %08" PRIx32 "\n",
			       table_name[t], stored, want);
			ok = false;
		}
	}
	CHECK(ok, "%s: every table's stored CRC32C equals a bitwise CRC32C of its bytes", name);

	for (int t = 0; t < 4; t++) {
		unsigned char *p = copy(f->buf, f->len);
		struct lidia_reader *r = NULL;
		struct lidia_file_info fi;

		p[f->off[t] + f->size[t] / 2] ^= 0x10;
		err = try_open(p, f->len, true);
		CHECK(err == LIDIA_E_CRC, "%s: a flipped bit in the %s table: LIDIA_E_CRC (%s)",
		      name, table_name[t], lidia_strerror(err));
		err = lidia_reader_open_mem(&r, p, f->len, NULL);
		ok = !err && !lidia_reader_info(r, &fi) && fi.va.crc_ok == (t != 0) &&
		     fi.ranges.crc_ok == (t != 1) && fi.strings.crc_ok == (t != 2) &&
		     fi.lines.crc_ok == (t != 3);
		CHECK(ok, "%s: ... opens without check_crc; info flags only the %s table", name,
		      table_name[t]);
		lidia_reader_close(r);
		free(p);

		p = copy(f->buf, f->len);
		p[h_crc[t]] ^= 1;
		err = try_open(p, f->len, true);
		CHECK(err == LIDIA_E_CRC, "%s: a flipped bit in the %s table's stored CRC:"
					  " LIDIA_E_CRC (%s)",
		      name, table_name[t], lidia_strerror(err));
		free(p);
	}
}

/* An empty builder's file: CRCs of empty tables. */
static void empty_file(void)
{
	struct lidia_builder *b;
	struct file f = { 0 };
	void *buf = NULL;
	int err;
	bool ok;

	err = lidia_builder_new(&b);
	if (!err)
		err = lidia_builder_finalize(b);
	if (!err)
		err = lidia_builder_write_mem(b, &buf, &f.len);
	lidia_builder_free(b);
	f.buf = buf;
	CHECK(err == 0, "an empty builder writes (%s)", lidia_strerror(err));
	if (err)
		return;
	parse_layout(&f);
	ok = get(f.buf + H_VA_CRC, 4) == 0 && get(f.buf + H_RANGE_CRC, 4) == 0 &&
	     get(f.buf + H_LINE_CRC, 4) == 0 &&
	     get(f.buf + H_STR_CRC, 4) == crc32c_bitwise(f.buf + f.off[2], (size_t)f.ssize) &&
	     get(f.buf + 0x24, 4) == 0 && get(f.buf + 0x44, 4) == 0 &&
	     get(f.buf + 0x5c, 4) == 0 && get(f.buf + 0x7c, 4) == 0;
	CHECK(ok, "an empty file: empty tables' CRCs are 0, the strings CRC is right, reserved"
		  " words are 0");
	free(f.buf);
}

/* ---- Hostile range entries, read without the CRC check ---- */

static unsigned char *field_ptr(const struct file *f, unsigned char *p, uint64_t i, int k)
{
	return p + f->off[1] + (i * 8 + (uint64_t)k) * f->field_w;
}

/* Run every reader call on an open reader; reports what failed, never crashes. */
struct outcome {
	int open, range, check, lookup;
	size_t bad_index;
};

static struct outcome run_all(const struct file *f, unsigned char *p, uint64_t i,
			      uint64_t lookup_at)
{
	struct outcome o = { 0 };
	struct lidia_reader *r = NULL;
	struct lidia_range_info ri;
	struct lidia_frame frames[8];
	struct lidia_file_info fi;

	dump_refused(p, f->len);
	o.open = lidia_reader_open_mem(&r, p, f->len, NULL);
	if (o.open)
		return o;
	lidia_reader_info(r, &fi);
	o.range = lidia_reader_range(r, (size_t)i, &ri);
	o.check = lidia_reader_check(r, &o.bad_index);
	o.lookup = lidia_reader_lookup(r, lookup_at, frames, 8);
	/* And every other call, for the sanitizers' sake. */
	for (size_t k = 0; k < lidia_reader_count(r); k++) {
		uint64_t va;

		if (lidia_reader_range(r, k, &ri))
			continue;
		va = ri.va;
		lidia_reader_lookup(r, va, frames, 8);
		lidia_reader_lookup(r, va + ri.length - 1, frames, 8);
		lidia_reader_lookup(r, va + ri.length, frames, 8);
	}
	lidia_reader_lookup(r, 0, frames, 8);
	lidia_reader_lookup(r, UINT64_MAX, frames, 8);
	lidia_reader_close(r);
	return o;
}

/* Set range i's field k to v, and say what each call returned. */
static void hostile_field(const struct file *f, const char *name, uint64_t i, int k, uint64_t v,
			  const char *what, int want, bool want_lookup_err, uint64_t lookup_at)
{
	unsigned char *p = copy(f->buf, f->len);
	struct outcome o;
	bool ok;

	put(field_ptr(f, p, i, k), f->field_w, v);
	o = run_all(f, p, i, lookup_at);
	ok = o.open == 0 && o.range == want && o.check == want && o.bad_index == i &&
	     (!want_lookup_err || o.lookup < 0);
	if (!ok)
		printf("# open %d, range %d, check %d at %zu, lookup %d\n", o.open, o.range,
		       o.check, o.bad_index, o.lookup);
	CHECK(ok, "%s: %s: range, check%s give %s", name, what,
	      want_lookup_err ? " and lookup" : "", lidia_strerror(want));
	free(p);
}

static void hostile_entries(const struct file *f, const char *name)
{
	uint64_t base = f->va_w == 8 ? 0x500000000ull : 0;
	uint64_t s = f->ssize, n = f->nlines;
	/* File order: 0 alpha, 1 beta, 2 gamma, 3 delta, 4 eps. */
	const uint64_t a = 0, beta = 1;
	const uint64_t at_a = base + 0x1000, at_b = base + 0x1020;
	unsigned char *p;
	struct outcome o;
	uint64_t str_off;
	bool ok;

	hostile_field(f, name, a, F_FUNC, s + 100, "func offset past the strings table",
		      LIDIA_E_STRING, true, at_a);
	hostile_field(f, name, a, F_FUNC, s, "func offset = strings size", LIDIA_E_STRING, true,
		      at_a);
	hostile_field(f, name, a, F_FUNC, s - 2, "func offset 2 bytes before the end",
		      LIDIA_E_STRING, true, at_a);
	hostile_field(f, name, a, F_FUNC, UINT32_MAX, "func offset 2^32-1", LIDIA_E_STRING, true,
		      at_a);
	hostile_field(f, name, a, F_FUNC, s + 100,
		      "func offset past the end, looked up as the outer frame", LIDIA_E_STRING,
		      true, at_b);
	hostile_field(f, name, a, F_FILE, s + 1, "file offset past the end", LIDIA_E_STRING, true,
		      at_a);
	hostile_field(f, name, beta, F_CALL_FILE, s + 1, "call_file offset past the end",
		      LIDIA_E_STRING, false, at_b);
	hostile_field(f, name, a, F_LINE_IDX, n, "line_idx = line count", LIDIA_E_LINES, true,
		      at_a);
	hostile_field(f, name, a, F_LINE_COUNT, n + 1, "line_count = line count + 1",
		      LIDIA_E_LINES, true, at_a);
	hostile_field(f, name, a, F_LINE_IDX, UINT32_MAX, "line_idx 2^32-1", LIDIA_E_LINES, true,
		      at_a);
	if (f->field_w == 8) {
		hostile_field(f, name, a, F_FUNC, UINT64_MAX, "func offset 2^64-1",
			      LIDIA_E_STRING, true, at_a);
		hostile_field(f, name, a, F_FUNC, UINT64_MAX - 3,
			      "func offset 2^64-4 (offset + 4 wraps)", LIDIA_E_STRING, true, at_a);
		hostile_field(f, name, a, F_LINE_IDX, UINT64_MAX,
			      "line_idx 2^64-1 (idx + count wraps)", LIDIA_E_LINES, true, at_a);
		hostile_field(f, name, a, F_LINE_COUNT, UINT64_MAX, "line_count 2^64-1",
			      LIDIA_E_LINES, true, at_a);
		hostile_field(f, name, a, F_LINE_IDX, 1ull << 62,
			      "line_idx 2^62 (idx * entry size wraps)", LIDIA_E_LINES, true, at_a);
	}

	/*
	 * A corrupt outer frame must not hide behind a small cap: the header
	 * says a count above cap means "call again with more room", so the
	 * count must not promise frames that the retry cannot deliver.
	 */
	p = copy(f->buf, f->len);
	put(field_ptr(f, p, a, F_FUNC), f->field_w, s + 100);
	{
		struct lidia_reader *r = NULL;
		struct lidia_frame fr[8];
		int small = 1, big = 1;

		dump_refused(p, f->len);
		if (!lidia_reader_open_mem(&r, p, f->len, NULL)) {
			small = lidia_reader_lookup(r, at_b, fr, 1);
			big = lidia_reader_lookup(r, at_b, fr, 8);
		}
		CHECK(big == LIDIA_E_STRING && small == big,
		      "%s: lookup does not depend on cap: a corrupt outer frame gives %s with"
		      " cap 1 and 8 (got %d and %d)",
		      name, lidia_strerror(LIDIA_E_STRING), small, big);
		lidia_reader_close(r);
	}
	free(p);

	/* The length word of alpha's name, past the end of the table. */
	p = copy(f->buf, f->len);
	str_off = get(field_ptr(f, p, a, F_FUNC), f->field_w);
	put(p + f->off[2] + str_off, 4, s - str_off - 3);
	o = run_all(f, p, a, at_a);
	ok = o.open == 0 && o.range == LIDIA_E_STRING && o.check == LIDIA_E_STRING &&
	     o.bad_index == a && o.lookup < 0;
	CHECK(ok, "%s: a string length one byte past the table: range, check and lookup give %s",
	      name, lidia_strerror(LIDIA_E_STRING));
	put(p + f->off[2] + str_off, 4, UINT32_MAX);
	o = run_all(f, p, a, at_a);
	ok = o.open == 0 && o.range == LIDIA_E_STRING && o.check == LIDIA_E_STRING &&
	     o.lookup < 0;
	CHECK(ok, "%s: a string length of 2^32-1: range, check and lookup give %s", name,
	      lidia_strerror(LIDIA_E_STRING));
	put(p + f->off[2] + str_off, 4, s - str_off - 4);
	o = run_all(f, p, a, at_a);
	CHECK(o.open == 0 && o.range == 0, "%s: a string running exactly to the table's end reads",
	      name);
	free(p);

	/* Lengths and depths that make no sense still must not crash. */
	p = copy(f->buf, f->len);
	for (uint64_t i = 0; i < f->count; i++) {
		put(field_ptr(f, p, i, F_LENGTH), f->field_w, UINT64_MAX);
		put(field_ptr(f, p, i, F_DEPTH), f->field_w, i == 2 ? 0 : UINT64_MAX);
	}
	o = run_all(f, p, 0, at_a);
	CHECK(o.open == 0 && o.range == 0 && o.check == 0 && o.lookup >= 0,
	      "%s: huge lengths and depths read and look up without error (lookup %d)", name,
	      o.lookup);
	free(p);

	/* Unsorted VAs: swap beta and gamma. */
	p = copy(f->buf, f->len);
	{
		unsigned w = f->va_w;
		uint64_t v1 = get(p + f->off[0] + 1 * w, w), v2 = get(p + f->off[0] + 2 * w, w);

		put(p + f->off[0] + 1 * w, w, v2);
		put(p + f->off[0] + 2 * w, w, v1);
	}
	o = run_all(f, p, 0, at_b);
	CHECK(o.open == 0 && o.check == LIDIA_E_ORDER && o.bad_index == 2,
	      "%s: VAs out of order at range 2: check gives LIDIA_E_ORDER at 2 (%s at %zu)", name,
	      lidia_strerror(o.check), o.bad_index);
	free(p);
	p = copy(f->buf, f->len);
	put(p + f->off[0] + (f->count - 1) * f->va_w, f->va_w, 0);
	o = run_all(f, p, 0, at_b);
	CHECK(o.open == 0 && o.check == LIDIA_E_ORDER && o.bad_index == f->count - 1,
	      "%s: last VA 0: check gives LIDIA_E_ORDER at the last range (%s at %zu)", name,
	      lidia_strerror(o.check), o.bad_index);
	free(p);

	/* Unsorted line offsets inside alpha's slice. */
	p = copy(f->buf, f->len);
	{
		uint64_t idx = get(field_ptr(f, p, a, F_LINE_IDX), f->field_w);
		unsigned char *row = p + f->off[3] + (idx + 1) * 2 * f->line_w;

		put(row, f->line_w, 0xffff);
	}
	o = run_all(f, p, 0, at_a);
	CHECK(o.open == 0 && o.check == LIDIA_E_LINES && o.bad_index == a,
	      "%s: line offsets out of order: check gives LIDIA_E_LINES at range 0 (%s)", name,
	      lidia_strerror(o.check));
	free(p);

	/* Out-of-range indexes. */
	{
		struct lidia_reader *r = NULL;
		struct lidia_range_info ri;
		struct lidia_line l;
		int e1 = 1, e2 = 1;

		if (!lidia_reader_open_mem(&r, f->buf, f->len, NULL)) {
			e1 = lidia_reader_range(r, (size_t)f->count, &ri);
			e2 = lidia_reader_line(r, f->nlines, &l);
		}
		CHECK(e1 < 0 && e2 < 0,
		      "%s: range(count) and line(line count) give errors (%s, %s)", name,
		      lidia_strerror(e1), lidia_strerror(e2));
		lidia_reader_close(r);
	}
}

/*
 * A depth is a uint32_t in the API, and the format allows 8-byte fields: a
 * depth past UINT32_MAX (gamma's, range 2) reads as UINT32_MAX in the range
 * and in the frame a lookup gives, never cut to its low 32 bits (2^32 would
 * read as depth 0, a function). Narrow files hold no such depth.
 */
static void depth_past_32_bits(const struct file *f, const char *name)
{
	static const uint64_t depths[] = { 1ull << 32, (1ull << 32) + 3, UINT64_MAX };
	bool ok = true;

	for (size_t k = 0; k < sizeof(depths) / sizeof(depths[0]); k++) {
		unsigned char *p = copy(f->buf, f->len);
		struct lidia_reader *r = NULL;
		struct lidia_range_info ri = { 0 };
		struct lidia_frame fr[4] = { 0 };
		int n = -1;

		put(field_ptr(f, p, 2, 1), f->field_w, depths[k]);
		if (!lidia_reader_open_mem(&r, p, f->len, NULL) && !lidia_reader_range(r, 2, &ri))
			n = lidia_reader_lookup(r, ri.va, fr, 4);
		if (ri.depth != UINT32_MAX || n != 3 || fr[0].depth != UINT32_MAX ||
		    !fr[0].inlined || fr[2].depth != 0) {
			printf("# depth 0x%" PRIx64 ": range depth %" PRIu32 ", lookup %d, frame depth %"
			       PRIu32 "\n", depths[k], ri.depth, n, fr[0].depth);
			ok = false;
		}
		lidia_reader_close(r);
		free(p);
	}
	CHECK(ok, "%s: depths of 2^32, 2^32+3 and 2^64-1 read as UINT32_MAX in ranges and frames",
	      name);
}

/*
 * Every byte of the range table and the strings table set to 0xff in turn,
 * read without the CRC check: no crash, and whenever check passes, every
 * range reads and every lookup succeeds.
 */
static void byte_sweep(const struct file *f, const char *name)
{
	uint64_t from = f->off[1], to = f->off[2] + f->size[2];
	struct lidia_frame frames[8];
	bool ok = true;

	for (uint64_t b = from; b < to; b++) {
		unsigned char *p = copy(f->buf, f->len);
		struct lidia_reader *r = NULL;
		struct lidia_range_info ri;
		int check;

		p[b] = 0xff;
		dump_refused(p, f->len);
		if (lidia_reader_open_mem(&r, p, f->len, NULL)) {
			ok = false;
			free(p);
			continue;
		}
		check = lidia_reader_check(r, NULL);
		for (size_t i = 0; i < lidia_reader_count(r); i++) {
			int e = lidia_reader_range(r, i, &ri), n;

			if (e) {
				ok &= check != 0;
				continue;
			}
			n = lidia_reader_lookup(r, ri.va, frames, 8);
			if (check == 0 && n < 0) {
				printf("# byte %" PRIu64 ": check passes but lookup 0x%" PRIx64
				       " gives %s\n",
				       b, ri.va, lidia_strerror(n));
				ok = false;
			}
		}
		lidia_reader_close(r);
		free(p);
	}
	CHECK(ok, "%s: each range/strings byte set to 0xff: no crash; when check passes,"
		  " every range and lookup reads",
	      name);
}

/* ---- Messages ---- */

static void messages(void)
{
	static const struct {
		int code;
		const char *name;
	} codes[] = {
#define X(code, msg) { code, #code },
		LIDIA_ERRORS(X)
#undef X
	};
	size_t n = sizeof(codes) / sizeof(codes[0]);
	bool ok = true;

	for (size_t i = 0; i < n; i++) {
		const char *m = lidia_strerror(codes[i].code);

		if (!m || !*m || !strcmp(m, "unknown error") ||
		    !strcmp(m, lidia_strerror(0))) {
			printf("# %s: \"%s\"\n", codes[i].name, m ? m : "(null)");
			ok = false;
			continue;
		}
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(m, lidia_strerror(codes[j].code))) {
				printf("# %s and %s share \"%s\"\n", codes[i].name, codes[j].name,
				       m);
				ok = false;
			}
		}
	}
	CHECK(ok, "lidia_strerror gives a distinct non-empty message for each of the %zu"
		  " LIDIA_E_* codes",
	      n);
	ok = codes[0].code < -4095 && codes[n - 1].code < -4095;
	CHECK(ok, "LIDIA_E_* codes are below -4095 (never an -errno)");
	ok = !strcmp(lidia_strerror(-ENOENT), strerror(ENOENT));
	CHECK(ok, "lidia_strerror(-ENOENT) is strerror(ENOENT): \"%s\"", lidia_strerror(-ENOENT));
	ok = lidia_strerror(0) && *lidia_strerror(0) && lidia_strerror(LIDIA_E_BASE_) &&
	     lidia_strerror(LIDIA_E_END_) && lidia_strerror(-100000) && lidia_strerror(12345);
	CHECK(ok, "lidia_strerror is never NULL (0, the enum's ends, far-off values)");
}

int main(void)
{
	struct file narrow = { 0 }, wide = { 0 };
	bool ok;
	int err;

	err = make_base(&narrow, false);
	CHECK(err == 0 && narrow.va_w == 4 && narrow.field_w == 4 && narrow.line_w == 2,
	      "base file with 4/4/2 widths (%s)", lidia_strerror(err));
	if (err)
		return unit_exit();
	err = make_base(&wide, true);
	CHECK(err == 0 && wide.va_w == 8 && wide.field_w == 8 && wide.line_w == 4,
	      "base file with 8/8/4 widths (%s)", lidia_strerror(err));
	if (err)
		return unit_exit();
	CHECK(narrow.count == 5 && narrow.nlines && narrow.ssize > 18,
	      "the base files have every table non-empty");

	dump_dir = getenv("LIDIA_CORRUPT_DIR");
	if (dump_dir && !*dump_dir)
		dump_dir = NULL;
	if (dump_dir) {
		dump_file("good-narrow.lidia", narrow.buf, narrow.len);
		dump_file("good-wide.lidia", wide.buf, wide.len);
	}

	dump_as("truncation", "narrow");
	truncation(&narrow, "narrow");
	dump_as("truncation", "wide");
	truncation(&wide, "wide");
	dump_as("paths", NULL);
	truncated_paths(&narrow);
	dump_as("header", "narrow");
	header_fields(&narrow, "narrow");
	dump_as("header", "wide");
	header_fields(&wide, "wide");
	dump_as("overflow", "narrow");
	overflow(&narrow, "narrow");
	dump_as("overflow", "wide");
	overflow(&wide, "wide");
	ok = crc32c_bitwise((const unsigned char *)"123456789", 9) == 0xe3069283u;
	CHECK(ok, "the test's own CRC32C gives 0xe3069283 for \"123456789\"");
	dump_as("crc", "narrow");
	crc(&narrow, "narrow");
	dump_as("crc", "wide");
	crc(&wide, "wide");
	dump_as("entries", "narrow");
	hostile_entries(&narrow, "narrow");
	dump_as("entries", "wide");
	hostile_entries(&wide, "wide");
	depth_past_32_bits(&wide, "wide");
	dump_as("sweep", "narrow");
	byte_sweep(&narrow, "narrow");
	dump_as("sweep", "wide");
	byte_sweep(&wide, "wide");
	messages();
	if (dump_dir)
		printf("# %u refused images written to %s\n", dump_count, dump_dir);
	free(dump_seen);
	free(narrow.buf);
	free(wide.buf);
	/* Last: under UBSan a failure here stops the program. */
	empty_file();
	return unit_exit();
}
