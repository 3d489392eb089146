/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIAGEN_SHA256_H
#define LIDIAGEN_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* SHA-256 (FIPS 180-4) of buf, as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *buf, size_t len, char out[65]);

#endif
