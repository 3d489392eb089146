/* SPDX-License-Identifier: Apache-2.0 */
/* Under every aws_*.c: one-line errors, shown strings, the environment, secrets. */
#ifndef LIDIAGEN_AWS_UTIL_H
#define LIDIAGEN_AWS_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "aws_load.h"

/* One line in ld->err; returns code. */
__attribute__((format(printf, 3, 4))) int aws_fail(struct load *ld, int code, const char *fmt, ...);

/* s cut to fit buf, control characters as '?', for quoting in a one-line message. */
const char *aws_shown(const char *s, char *buf, size_t size);

/* The variable's value; NULL when unset or empty, as CI systems set unused ones empty. */
const char *aws_env(const char *name);

/* Whether v is "true", in any case; NULL is not. */
bool aws_is_true(const char *v);

/* Wipe a secret before it goes back to the allocator; NULL is nothing. */
void aws_free_secret(char *s);

#endif
