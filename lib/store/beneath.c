/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Paths below an output tree's directory, never through a symbolic link
 * (beneath.h). The directory the caller names is opened as named, links
 * and all: the user chose it. Everything below it is resolved relative to
 * its fd: with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) where the
 * kernel has it (Linux 5.6), else one element at a time with O_NOFOLLOW.
 * Keys never hold "." or "..", so either way nothing outside is reached;
 * a link met on the way fails with -ELOOP, which callers say as
 * LIDIA_E_SYMLINK.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#include "beneath.h"

static atomic_bool no_openat2; /* the kernel said ENOSYS once: never asked again */

/* The length of rel's leading part that is a symbolic link below dirfd, or 0. */
static size_t symlink_prefix(int dirfd, const char *rel)
{
	int cur = dirfd;
	size_t at = 0, found = 0;

	while (cur >= 0 && rel[at] && !found) {
		size_t n = strcspn(rel + at, "/");
		char name[NAME_MAX + 1];
		struct stat st;
		int next = -1;

		if (n > NAME_MAX)
			break;
		memcpy(name, rel + at, n);
		name[n] = '\0';
		if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW))
			break;
		if (S_ISLNK(st.st_mode))
			found = at + n;
		else if (rel[at + n])
			next = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cur != dirfd)
			close(cur);
		cur = next;
		at += n + (rel[at + n] == '/');
	}
	if (cur >= 0 && cur != dirfd)
		close(cur);
	return found;
}

/* A directory wanted where a link is fails with ENOTDIR: said as the link it is (ELOOP). */
static int link_said(int dirfd, const char *rel, int fd)
{
	return fd == -ENOTDIR && symlink_prefix(dirfd, rel) ? -ELOOP : fd;
}

/*
 * rel below dirfd one element at a time, none a link, "." or "..": its
 * last element opened with flags; with make, each missing element made a
 * directory (mkdirat) before it is entered.
 */
static int walk_elements(int dirfd, const char *rel, int flags, bool make)
{
	char buf[PATH_MAX];
	char *p = buf, *slash;
	int cur = dirfd, fd;

	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (;; p = slash + 1) {
		bool last = !(slash = strchr(p, '/'));

		if (!last)
			*slash = '\0';
		if (!*p || !strcmp(p, ".") || !strcmp(p, "..")) {
			fd = -EXDEV;
		} else if (make && mkdirat(cur, p, 0777) && errno != EEXIST) {
			fd = -errno;
		} else {
			fd = openat(cur, p,
				    (last ? flags : O_RDONLY | O_DIRECTORY) | O_NOFOLLOW |
					    O_CLOEXEC);
			if (fd < 0)
				fd = -errno;
		}
		if (cur != dirfd)
			close(cur);
		if (fd < 0 || last)
			return fd;
		cur = fd;
	}
}

int open_beneath(int dirfd, const char *rel, int flags)
{
#ifdef SYS_openat2
	if (!atomic_load_explicit(&no_openat2, memory_order_relaxed)) {
		struct open_how how = {
			.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));

		if (fd >= 0)
			return (int)fd;
		if (errno == ENOTDIR)
			return link_said(dirfd, rel, -ENOTDIR);
		/* EPERM: a seccomp filter older than the call; the walk below is as strict. */
		if (errno != ENOSYS && errno != EPERM)
			return -errno;
		if (errno == ENOSYS)
			atomic_store_explicit(&no_openat2, true, memory_order_relaxed);
	}
#endif
	return link_said(dirfd, rel, walk_elements(dirfd, rel, flags, false));
}

int open_dir_beneath(int dirfd, const char *rel, bool create)
{
	int fd;

	if (!*rel) {
		fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
		return fd < 0 ? -errno : fd;
	}
	fd = open_beneath(dirfd, rel, O_RDONLY | O_DIRECTORY);
	if (fd == -ENOENT && create)
		fd = link_said(dirfd, rel, walk_elements(dirfd, rel, O_RDONLY | O_DIRECTORY, true));
	return fd;
}

int open_tree(const char *dir, bool create)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char path[PATH_MAX];

	if (fd >= 0 || errno != ENOENT || !create)
		return fd < 0 ? -errno : fd;
	/* mkdir -p of the path the caller named, as named. */
	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	for (char *p = path + 1;; p++) {
		bool end = !*p;

		if (*p && *p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0777) && errno != EEXIST)
			return -errno;
		if (end)
			break;
		*p = '/';
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int split_key(const char *key, char *parent, size_t parent_size, const char **base)
{
	const char *slash = strrchr(key, '/');
	size_t n = slash ? (size_t)(slash - key) : 0;

	*base = slash ? slash + 1 : key;
	if (n + 1 > parent_size || !**base || strlen(*base) > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(parent, key, n);
	parent[n] = '\0';
	return 0;
}

int lidia_store_open(const char *dir, const char *key)
{
	int root = open_tree(dir, false), fd;

	if (root < 0)
		return root;
	/* Not blocking: a FIFO at a key must not hang a reader of the tree. */
	fd = open_beneath(root, key, O_RDONLY | O_NONBLOCK);
	close(root);
	return fd == -ELOOP ? LIDIA_E_SYMLINK : fd;
}

size_t lidia_store_symlink_at(const char *dir, const char *key)
{
	int root = open_tree(dir, false);
	size_t at;

	if (root < 0)
		return 0;
	at = symlink_prefix(root, key);
	close(root);
	return at;
}
