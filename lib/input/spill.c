/* SPDX-License-Identifier: Apache-2.0 */
/* Spilling a member to an unnamed file (spill.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spill.h"

/* The unit of holes: a page, which is what a mapping reads at a time. */
#define BLOCK 4096

static const unsigned char zeros[BLOCK];

/* An unnamed file in dir: O_TMPFILE where the file system has it, else made and unlinked. */
static int unnamed_file(const char *dir)
{
	char path[PATH_MAX];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd >= 0 ? fd : -errno;
	if ((size_t)snprintf(path, sizeof(path), "%s/lidia-spill.XXXXXX", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

int spill_open(struct spill **out, const char *dir)
{
	struct spill *s;
	const char *tmp = getenv("TMPDIR");
	int fd;

	*out = NULL;
	if (!dir)
		dir = tmp && *tmp ? tmp : "/tmp";
	if (!(s = malloc(sizeof(*s))))
		return -ENOMEM;
	if ((fd = unnamed_file(dir)) < 0) {
		free(s);
		return fd;
	}
	s->fd = fd;
	s->len = s->held = 0;
	s->fill = 0;
	*out = s;
	return 0;
}

static int write_at(int fd, const unsigned char *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* The buffer to the file, each run of pages that are not all zeros in one write. */
static int flush(struct spill *s)
{
	uint64_t base = s->len - s->fill;
	size_t i = 0;

	while (i < s->fill) {
		size_t start, n;
		int err;

		while (i < s->fill &&
		       !memcmp(s->buf + i, zeros, s->fill - i < BLOCK ? s->fill - i : BLOCK))
			i += BLOCK;
		if (i >= s->fill)
			break;
		start = i;
		while (i < s->fill &&
		       memcmp(s->buf + i, zeros, s->fill - i < BLOCK ? s->fill - i : BLOCK))
			i += BLOCK;
		n = (i < s->fill ? i : s->fill) - start;
		if ((err = write_at(s->fd, s->buf + start, n, base + start)))
			return err;
		s->held += n;
	}
	s->fill = 0;
	return 0;
}

unsigned char *spill_room(struct spill *s, size_t *room)
{
	*room = SPILL_BUF - s->fill;
	return s->buf + s->fill;
}

int spill_took(struct spill *s, size_t n)
{
	s->fill += n;
	s->len += n;
	return s->fill == SPILL_BUF ? flush(s) : 0;
}

int spill_write(struct spill *s, const void *p, size_t n)
{
	const unsigned char *from = p;

	while (n) {
		size_t room, k;
		unsigned char *to = spill_room(s, &room);
		int err;

		k = n < room ? n : room;
		memcpy(to, from, k);
		if ((err = spill_took(s, k)))
			return err;
		from += k;
		n -= k;
	}
	return 0;
}

int spill_map(struct spill *s, unsigned char **out, uint64_t *held)
{
	void *map = MAP_FAILED;
	int err = flush(s);

	/* The holes at the end too: the file is as long as the member. */
	if (!err && ftruncate(s->fd, (off_t)s->len))
		err = -errno;
	if (!err && s->len) {
		map = mmap(NULL, (size_t)s->len, PROT_READ | PROT_WRITE, MAP_PRIVATE, s->fd, 0);
		if (map == MAP_FAILED)
			err = -errno;
	}
	if (!err && !s->len)
		err = -EINVAL;
	*out = err ? NULL : map;
	*held = s->held;
	spill_free(s);
	return err;
}

void spill_free(struct spill *s)
{
	if (!s)
		return;
	close(s->fd);
	free(s);
}
