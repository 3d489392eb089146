/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIAGEN_SHA256_H
#define LIDIAGEN_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	unsigned char buf[64];
	size_t n;     /* bytes in buf */
	uint64_t len; /* bytes in all */
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t len);
void sha256_final(struct sha256 *c, char out[65]);

/* SHA-256 (FIPS 180-4) of buf, as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *buf, size_t len, char out[65]);

/* The SHA-256 of a file's contents, read in pieces; -errno on failure. */
int sha256_file(const char *path, char out[65]);

#endif
