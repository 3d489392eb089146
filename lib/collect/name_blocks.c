/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: names made on the way (demangled, joined, shortened), in blocks that never move. */
#include "internal.h"
#include "name_blocks.h"

/* A copy of a and b (either may be NULL) in the blocks of *list, which never move. */
const char *name_blocks_str(struct name_block **list, const char *a, const char *b)
{
	size_t na = a ? strlen(a) : 0, nb = b ? strlen(b) : 0, n = na + nb + 1;
	struct name_block *blk = *list;
	char *p;

	if (!blk || blk->cap - blk->used < n) {
		size_t cap = n > 65536 ? n : 65536;

		blk = malloc(sizeof(*blk) + cap);
		if (!blk)
			return NULL;
		blk->next = *list;
		blk->used = 0;
		blk->cap = cap;
		*list = blk;
	}
	p = blk->data + blk->used;
	if (na)
		memcpy(p, a, na);
	if (nb)
		memcpy(p + na, b, nb);
	p[na + nb] = '\0';
	blk->used += n;
	return p;
}

/* Empty *list for reuse (all: free every block). */
void name_blocks_reset(struct name_block **list, bool all)
{
	struct name_block *b = *list;

	while (b && (all || b->next)) {
		struct name_block *next = b->next;

		free(b);
		b = next;
	}
	*list = b;
	if (b)
		b->used = 0;
}

void name_blocks_move(struct name_block **to, struct name_block **from)
{
	struct name_block *last = *from;

	if (!last)
		return;
	while (last->next)
		last = last->next;
	last->next = *to;
	*to = *from;
	*from = NULL;
}
