/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_STRTAB_H
#define LIDIA_STRTAB_H

#include <stddef.h>
#include <stdint.h>

/*
 * One string's slot: its pool offset + 1 (0: empty), and its hash, to skip
 * most compares. Side by side, so that a probe reads one cache line.
 */
struct strtab_slot {
	uint32_t off1;
	uint32_t hash;
};

/*
 * The strings table of a lidia file, built in its final byte form: each
 * string once, as a u32 length and its bytes, in first-use order after ""
 * (offset 0) and "[overflow]" (offset 4).
 */
struct strtab {
	unsigned char *pool; /* the table's bytes */
	size_t len, cap;
	struct strtab_slot *slots; /* open addressing */
	size_t nslots, count;
};

#define STRTAB_OVERFLOW 4

int strtab_init(struct strtab *t);
void strtab_release(struct strtab *t);

/* Make room for n more bytes of strings, in as many as strings more strings. */
int strtab_reserve(struct strtab *t, size_t n, size_t strings);

/* The offset of s[0..len) in the table, adding it on first use. */
int strtab_intern(struct strtab *t, const char *s, size_t len, uint64_t *off);

#endif
