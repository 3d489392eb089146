/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_CRC32C_H
#define LIDIA_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * CRC-32C (Castagnoli), continuing from crc (0 to start): the same value as
 * Go's crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), buf). Uses the
 * SSE4.2 instruction where the CPU has it.
 */
uint32_t lidia_crc32c(uint32_t crc, const void *buf, size_t len);

/*
 * The CRC of A then B from A's (crc1), B's (crc2, each started from 0) and
 * B's length: pieces of a table checked on threads of their own, joined.
 */
uint32_t lidia_crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2);

#endif
