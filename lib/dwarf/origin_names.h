/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_ORIGIN_NAMES_H
#define LIDIA_ORIGIN_NAMES_H

#include <stddef.h>
#include <stdint.h>

/*
 * The names of inlined functions by their abstract origin, for the unit
 * being walked: C++ inlines the same few functions thousands of times, and
 * following each inline frame to its origin and the origin to its
 * declaration for the name was a sixth of a dwz'd file's time. An origin is
 * known by the address of its DIE's bytes (unique across a file and its dwz
 * file). Entries of earlier units are dropped (memory stays at a unit's);
 * a table never told of a next unit keeps all it is given.
 */
struct origin_slot;

struct origin_names {
	struct origin_slot *v;
	size_t n, cap;
	uint32_t unit; /* the current unit's mark: entries with another are empty */
};

/* The name found for origin in this unit, or NULL. */
const char *origin_names_find(const struct origin_names *o, const void *origin);

/* name for origin, until the next unit (not kept when there is no memory). */
void origin_names_add(struct origin_names *o, const void *origin, const char *name);

/* A new unit: the names of the last one forgotten. */
void origin_names_next_unit(struct origin_names *o);

void origin_names_release(struct origin_names *o);

#endif
