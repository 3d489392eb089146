/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON read whole into a tree: a container image's manifests and indexes
 * nest objects in arrays in objects, which json_parse_flat() refuses.
 */
#ifndef LIDIAGEN_JSON_TREE_H
#define LIDIAGEN_JSON_TREE_H

#include <stdbool.h>
#include <stddef.h>

enum jt_type { JT_NULL, JT_BOOL, JT_NUMBER, JT_STRING, JT_ARRAY, JT_OBJECT };

struct jt {
	enum jt_type type;
	char *key;	 /* a member of an object: its name */
	char *str;	 /* JT_STRING: unescaped (a \u0000 cut it short); JT_NUMBER: its text */
	struct jt *kids; /* JT_ARRAY, JT_OBJECT: items, members */
	size_t n;
};

/* Parse text (NUL-terminated) as one JSON value; NULL when it is not one (or out of memory). */
struct jt *jt_parse(const char *text);
void jt_free(struct jt *t);

/* The member key of object t; NULL when t is no object or has none. */
const struct jt *jt_get(const struct jt *t, const char *key);

/* The string member key of object t; NULL when none (or no string). */
const char *jt_str(const struct jt *t, const char *key);

#endif
