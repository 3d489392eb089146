/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target for lidiagen's DWARF line-program decoder (lib/dwarf/line_table.c):
 * the input is a .debug_line section (and serves as .debug_str and
 * .debug_line_str too, so that string forms point somewhere); every unit in
 * it is decoded with both address sizes. It must never crash, and the rows it
 * returns must be in address order with sequences ended.
 * Corpus: tests/fuzz/corpus/dwarf_lines/ (see its README).
 */
#include <stdint.h>
#include <stdlib.h>

#include "line_table.h"
#include "lidia.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwarf_sections s = {
		.line = data,
		.str = data,
		.line_str = data,
		.line_size = size,
		.str_size = size,
		.line_str_size = size,
	};
	struct line_table lt = { 0 };

	for (unsigned as = 4; as <= 8; as += 4) {
		uint64_t off = 0;

		/* Units one after another, as in a real section; at most a few. */
		for (int unit = 0; unit < 8 && off + 4 <= size; unit++) {
			uint64_t len = (uint64_t)data[off] | (uint64_t)data[off + 1] << 8 |
				       (uint64_t)data[off + 2] << 16 |
				       (uint64_t)data[off + 3] << 24;

			if (!line_table_decode(&lt, &s, off, unit & 1 ? "/comp" : NULL, as)) {
				for (size_t i = 1; i < lt.nrows; i++)
					if (lt.rows[i].addr < lt.rows[i - 1].addr &&
					    lt.rows[i - 1].file != NULL)
						abort(); /* out of order within a sequence */
				if (lt.nrows && lt.rows[lt.nrows - 1].file)
					abort(); /* the last sequence is not ended */
			}
			if (len == 0xffffffff || len > size - off - 4)
				break;
			off += 4 + len;
		}
	}
	line_table_release(&lt);
	return 0;
}
