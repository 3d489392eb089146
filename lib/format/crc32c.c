/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRC-32C. Every table of a lidia file carries one, and Pyroscope checks
 * them at open, so this runs over every byte we write: hardware where there
 * is SSE4.2, slicing-by-8 elsewhere.
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "crc32c.h"

#define POLY 0x82f63b78u

/* Built once, by the first call of any thread (pthread_once), then only read. */
static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

static uint32_t crc_sw(uint32_t c, const unsigned char *p, size_t n)
{
	pthread_once(&table_once, make_table);
	while (n >= 8) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		lo = __builtin_bswap32(lo);
		hi = __builtin_bswap32(hi);
#endif
		lo ^= c;
		c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
		    table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
		    table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
		p += 8;
		n -= 8;
	}
	while (n--)
		c = table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

/*
 * a times b modulo the polynomial, both in the reflected order of the CRC
 * (bit 31 is x^0).
 */
static uint32_t mul_mod(uint32_t a, uint32_t b)
{
	uint32_t m = 1u << 31, p = 0;

	for (;;) {
		if (a & m) {
			p ^= b;
			if (!(a & (m - 1)))
				break;
		}
		m >>= 1;
		b = b & 1 ? (b >> 1) ^ POLY : b >> 1;
	}
	return p;
}

/* x^(8 * len) modulo the polynomial: len bytes' worth of shifting, by squaring. */
static uint32_t shift_of(uint64_t len)
{
	uint32_t p = 1u << 31, sq = 1u << 30; /* x^0; x^1, squared as the bits go up */

	for (len *= 8; len; len >>= 1) {
		if (len & 1)
			p = mul_mod(sq, p);
		sq = mul_mod(sq, sq);
	}
	return p;
}

#if defined(__x86_64__)
/*
 * Bytes of each of the three runs crc_hw() takes side by side. The crc32
 * instruction gives its result 3 cycles on and can start one a cycle, so
 * one chain of them runs at a third of the speed of three independent
 * ones; the three CRCs are then joined (two multiplications, as
 * lidia_crc32c_combine()). 8 KiB each keeps the joining to a few percent.
 */
#define LANE 8192

/* x^(8 * LANE) modulo the polynomial: what joining a lane's CRC to the next multiplies by. */
static uint32_t lane_shift;

__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t c, const unsigned char *p,
							 size_t n)
{
	uint64_t c64 = c;

	for (; n >= 3 * LANE; p += 3 * LANE, n -= 3 * LANE) {
		uint64_t b64 = 0, d64 = 0;

		for (size_t i = 0; i < LANE; i += 8) {
			uint64_t u, v, w;

			memcpy(&u, p + i, 8);
			memcpy(&v, p + LANE + i, 8);
			memcpy(&w, p + 2 * LANE + i, 8);
			c64 = __builtin_ia32_crc32di(c64, u);
			b64 = __builtin_ia32_crc32di(b64, v);
			d64 = __builtin_ia32_crc32di(d64, w);
		}
		/* Joined as lidia_crc32c_combine() joins: each state moved past the bytes after it. */
		c64 = mul_mod(lane_shift, mul_mod(lane_shift, (uint32_t)c64) ^ (uint32_t)b64) ^
		      (uint32_t)d64;
	}
	while (n >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c64 = __builtin_ia32_crc32di(c64, v);
		p += 8;
		n -= 8;
	}
	c = (uint32_t)c64;
	while (n--)
		c = __builtin_ia32_crc32qi(c, *p++);
	return c;
}

/* Asked once, like the table. */
static pthread_once_t hw_once = PTHREAD_ONCE_INIT;
static bool hw;

static void detect_hw(void)
{
	__builtin_cpu_init();
	hw = __builtin_cpu_supports("sse4.2");
	lane_shift = shift_of(LANE);
}

static bool have_hw(void)
{
	pthread_once(&hw_once, detect_hw);
	return hw;
}
#endif

uint32_t lidia_crc32c(uint32_t crc, const void *buf, size_t len)
{
	uint32_t c = ~crc;

#if defined(__x86_64__)
	if (have_hw())
		return ~crc_hw(c, buf, len);
#endif
	return ~crc_sw(c, buf, len);
}

uint32_t lidia_crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2)
{
	return mul_mod(shift_of(len2), crc1) ^ crc2;
}
