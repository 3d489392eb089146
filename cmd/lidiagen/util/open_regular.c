/* SPDX-License-Identifier: Apache-2.0 */
/* Opening an input only if it is a regular file, never blocking (open_regular.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "open_regular.h"

int open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	int err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : OPEN_NOT_REGULAR;
	}
	/* A regular file reads the same either way; blocking reads are what the callers expect. */
	if (fcntl(fd, F_SETFL, 0)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

const char *open_regular_error(int err)
{
	if (err == OPEN_NOT_REGULAR)
		return "not a regular file (a FIFO, device or socket), not opened";
	return strerror(-err);
}
