/* SPDX-License-Identifier: Apache-2.0 */
/* The string members of a JSON object (aws_json.c), for the credentials services' answers. */
#ifndef LIDIAGEN_AWS_JSON_H
#define LIDIAGEN_AWS_JSON_H

#include <stddef.h>
#include <time.h>

/*
 * The string member name of the top-level object in text, as a malloc'd
 * string: 0; -ENOENT when it has none, -EBADMSG when the text is not such
 * an object or the member not such a string.
 */
int aws_json_string(const char *text, size_t len, const char *name, char **out);

/* The same for a member that is a small non-negative integer ("Version": 1). */
int aws_json_integer(const char *text, size_t len, const char *name, long *out);

/* "2026-12-03T09:00:00Z" (fractions and an offset of Z or +00:00 allowed) as time_t: 0; else -1. */
int aws_parse_time(const char *s, time_t *out);

#endif
