/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Opening an input: a path given, found by the walk, or named by an index
 * or a state file, any of which may name a FIFO or a device by now.
 */
#ifndef LIDIAGEN_OPEN_REGULAR_H
#define LIDIAGEN_OPEN_REGULAR_H

/* What open_regular() returns for a path that is there but no regular file. */
#define OPEN_NOT_REGULAR (-0x10000)

/*
 * Open path for reading, never blocking (a FIFO must not hang the run),
 * and only if it is a regular file: the descriptor, OPEN_NOT_REGULAR (it
 * was closed at once, nothing read), or -errno.
 */
int open_regular(const char *path);

/* The one-line message for an error of open_regular(). */
const char *open_regular_error(int err);

#endif
