/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: the names of inlined functions by their abstract origin (see the header). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "origin_names.h"

struct origin_slot {
	const void *origin;
	const char *name;
	uint32_t unit;
};

static size_t slot_of(const void *origin, size_t cap)
{
	return (size_t)(((uintptr_t)origin >> 2) * 0x9e3779b97f4a7c15ull >> 17) & (cap - 1);
}

static bool in_use(const struct origin_names *o, const struct origin_slot *s)
{
	return s->unit == o->unit && s->origin;
}

const char *origin_names_find(const struct origin_names *o, const void *origin)
{
	if (!o->cap)
		return NULL;
	for (size_t i = slot_of(origin, o->cap); in_use(o, &o->v[i]); i = (i + 1) & (o->cap - 1))
		if (o->v[i].origin == origin)
			return o->v[i].name;
	return NULL;
}

static void put(struct origin_names *o, const void *origin, const char *name)
{
	size_t i = slot_of(origin, o->cap);

	while (in_use(o, &o->v[i]))
		i = (i + 1) & (o->cap - 1);
	o->v[i] = (struct origin_slot){ origin, name, o->unit };
	o->n++;
}

/* Twice as many slots, this unit's entries moved over. */
static bool grow(struct origin_names *o)
{
	size_t cap = o->cap ? o->cap * 2 : 1024;
	struct origin_slot *old = o->v, *v = calloc(cap, sizeof(*v));
	size_t old_cap = o->cap;

	if (!v)
		return false;
	o->v = v;
	o->cap = cap;
	o->n = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].unit == o->unit && old[i].origin)
			put(o, old[i].origin, old[i].name);
	free(old);
	return true;
}

void origin_names_add(struct origin_names *o, const void *origin, const char *name)
{
	if ((o->n + 1) * 2 > o->cap && !grow(o))
		return;
	put(o, origin, name);
}

void origin_names_next_unit(struct origin_names *o)
{
	o->n = 0;
	/* Slots are emptied by their mark; once in 2^32 units, by hand. */
	if (++o->unit == 0 && o->v)
		memset(o->v, 0, o->cap * sizeof(*o->v));
}

void origin_names_release(struct origin_names *o)
{
	free(o->v);
	*o = (struct origin_names){ 0 };
}
