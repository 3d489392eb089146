/* SPDX-License-Identifier: Apache-2.0 */
/*
 * huge_map() and huge_advise() (lib/base/huge_pages.c), read back from the
 * kernel: the mapping starts on a 2 MiB boundary and is exactly as long as
 * asked (what was taken beyond it is given back, so munmap(p, len) releases
 * all of it), and the advice covers the whole huge pages inside a range,
 * never the pages at its ends (/proc/self/smaps: "hg" among a mapping's
 * VmFlags, which the kernel keeps per mapping and splits mappings for).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "huge_pages.h"
#include "unit.h"

#define MIB ((size_t)1 << 20)

/* Whether the page at p is mapped: mincore() says ENOMEM where nothing is. */
static bool mapped(const void *p)
{
	unsigned char v;

	return mincore((void *)((uintptr_t)p & ~(uintptr_t)4095), 4096, &v) == 0 || errno != ENOMEM;
}

/*
 * The mapping holding p in /proc/self/smaps: its bounds and whether its
 * VmFlags have "hg" (MADV_HUGEPAGE). False when none holds it.
 */
static bool mapping_of(const void *p, uintptr_t *lo, uintptr_t *hi, bool *huge)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false, found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (sscanf(line, "%lx-%lx ", &a, &b) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			if (found)
				break;
			in = (uintptr_t)p >= a && (uintptr_t)p < b;
			if (in) {
				*lo = a;
				*hi = b;
				*huge = false;
			}
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			*huge = strstr(line, " hg") != NULL;
			found = true;
		}
	}
	fclose(f);
	return found;
}

static void check_map(size_t len, const char *what)
{
	unsigned char *p = huge_map(len, MAP_NORESERVE, false);
	size_t span = (len + 4095) & ~(size_t)4095;
	uintptr_t lo, hi;
	bool huge;

	CHECK(p != MAP_FAILED, "%s: mapped", what);
	if (p == MAP_FAILED)
		return;
	CHECK((uintptr_t)p % (2 * MIB) == 0, "%s: starts on a 2 MiB boundary", what);
	CHECK(mapped(p) && mapped(p + span - 1), "%s: all of it is there", what);
	CHECK(!mapped(p + span), "%s: what was taken past its end is given back", what);
	CHECK(mapping_of(p, &lo, &hi, &huge) && !huge, "%s: no advice until asked", what);
	memset(p, 0xa5, len);
	CHECK(munmap(p, len) == 0, "%s: munmap(p, len) takes it", what);
	CHECK(!mapped(p) && !mapped(p + span - 1), "%s: and leaves nothing of it", what);
}

/* huge_map(whole): every page of it asks for huge pages, at once. */
static void check_whole(void)
{
	unsigned char *p = huge_map(8 * MIB, 0, true);
	uintptr_t lo, hi;
	bool first = false, last = false;

	if (p == MAP_FAILED)
		return;
	first = mapping_of(p, &lo, &hi, &first) && first;
	last = mapping_of(p + 8 * MIB - 1, &lo, &hi, &last) && last;
	CHECK(first && last, "huge_map(whole): all of it asks for huge pages");
	munmap(p, 8 * MIB);
}

int main(void)
{
	unsigned char *p;
	uintptr_t lo, hi;
	bool huge;

	check_map(8 * MIB, "8 MiB");
	check_map(8 * MIB + 12345, "8 MiB and a bit");
	check_map(37 * MIB + 4096, "37 MiB and a page");

	p = huge_map(64 * 1024, 0, false);
	CHECK(p != MAP_FAILED && mapped(p), "a small buffer: an ordinary mapping");
	if (p != MAP_FAILED)
		munmap(p, 64 * 1024);

	p = huge_map(16 * MIB, MAP_NORESERVE, false);
	if (p == MAP_FAILED)
		return unit_exit();
	/* From 1 MiB in, 11 MiB: the whole huge pages inside are 2-12 MiB. */
	huge_advise(p + MIB, 11 * MIB);
	if (!mapping_of(p + 2 * MIB, &lo, &hi, &huge) || !huge) {
		printf("# skip: no MADV_HUGEPAGE here (a kernel without transparent huge pages)\n");
	} else {
		CHECK(lo == (uintptr_t)p + 2 * MIB && hi == (uintptr_t)p + 12 * MIB,
		      "huge_advise: the whole huge pages inside the range, 2-12 MiB (got "
		      "%#lx-%#lx)",
		      (unsigned long)(lo - (uintptr_t)p), (unsigned long)(hi - (uintptr_t)p));
		CHECK(mapping_of(p + MIB, &lo, &hi, &huge) && !huge,
		      "huge_advise: not the partial huge page at its start");
		CHECK(mapping_of(p + 12 * MIB, &lo, &hi, &huge) && !huge,
		      "huge_advise: not the partial huge page at its end");
		huge_advise(p + 14 * MIB, MIB);
		CHECK(mapping_of(p + 14 * MIB, &lo, &hi, &huge) && !huge,
		      "huge_advise: nothing for a range with no whole huge page");
		check_whole();
	}
	CHECK(munmap(p, 16 * MIB) == 0 && !mapped(p + 2 * MIB), "an advised mapping unmaps whole");
	return unit_exit();
}
