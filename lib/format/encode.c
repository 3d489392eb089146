/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Write: the builder's tables encoded as the file has them. Tables are not
 * kept encoded (memory stays at the range array whatever the output size):
 * finalize encodes them once for the CRCs, and writing encodes them again.
 * Either way a table is cut into pieces of whole entries, encoded side by
 * side on the threads given (a big C++ library's tables are 100 MB), each
 * piece's CRC joined to the one before (lidia_crc32c_combine).
 */
#include <errno.h>
#include <stdlib.h>

#include "crc32c.h"
#include "internal.h"
#include "run_items.h"
#include "tables.h"

#define CHUNK 65536
#define MIN_PIECE (1u << 20) /* smaller tables are one piece: threads cost more */
#define MAX_PIECES (4 * RUN_ITEMS_MAX)

size_t tables_entry_size(const struct tables *t, int k)
{
	switch (k) {
	case TABLE_VA:
		return t->va_size;
	case TABLE_RANGES:
		return 8 * (size_t)t->field_size;
	case TABLE_STRINGS:
		return 1;
	default:
		return 2 * (size_t)t->line_size;
	}
}

size_t tables_entries(const struct tables *t, int k)
{
	return k == TABLE_STRINGS ? t->strings_len : k == TABLE_LINES ? t->nlines : t->nranges;
}

void tables_sizes(const struct tables *t, uint64_t size[NTABLES])
{
	for (int k = 0; k < NTABLES; k++)
		size[k] = (uint64_t)tables_entries(t, k) * tables_entry_size(t, k);
}

/* v in size bytes; inlined with a constant size, one store. */
static inline void put_field(unsigned char *p, uint64_t v, unsigned size)
{
	if (size == 8)
		put_le64(p, v);
	else if (size == 4)
		put_le32(p, (uint32_t)v);
	else
		put_le16(p, (uint16_t)v);
}

/*
 * The encoders of a span of entries, one per table: each is inlined for each
 * width finalize can choose, so the widths are not looked at per field
 * (encoding was 3% of a conversion, twice over: CRCs and writing).
 */
static inline void encode_vas(const struct brange *r, size_t n, unsigned char *p, unsigned size)
{
	for (size_t i = 0; i < n; i++, p += size)
		put_field(p, r[i].va, size);
}

static inline void encode_ranges(const struct brange *r, size_t n, unsigned char *p, unsigned size)
{
	for (size_t i = 0; i < n; i++, p += 8 * size) {
		put_field(p, r[i].length, size);
		put_field(p + size, r[i].depth, size);
		put_field(p + 2 * size, r[i].func, size);
		put_field(p + 3 * size, r[i].file, size);
		put_field(p + 4 * size, r[i].line_idx, size);
		put_field(p + 5 * size, r[i].line_count, size);
		put_field(p + 6 * size, r[i].call_file, size);
		put_field(p + 7 * size, r[i].call_line, size);
	}
}

static inline void encode_lines(const struct lidia_line *l, size_t n, unsigned char *p,
				unsigned size)
{
	for (size_t i = 0; i < n; i++, p += 2 * size) {
		put_field(p, l[i].offset, size);
		put_field(p + size, l[i].line, size);
	}
}

/*
 * Each width's case calls with its constant: finalize chooses 4 or 8 bytes
 * for addresses and range fields, 2 or 4 for line rows.
 */
void tables_encode_entries(const struct tables *t, int k, size_t lo, size_t hi, unsigned char *out)
{
	size_t n = hi - lo;

	if (k == TABLE_VA) {
		if (t->va_size == 4)
			encode_vas(t->ranges + lo, n, out, 4);
		else
			encode_vas(t->ranges + lo, n, out, 8);
	} else if (k == TABLE_RANGES) {
		if (t->field_size == 4)
			encode_ranges(t->ranges + lo, n, out, 4);
		else
			encode_ranges(t->ranges + lo, n, out, 8);
	} else if (k == TABLE_LINES) {
		if (t->line_size == 2)
			encode_lines(t->lines + lo, n, out, 2);
		else
			encode_lines(t->lines + lo, n, out, 4);
	}
}

/* Entries [lo, hi) of table k through emit, a chunk at a time (buf: CHUNK bytes). */
static int emit_entries(const struct tables *t, int k, size_t lo, size_t hi, unsigned char *buf,
			emit_fn emit, void *ctx)
{
	size_t size = tables_entry_size(t, k), per = CHUNK / size;
	int err;

	if (k == TABLE_STRINGS)
		return hi > lo ? emit(ctx, t->strings + lo, hi - lo) : 0;
	while (lo < hi) {
		size_t n = hi - lo < per ? hi - lo : per;

		tables_encode_entries(t, k, lo, lo + n, buf);
		if ((err = emit(ctx, buf, n * size)))
			return err;
		lo += n;
	}
	return 0;
}

int tables_emit(const struct tables *t, emit_fn emit, void *ctx)
{
	unsigned char *buf = malloc(CHUNK);
	int err = buf ? 0 : -ENOMEM;

	for (int k = 0; k < NTABLES && !err; k++)
		err = emit_entries(t, k, 0, tables_entries(t, k), buf, emit, ctx);
	free(buf);
	return err;
}

/* Entries [lo, hi) of one table: a CRC from 0, or bytes at out. */
struct piece {
	int table;
	size_t lo, hi;
	unsigned char *out; /* NULL: the CRC only */
	uint32_t crc;
	int err;
};

struct pieces {
	const struct tables *t;
	struct piece v[MAX_PIECES + NTABLES];
	size_t n;
};

static int crc_sink(void *ctx, const void *buf, size_t len)
{
	uint32_t *crc = ctx;

	*crc = lidia_crc32c(*crc, buf, len);
	return 0;
}

static int copy_sink(void *ctx, const void *buf, size_t len)
{
	unsigned char **at = ctx;

	memcpy(*at, buf, len);
	*at += len;
	return 0;
}

static void run_piece(void *ctx, unsigned slot, size_t k)
{
	struct pieces *ps = ctx;
	struct piece *p = &ps->v[k];
	unsigned char *buf = malloc(CHUNK), *at = p->out;

	(void)slot;
	p->err = !buf	  ? -ENOMEM
		 : p->out ? emit_entries(ps->t, p->table, p->lo, p->hi, buf, copy_sink, &at)
			  : emit_entries(ps->t, p->table, p->lo, p->hi, buf, crc_sink, &p->crc);
	free(buf);
}

/*
 * Every table cut into pieces of about the same size, enough of them to keep
 * threads threads busy; out (if not NULL) is where the tables go, back to back.
 */
static void cut(struct pieces *ps, unsigned threads, unsigned char *out)
{
	uint64_t size[NTABLES], total = 0, want;

	tables_sizes(ps->t, size);
	for (int k = 0; k < NTABLES; k++)
		total += size[k];
	want = threads > 1 ? total / (4 * (uint64_t)threads) : total;
	if (want < MIN_PIECE)
		want = MIN_PIECE;
	ps->n = 0;
	for (int k = 0; k < NTABLES; k++) {
		size_t n = tables_entries(ps->t, k), es = tables_entry_size(ps->t, k);
		size_t parts = (size_t)(size[k] / want) + 1, per;

		if (parts > MAX_PIECES / NTABLES)
			parts = MAX_PIECES / NTABLES;
		per = (n + parts - 1) / parts;
		for (size_t lo = 0; lo < n; lo += per)
			ps->v[ps->n++] = (struct piece){ .table = k,
							 .lo = lo,
							 .hi = lo + per < n ? lo + per : n,
							 .out = out ? out + lo * es : NULL };
		if (out)
			out += size[k];
	}
}

/*
 * The tables cut into pieces (cut()) and each run (run_piece()): *out (to be
 * freed) holds them, their CRCs when to is NULL, else their bytes are at to.
 */
static int run_pieces(const struct tables *t, unsigned threads, unsigned char *to,
		      struct pieces **out)
{
	struct pieces *ps = malloc(sizeof(*ps));
	int err;

	*out = ps;
	if (!ps)
		return -ENOMEM;
	ps->t = t;
	cut(ps, threads, to);
	err = run_items(ps->n, threads ? threads : 1, NULL, run_piece, ps);
	for (size_t i = 0; i < ps->n && !err; i++)
		err = ps->v[i].err;
	return err;
}

int tables_crc(const struct tables *t, unsigned threads, uint32_t crc[NTABLES])
{
	struct pieces *ps;
	int err = run_pieces(t, threads, NULL, &ps);

	for (int k = 0; k < NTABLES; k++)
		crc[k] = 0;
	for (size_t i = 0; !err && i < ps->n; i++) {
		const struct piece *p = &ps->v[i];
		uint64_t len = (uint64_t)(p->hi - p->lo) * tables_entry_size(t, p->table);

		crc[p->table] = lidia_crc32c_combine(crc[p->table], p->crc, len);
	}
	free(ps);
	return err;
}

int tables_encode(const struct tables *t, unsigned threads, unsigned char *out)
{
	struct pieces *ps;
	int err = run_pieces(t, threads, out, &ps);

	free(ps);
	return err;
}
