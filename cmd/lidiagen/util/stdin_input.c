/* SPDX-License-Identifier: Apache-2.0 */
/* The input "-", standard input made a regular file (stdin_input.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stdin_input.h"
#include "tempfile.h"

/* Everything left on fd 0 into fd; 0 or -errno. */
static int copy_stdin(int fd)
{
	static char buf[1 << 16];

	for (;;) {
		ssize_t got = read(STDIN_FILENO, buf, sizeof(buf)), put = 0;

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : 0;
		while (put < got) {
			ssize_t w = write(fd, buf + put, (size_t)(got - put));

			if (w < 0 && errno != EINTR)
				return -errno;
			put += w > 0 ? w : 0;
		}
	}
}

/* A pipe on standard input copied to an unnamed file that then takes its place; 0 or -errno. */
static int replace_stdin(void)
{
	int fd = unnamed_temp_file(), e;

	if (fd < 0)
		return fd;
	e = copy_stdin(fd);
	if (!e && dup2(fd, STDIN_FILENO) < 0)
		e = -errno;
	close(fd);
	return e;
}

/* Standard input as a regular file. */
static int make_regular(char *err, size_t err_size)
{
	struct stat st;
	int e;

	if (fstat(STDIN_FILENO, &st)) {
		snprintf(err, err_size, "-: %s", strerror(errno));
		return -1;
	}
	if (S_ISREG(st.st_mode))
		return 0; /* "< file.tar": opened again by path as it is */
	if (isatty(STDIN_FILENO)) {
		snprintf(err, err_size, "-: standard input is a terminal, not an archive");
		return -1;
	}
	if ((e = replace_stdin())) {
		snprintf(err, err_size, "-: cannot copy standard input to $TMPDIR: %s",
			 strerror(-e));
		return -2;
	}
	return 0;
}

int stdin_input(char **paths, size_t n, char *err, size_t err_size)
{
	size_t at = n;
	int e;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(paths[i], "-"))
			continue;
		if (at < n) {
			snprintf(err, err_size, "-: standard input given twice");
			return -1;
		}
		at = i;
	}
	if (at == n)
		return 0;
	if ((e = make_regular(err, err_size)))
		return e;
	paths[at] = (char *)STDIN_INPUT_PATH;
	return 0;
}
