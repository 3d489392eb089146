/* SPDX-License-Identifier: Apache-2.0 */
/* A list of problems met with inputs (problems.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "problems.h"

int problems_add(struct problems *p, const char *path, const char *msg)
{
	struct problem *e;

	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		void *v = realloc(p->v, cap * sizeof(*p->v));

		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	e = &p->v[p->n];
	e->path = strdup(path);
	e->msg = strdup(msg);
	if (!e->path || !e->msg) {
		free(e->path);
		free(e->msg);
		return -ENOMEM;
	}
	p->n++;
	return 0;
}

static int cmp_problem(const void *pa, const void *pb)
{
	const struct problem *a = pa, *b = pb;
	int c = strcmp(a->path, b->path);

	return c ? c : strcmp(a->msg, b->msg);
}

void problems_sort(struct problems *p)
{
	if (p->n > 1)
		qsort(p->v, p->n, sizeof(*p->v), cmp_problem);
}

void problems_release(struct problems *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].path);
		free(p->v[i].msg);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}
