/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A minimal harness for unit tests: CHECK(cond, fmt, ...) prints
 * "ok - ..." or "not ok - ..." (what tests/run.sh counts), and
 * unit_exit() returns non-zero when any check failed.
 */
#ifndef LIDIA_UNIT_H
#define LIDIA_UNIT_H

#include <stdint.h>
#include <stdio.h>

static int unit_failed;

/* cond is evaluated once: it may have side effects. */
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		int check_ok_ = !!(cond);                                                          \
		if (check_ok_) {                                                                   \
			printf("ok - ");                                                           \
		} else {                                                                           \
			printf("not ok - ");                                                       \
			unit_failed++;                                                             \
		}                                                                                  \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		if (!check_ok_)                                                                    \
			printf("# failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);               \
	} while (0)

/* The next of a xorshift64 sequence from *state (not 0): test inputs, the same every run. */
static inline uint64_t unit_next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static inline int unit_exit(void)
{
	return unit_failed ? 1 : 0;
}

#endif
