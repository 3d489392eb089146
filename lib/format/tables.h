/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_TABLES_H
#define LIDIA_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "lidia.h"

/* A range as the builder holds it until written: its fields, not yet encoded. */
struct brange {
	uint64_t va;
	uint64_t length;
	uint32_t depth;
	uint32_t func;
	uint32_t file;
	uint32_t call_file;
	uint32_t call_line;
	uint32_t line_idx;
	uint32_t line_count;
	uint32_t seq; /* insertion order: the tie-breaker of the stable sort */
};

/* The four tables of a lidia file (spec sections 1 to 3 and 6), in the file's order. */
enum { TABLE_VA, TABLE_RANGES, TABLE_STRINGS, TABLE_LINES, NTABLES };

/* What the tables are made of, with the widths finalize chose. */
struct tables {
	const struct brange *ranges;
	size_t nranges;
	const struct lidia_line *lines;
	size_t nlines;
	const unsigned char *strings;
	size_t strings_len;
	unsigned va_size, field_size, line_size;
};

typedef int (*emit_fn)(void *ctx, const void *buf, size_t len);

/* Each table's size in bytes. */
void tables_sizes(const struct tables *t, uint64_t size[NTABLES]);

/* Table k's entries, and the bytes of one (the strings table: its bytes, of 1). */
size_t tables_entries(const struct tables *t, int k);
size_t tables_entry_size(const struct tables *t, int k);

/* Entries [lo, hi) of table k (not the strings table) encoded at out. */
void tables_encode_entries(const struct tables *t, int k, size_t lo, size_t hi, unsigned char *out);

/* Each table's CRC-32C; pieces of the tables encoded on up to threads threads. */
int tables_crc(const struct tables *t, unsigned threads, uint32_t crc[NTABLES]);

/* The tables, back to back, through emit, in order, in chunks, on this thread. */
int tables_emit(const struct tables *t, emit_fn emit, void *ctx);

/*
 * As tables_emit(), emit still called on this thread alone; with threads >= 2
 * and big tables, encoded on a second thread meanwhile (emit_pipe.c).
 */
int tables_emit_pipe(const struct tables *t, unsigned threads, emit_fn emit, void *ctx);

/* The tables, back to back, encoded into out (their sizes' sum) on up to threads threads. */
int tables_encode(const struct tables *t, unsigned threads, unsigned char *out);

#endif
