/* SPDX-License-Identifier: Apache-2.0 */
/*
 * line_overlap_merge (lib/dwarf/line_overlap.c) on sequences made here: two
 * that overlap in part (the tail of the longer one kept, not dropped), two
 * identical ones (folded code: the first one's rows, as they are), one
 * inside another, and one whose addresses go back (left to the caller).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "line_overlap.h"
#include "unit.h"

#define END(a)                                                                                     \
	{                                                                                          \
		(a), NULL, 0                                                                       \
	}

/* The merged rows as "ADDR:LINE " (LINE 'e' for an end), for one comparison. */
static const char *merged(const struct line_row *rows, const struct line_seq *seqs, size_t k,
			  int *rc)
{
	static char buf[512];
	struct line_row out[32];
	size_t n = 0, len = 0;

	*rc = line_overlap_merge(out, &n, rows, seqs, k);
	buf[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(buf) - 32; i++)
		len += (size_t)(out[i].file ? snprintf(buf + len, sizeof(buf) - len, "%llx:%d ",
						       (unsigned long long)out[i].addr, out[i].line)
					    : snprintf(buf + len, sizeof(buf) - len, "%llx:e ",
						       (unsigned long long)out[i].addr));
	return buf;
}

int main(void)
{
	static const struct line_row partial[] = {
		{ 0x10, "a.c", 1 }, { 0x14, "a.c", 2 }, END(0x20), { 0x18, "b.c", 7 },
		{ 0x1c, "b.c", 8 }, { 0x24, "b.c", 9 }, END(0x28),
	};
	static const struct line_row same[] = {
		{ 0x10, "a.c", 1 }, { 0x14, "a.c", 2 }, END(0x20),
		{ 0x10, "b.c", 7 }, { 0x14, "b.c", 8 }, END(0x20),
	};
	static const struct line_row nested[] = {
		{ 0x10, "a.c", 1 }, END(0x40), { 0x20, "b.c", 5 }, { 0x24, "b.c", 6 }, END(0x30),
	};
	static const struct line_row back[] = {
		{ 0x10, "a.c", 1 }, { 0x8, "a.c", 2 }, END(0x20), { 0x18, "b.c", 7 }, END(0x28),
	};
	const struct line_seq two[] = { { 0, 3 }, { 3, 4 } }, two_short[] = { { 0, 3 }, { 3, 3 } };
	const struct line_seq two_back[] = { { 0, 3 }, { 3, 2 } };
	const struct line_seq nest[] = { { 0, 2 }, { 2, 3 } };
	const char *got;
	int rc;

	got = merged(partial, two, 2, &rc);
	CHECK(rc == 0 && !strcmp(got, "10:1 14:2 18:7 1c:8 24:9 28:e "),
	      "overlap in part: the latest row wins, the longer sequence's tail kept (%s)", got);
	got = merged(same, two_short, 2, &rc);
	CHECK(rc == 0 && !strcmp(got, "10:1 14:2 20:e "),
	      "identical sequences: the first one's rows (%s)", got);
	got = merged(nested, nest, 2, &rc);
	CHECK(rc == 0 && !strcmp(got, "10:1 20:5 24:6 30:1 40:e "),
	      "a sequence inside another: the outer one's row again after it ends (%s)", got);
	got = merged(back, two_back, 2, &rc);
	CHECK(rc == 1 && !strcmp(got, ""), "addresses that go back: nothing merged, 1 (%s)", got);
	return unit_exit();
}
