/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: sets of address intervals, what higher-priority sources already cover. */
#include "internal.h"
#include "intervals.h"

int intervals_add(struct intervals *s, uint64_t lo, uint64_t hi)
{
	int err;

	if (hi <= lo)
		return 0;
	if ((err = LIDIA_GROW(s->v, s->n + 1, s->cap)))
		return err;
	s->v[s->n++] = (struct interval){ lo, hi };
	return 0;
}

static int cmp_interval(const void *pa, const void *pb)
{
	const struct interval *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

void intervals_normalize(struct intervals *s)
{
	size_t n = 0;

	sort_array(s->v, s->n, sizeof(*s->v), cmp_interval);
	for (size_t i = 0; i < s->n; i++) {
		if (n && s->v[i].lo <= s->v[n - 1].hi) {
			if (s->v[i].hi > s->v[n - 1].hi)
				s->v[n - 1].hi = s->v[i].hi;
		} else {
			s->v[n++] = s->v[i];
		}
	}
	s->n = n;
}
