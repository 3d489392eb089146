/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MD5 (RFC 1321), for Content-MD5 only: the one payload checksum every
 * S3-compatible server checks (AWS, s3rver, MinIO, Ceph, GCS), so that a
 * body damaged on its way is refused instead of stored. Not for security.
 */
#ifndef LIDIAGEN_MD5_H
#define LIDIAGEN_MD5_H

#include <stddef.h>

/* The MD5 digest of buf, base64-encoded as Content-MD5 wants (24 chars and a NUL). */
void md5_base64(const void *buf, size_t len, char out[25]);

/* The same in lowercase hex, as S3's ETag of a single PUT shows it (32 chars and a NUL). */
void md5_hex(const void *buf, size_t len, char out[33]);

#endif
