/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Support: growable arrays, behind LIDIA_GROW (internal.h): amortised growth,
 * the one way; and room for a count known ahead (lidia_reserve()).
 */
#include "huge_pages.h"
#include "internal.h"

int lidia_grow(void **buf, size_t *cap, size_t need, size_t elem_size)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	/* By half again each time: less slack than doubling, as few copies in the end. */
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n += n / 2 + 16;
	}
	if (n > SIZE_MAX / elem_size)
		return -ENOMEM;
	/* Big arrays on huge pages: one fault for 2 MiB, not 512 (huge_pages.h). */
	n = huge_fit(n * elem_size, false) / elem_size;
	p = realloc(*buf, n * elem_size);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

int lidia_reserve(void **buf, size_t *cap, size_t need, size_t elem_size)
{
	size_t n;
	void *p;

	if (need <= *cap)
		return 0;
	if (need > SIZE_MAX / elem_size)
		return -ENOMEM;
	n = huge_fit(need * elem_size, false) / elem_size;
	p = realloc(*buf, n * elem_size);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}
