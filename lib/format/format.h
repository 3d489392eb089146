/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Write and read: constants of the lidia v1 byte format, specified in
 * doc/lidia-v1.md (sections 1-3: layout, header, CRC32C, tables); "spec section N"
 * in comments across lib/ refers to that document.
 */
#ifndef LIDIA_FORMAT_H
#define LIDIA_FORMAT_H

#define LIDIA_MAGIC "\x2e\x64\x69\x61" /* ".dia" */
#define LIDIA_FORMAT_VERSION 1
#define LIDIA_HEADER_SIZE 128

/* Header field offsets. */
#define HDR_VA_SIZE 0x08
#define HDR_VA_COUNT 0x10
#define HDR_VA_OFF 0x18
#define HDR_VA_CRC 0x20
#define HDR_FIELD_SIZE 0x28
#define HDR_RANGE_COUNT 0x30
#define HDR_RANGE_OFF 0x38
#define HDR_RANGE_CRC 0x40
#define HDR_STR_SIZE 0x48
#define HDR_STR_OFF 0x50
#define HDR_STR_CRC 0x58
#define HDR_LINE_SIZE 0x60
#define HDR_LINE_COUNT 0x68
#define HDR_LINE_OFF 0x70
#define HDR_LINE_CRC 0x78

/* Range table field indexes. */
enum {
	RF_LENGTH,
	RF_DEPTH,
	RF_FUNC,
	RF_FILE,
	RF_LINE_IDX,
	RF_LINE_COUNT,
	RF_CALL_FILE,
	RF_CALL_LINE
};

#endif
