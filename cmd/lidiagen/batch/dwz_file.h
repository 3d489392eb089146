/* SPDX-License-Identifier: Apache-2.0 */
/* Telling a dwz supplementary file from other ELF images (dwz_file.c). */
#ifndef LIDIAGEN_DWZ_FILE_H
#define LIDIAGEN_DWZ_FILE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Whether the image (size bytes at data, or the file at path when data is
 * NULL) is a dwz supplementary file: DWARF, no executable section, no
 * program header. false for anything unreadable.
 */
bool dwz_file(const char *path, const void *data, size_t size);

/* The same, and its GNU build ID in hex into hex ("" when it has none). */
bool dwz_file_id(const char *path, const void *data, size_t size, char *hex, size_t hex_size);

#endif
