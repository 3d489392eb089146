/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The input "-": an archive (or an ELF file) on standard input, as
 * `docker save IMAGE | lidiagen - -o out` gives it. The batch reads an
 * archive twice (identify, then the members its groups need) and opens
 * inputs by path, so a pipe is first copied to an unnamed file in $TMPDIR,
 * which then stands as standard input: the path /dev/stdin opens it again,
 * as often as needed, and names it in messages and the manifest.
 */
#ifndef LIDIAGEN_STDIN_INPUT_H
#define LIDIAGEN_STDIN_INPUT_H

#include <stddef.h>

/* The path the input "-" is read at. */
#define STDIN_INPUT_PATH "/dev/stdin"

/*
 * When paths[0..n) holds "-": make standard input a regular file (copying a
 * pipe to $TMPDIR) and put STDIN_INPUT_PATH in its place. 0, 0 as well when
 * no path is "-"; with the reason in err, -1 for a usage error (two "-", a
 * terminal), -2 when the copy failed.
 */
int stdin_input(char **paths, size_t n, char *err, size_t err_size);

#endif
