/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SHA-256 of buffers and files (the index's input hashes, --fallback-key
 * sha256, the manifest's and the metadata's sha256), by nettle: its
 * x86-64 code with the SHA extensions hashes about six times as fast as
 * the portable C this replaced.
 */
#ifndef LIDIAGEN_SHA256_H
#define LIDIAGEN_SHA256_H

#include <nettle/sha2.h>
#include <stddef.h>
#include <stdint.h>

/* SHA-256 (FIPS 180-4) of buf, as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *buf, size_t len, char out[65]);

/* The SHA-256 of a file's contents, read in pieces; -errno on failure. */
int sha256_fd(int fd, char out[65]); /* from its start, whatever fd's offset */
int sha256_file(const char *path, char out[65]);

/*
 * A SHA-256 made piece by piece, as its bytes go by for another reader (an
 * archive hashed in the one read that walks it): _init, _add each piece in
 * order, _hex once. bytes counts what was added.
 */
struct sha256_pieces {
	struct sha256_ctx c;
	uint64_t bytes;
};
void sha256_pieces_init(struct sha256_pieces *p);
void sha256_pieces_add(struct sha256_pieces *p, const void *buf, size_t len);
void sha256_pieces_hex(struct sha256_pieces *p, char out[65]);

#endif
