/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A list of problems met with inputs, each the path it names (and the
 * member) and its message: the batch's failed inputs for the manifest, the
 * index's errors, one shape for both.
 */
#ifndef LIDIAGEN_PROBLEMS_H
#define LIDIAGEN_PROBLEMS_H

#include <stddef.h>

struct problem {
	char *path, *msg;
};

struct problems {
	struct problem *v;
	size_t n, cap;
};

/* Add copies of path and msg: 0, or -ENOMEM (nothing added). */
int problems_add(struct problems *p, const char *path, const char *msg);

/* Sort by path, then message: the order every output lists them in. */
void problems_sort(struct problems *p);

/* Free them all; p is empty again. */
void problems_release(struct problems *p);

#endif
