/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_NAME_BLOCKS_H
#define LIDIA_NAME_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Strings that must outlive a buffer they were made in, until the builder
 * has interned them: kept in a list of blocks, which never move.
 */
struct name_block {
	struct name_block *next;
	size_t used, cap;
	char data[];
};

/* A copy of a followed by b (either may be NULL) in *list; NULL when out of memory. */
const char *name_blocks_str(struct name_block **list, const char *a, const char *b);

/* Empty *list for reuse, keeping one block (all: free every block). */
void name_blocks_reset(struct name_block **list, bool all);

/* The blocks of *from joined to *to's (their strings stay where they are); *from empty. */
void name_blocks_move(struct name_block **to, struct name_block **from);

#endif
