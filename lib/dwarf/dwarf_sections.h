/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DWARF_SECTIONS_H
#define LIDIA_DWARF_SECTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The inflated sections lidiagen's own DWARF readers read (line_table.c,
 * unit_scan.c, die_reader.c, range_lists.c,
 * code_owners.c), as libdw left them; NULL:
 * absent (or not of the byte order those readers read).
 */
struct dwarf_sections {
	const unsigned char *line, *str, *line_str;
	size_t line_size, str_size, line_str_size;
	const unsigned char *info, *abbrev;
	size_t info_size, abbrev_size;
	const unsigned char *ranges, *rnglists; /* range lists: DWARF 4, DWARF 5 */
	size_t ranges_size, rnglists_size;
	const unsigned char *aranges; /* which unit describes which code (code_owners.c) */
	size_t aranges_size;
	const unsigned char *alt_info; /* the dwz file's .debug_info, libdw's bytes of it */
	size_t alt_info_size;
};

/*
 * The NUL-terminated string at off in .debug_line_str (line_str) or
 * .debug_str; NULL when off is outside it or the string runs past its end.
 */
static inline const char *dwarf_sections_str(const struct dwarf_sections *s, bool line_str,
					     uint64_t off)
{
	const unsigned char *base = line_str ? s->line_str : s->str;
	size_t size = line_str ? s->line_str_size : s->str_size;

	if (!base || off >= size || !memchr(base + off, 0, size - off))
		return NULL;
	return (const char *)base + off;
}

#endif
