/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target for lidiagen's own reading of DWARF units (lib/dwarf/unit_scan.c),
 * which decides whether a partial unit holds code without libdw: the input
 * is a 2-byte little-endian length A, A bytes of .debug_abbrev, then
 * .debug_info (the rest). The units in it are scanned one after another,
 * with one abbreviation cache, as lidiagen scans a file's. It must never
 * crash, and what it reports must be within the sections.
 * Corpus: tests/fuzz/corpus/dwarf_units/ (see its README).
 */
#include <stdint.h>
#include <stdlib.h>

#include "lidia.h"
#include "unit_scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct abbrev_cache cache = { 0 };
	struct dwarf_sections s = { 0 };
	size_t alen;
	uint64_t off = 0;

	if (size < 2)
		return 0;
	alen = (size_t)data[0] | (size_t)data[1] << 8;
	if (alen > size - 2)
		alen = size - 2;
	s.abbrev = data + 2;
	s.abbrev_size = alen;
	s.info = data + 2 + alen;
	s.info_size = size - 2 - alen;
	/* Units one after another, as in a real section; at most a few dozen. */
	for (int unit = 0; unit < 64 && off + 4 <= s.info_size; unit++) {
		const uint8_t *p = s.info + off;
		uint64_t len = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
			       (uint64_t)p[3] << 24;
		struct unit_facts f;

		if (unit_scan(&cache, &s, off, &f) && f.comp_dir &&
		    !((const uint8_t *)f.comp_dir >= s.info &&
		      (const uint8_t *)f.comp_dir < s.info + s.info_size))
			abort(); /* a string form other than DW_FORM_string, with no .debug_str */
		if (len >= 0xfffffff0 || len > s.info_size - off - 4)
			break;
		off += 4 + len;
	}
	abbrev_cache_release(&cache);
	return 0;
}
