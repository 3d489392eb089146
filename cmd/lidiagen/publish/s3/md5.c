/* SPDX-License-Identifier: Apache-2.0 */
/* MD5 over one buffer, by nettle (md5.h says why it is here). */
#include <nettle/base64.h>
#include <nettle/md5.h>
#include <stdint.h>
#include <string.h>

#include "md5.h"

static void md5_of(const void *buf, size_t len, unsigned char digest[16])
{
	struct md5_ctx c;

	md5_init(&c);
	md5_update(&c, len, buf);
	md5_digest(&c, 16, digest);
}

void md5_base64(const void *buf, size_t len, char out[25])
{
	unsigned char digest[16];

	md5_of(buf, len, digest);
	base64_encode_raw(out, sizeof(digest), digest);
	out[BASE64_ENCODE_RAW_LENGTH(sizeof(digest))] = '\0';
}

void md5_hex(const void *buf, size_t len, char out[33])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char digest[16];

	md5_of(buf, len, digest);
	for (int i = 0; i < 16; i++) {
		out[2 * i] = hex[digest[i] >> 4];
		out[2 * i + 1] = hex[digest[i] & 15];
	}
	out[32] = 0;
}
