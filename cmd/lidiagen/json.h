/* SPDX-License-Identifier: Apache-2.0 */
/* JSON output: what lookup --json and the manifest print. */
#ifndef LIDIAGEN_JSON_H
#define LIDIAGEN_JSON_H

#include <stddef.h>
#include <stdio.h>

/* Print s[0..len) as a JSON string, quotes included. */
void json_string(FILE *f, const char *s, size_t len);

#endif
