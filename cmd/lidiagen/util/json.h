/* SPDX-License-Identifier: Apache-2.0 */
/* JSON: what lookup --json, the manifest and the index print, and the index's lines read back. */
#ifndef LIDIAGEN_JSON_H
#define LIDIAGEN_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Print s[0..len) as a JSON string, quotes included. */
void json_string(FILE *f, const char *s, size_t len);

/* A NUL-terminated s, as json_string(). */
void json_str(FILE *f, const char *s);

/* ,"name":"value" (name is written as it is). */
void json_field(FILE *f, const char *name, const char *value);

/* The most strings one array of a parsed line may hold. */
#define JSON_MAX_ITEMS 32

enum json_type { JSON_STRING, JSON_NUMBER, JSON_BOOL, JSON_ARRAY };

/* One "key": value of a flat object; the strings point into the line parsed. */
struct json_field {
	const char *key;
	enum json_type type;
	const char *str;    /* JSON_STRING: NUL-terminated (a \u0000 in it is refused) */
	int64_t num;	    /* JSON_NUMBER: an integer that fits int64_t */
	bool on;	    /* JSON_BOOL */
	const char **items; /* JSON_ARRAY: strings only, into the caller's item store */
	size_t nitems;
};

/*
 * Parse line (NUL-terminated, modified in place: strings are unescaped
 * where they stand) as one flat JSON object whose values are strings,
 * integers, booleans or arrays of strings, into fields[0..*n) (at most
 * max; arrays' items into items[0..max_items) shared by all). Nothing but
 * white space may follow it. Returns NULL, or what is wrong with the line.
 */
const char *json_parse_flat(char *line, struct json_field *fields, size_t max, size_t *n,
			    const char **items, size_t max_items);

/* The field named key of fields[0..n), of type type; NULL if none (or another type). */
const struct json_field *json_get(const struct json_field *fields, size_t n, const char *key,
				  enum json_type type);

#endif
