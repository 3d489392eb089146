/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Store: where each build ID's file goes, and getting it there atomically.
 * Keys are made only from validated build IDs and tenants, never from input
 * file names, so no input can steer a write outside the output tree. The
 * one temp-then-rename writer (lidia_store_write_file) writes every file,
 * outputs and the command's state and manifest alike, and keeps a registry
 * of its live temporary files for a signal handler to remove. A key's lock
 * (lidia_store_lock) lets writers of one tree, in any process, decide and
 * rename one at a time.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

int lidia_store_layout_parse(const char *name, enum lidia_layout *out)
{
	if (!strcmp(name, "pyroscope"))
		*out = LIDIA_LAYOUT_PYROSCOPE;
	else if (!strcmp(name, "flat"))
		*out = LIDIA_LAYOUT_FLAT;
	else if (!strcmp(name, "debuginfod"))
		*out = LIDIA_LAYOUT_DEBUGINFOD;
	else
		return LIDIA_E_BAD_KEY;
	return 0;
}

bool lidia_store_build_id_valid(const char *hex)
{
	size_t n = strlen(hex);

	if (n < LIDIA_BUILD_ID_MIN * 2 || n > LIDIA_KEY_MAX - 1 || n % 2)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
			return false;
	/* All zeros or all 0xff: two programs share it, so no key (a library user's either). */
	return !lidia_build_id_degenerate(hex);
}

bool lidia_store_tenant_valid(const char *t)
{
	size_t n = strlen(t);

	/* No leading '.': a hidden directory is one a sync or a listing passes over. */
	if (n < 1 || n > 128 || t[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = t[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

bool lidia_store_template_valid(const char *t)
{
	const char *p = t;

	if (!t || !*t || t[0] == '/' || !strstr(t, "{build_id}") || strlen(t) > 256)
		return false;
	/* Each path element: not empty, not "." or "..", only safe characters. */
	while (*p) {
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		for (size_t i = 0; i < n; i++) {
			char c = p[i];

			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
			      (c >= 'A' && c <= 'Z') || c == '_' || c == '-' || c == '.' ||
			      c == '{' || c == '}'))
				return false;
		}
		p += n;
		if (*p == '/')
			p++;
	}
	return true;
}

/* Expand {build_id} and {tenant}; anything else in braces is refused. */
static int expand(char *key, size_t key_size, const char *t, const char *build_id,
		  const char *tenant)
{
	size_t n = 0;

	while (*t) {
		const char *v = NULL;
		size_t vn;

		if (!strncmp(t, "{build_id}", 10)) {
			v = build_id;
			t += 10;
		} else if (!strncmp(t, "{tenant}", 8)) {
			v = tenant;
			t += 8;
		} else if (*t == '{' || *t == '}') {
			return LIDIA_E_BAD_KEY;
		}
		if (v) {
			vn = strlen(v);
			if (n + vn >= key_size)
				return -ENOSPC;
			memcpy(key + n, v, vn);
			n += vn;
		} else {
			if (n + 1 >= key_size)
				return -ENOSPC;
			key[n++] = *t++;
		}
	}
	key[n] = '\0';
	return 0;
}

int lidia_store_key(char *key, size_t key_size, const char *build_id,
		    const struct lidia_store_opts *opts)
{
	enum lidia_layout layout = OPTS_GET(opts, layout, LIDIA_LAYOUT_PYROSCOPE);
	const char *tenant = OPTS_GET(opts, tenant, NULL);
	int n;

	if (!OPTS_VALID(opts, lidia_store_opts))
		return LIDIA_E_INVAL;
	if (!tenant)
		tenant = "anonymous";
	if (!lidia_store_build_id_valid(build_id) || !lidia_store_tenant_valid(tenant))
		return LIDIA_E_BAD_KEY;
	switch (layout) {
	case LIDIA_LAYOUT_PYROSCOPE:
		n = snprintf(key, key_size, "symbolizer/%s/%s", tenant, build_id);
		break;
	case LIDIA_LAYOUT_FLAT:
		n = snprintf(key, key_size, "%s.lidia", build_id);
		break;
	case LIDIA_LAYOUT_DEBUGINFOD:
		n = snprintf(key, key_size, "buildid/%s/lidia", build_id);
		break;
	case LIDIA_LAYOUT_TEMPLATE: {
		const char *t = OPTS_GET(opts, key_template, NULL);

		if (!lidia_store_template_valid(t))
			return LIDIA_E_BAD_KEY;
		return expand(key, key_size, t, build_id, tenant);
	}
	default:
		return LIDIA_E_BAD_KEY;
	}
	return n < 0 || (size_t)n >= key_size ? -ENOSPC : 0;
}

/* mkdir -p of path's parent directories (path is modified and restored). */
static int make_parents(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0777) && errno != EEXIST) {
			int err = -errno;

			*p = '/';
			return err;
		}
		*p = '/';
	}
	return 0;
}

static pthread_once_t umask_once = PTHREAD_ONCE_INIT;
static mode_t process_umask;

/* Read once: umask() can only be read by setting it, which races with other threads. */
static void read_umask(void)
{
	process_umask = umask(022);
	umask(process_umask);
}

/*
 * A temporary file of the writer: ".<name>.tmp.XXXXXX" beside the final name.
 * While its writer lives it holds an flock on it, so that a later run can
 * tell a writer's file from one a killed run left behind.
 */
bool lidia_store_is_temp(const char *name)
{
	size_t n = strlen(name);

	if (n < 13 || name[0] != '.' || memcmp(name + n - 11, ".tmp.", 5))
		return false;
	for (size_t i = n - 6; i < n; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= 'A' && name[i] <= 'Z')))
			return false;
	return true;
}

/*
 * The live temporary files of this process (git's tempfile.c), for
 * lidia_store_remove_temps() to remove from a signal handler. Slots are
 * pushed at the head and never freed nor unlinked from the list, so the
 * handler can walk it at any moment without a lock; a slot's name is read
 * only while it is TEMP_LIVE, and written only while it is not.
 */
enum { TEMP_FREE, TEMP_TAKEN, TEMP_LIVE };

struct temp {
	struct temp *next;
	atomic_int state;
	pid_t owner; /* a forked child does not remove its parent's files */
	char path[PATH_MAX];
};

static _Atomic(struct temp *) temps;
static pthread_mutex_t temps_lock = PTHREAD_MUTEX_INITIALIZER; /* taking a slot; not the handler */

static struct temp *temp_take(void)
{
	struct temp *t;

	pthread_mutex_lock(&temps_lock);
	for (t = atomic_load(&temps); t; t = t->next)
		if (atomic_load(&t->state) == TEMP_FREE)
			break;
	if (!t && (t = calloc(1, sizeof(*t)))) {
		t->next = atomic_load(&temps);
		atomic_store(&temps, t);
	}
	if (t)
		atomic_store(&t->state, TEMP_TAKEN);
	pthread_mutex_unlock(&temps_lock);
	return t;
}

void lidia_store_remove_temps(void)
{
	pid_t me = getpid();

	/* Async-signal-safe: atomic loads, getpid() and unlink() only. */
	for (struct temp *t = atomic_load(&temps); t; t = t->next)
		if (atomic_load(&t->state) == TEMP_LIVE && t->owner == me)
			unlink(t->path);
}

/*
 * A new temporary file from pattern, locked and registered in t. A cleaner
 * (lidia_store_clean) that opened the name before our lock may have removed
 * it: then the name no longer leads to our file, and we make another.
 */
static int temp_create(struct temp *t, const char *pattern)
{
	for (int tries = 0; tries < 100; tries++) {
		struct stat mine, named;
		int fd;

		snprintf(t->path, sizeof(t->path), "%s", pattern);
		fd = mkostemp(t->path, O_CLOEXEC);
		if (fd < 0)
			return -errno;
		t->owner = getpid();
		atomic_store(&t->state, TEMP_LIVE);
		if (!flock(fd, LOCK_EX) && !fstat(fd, &mine) && !stat(t->path, &named) &&
		    mine.st_ino == named.st_ino && mine.st_dev == named.st_dev)
			return fd;
		atomic_store(&t->state, TEMP_TAKEN);
		close(fd);
	}
	return -EAGAIN;
}

int lidia_store_write_file(const char *path, lidia_store_fill_fn fill, void *ctx)
{
	char pattern[PATH_MAX];
	const char *base = strrchr(path, '/');
	struct temp *t;
	int fd, err, n;

	base = base ? base + 1 : path;
	/* The temporary file sits beside the final one, so rename() is atomic. */
	n = snprintf(pattern, sizeof(pattern), "%.*s.%s.tmp.XXXXXX", (int)(base - path), path,
		     base);
	if (n < 0 || (size_t)n >= sizeof(pattern))
		return -ENAMETOOLONG;
	if (!(t = temp_take()))
		return -ENOMEM;
	fd = temp_create(t, pattern);
	if (fd < 0) {
		atomic_store(&t->state, TEMP_FREE);
		return fd;
	}
	/* mkstemp makes 0600; files are meant to be shared, so honour the umask instead. */
	pthread_once(&umask_once, read_umask);
	err = fchmod(fd, 0666 & ~process_umask) ? -errno : 0;
	if (!err)
		err = fill(fd, ctx);
	if (!err && rename(t->path, path))
		err = -errno;
	if (err)
		unlink(t->path);
	atomic_store(&t->state, TEMP_FREE);
	/* Closed (and so unlocked) only once renamed: a cleaner never sees it unlocked. */
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/*
 * A key's lock: an flock on ".<name>.tmp.locked" beside it. Named as a
 * temporary file so that every reader of a tree passes it over, the
 * cleaner removes one a killed run left (no one holds its flock), and the
 * signal handler removes ours; the holder removes it before letting go.
 * A name that no longer leads to the file locked (removed by its holder
 * or a cleaner meanwhile) is opened again.
 */
struct lidia_store_lock {
	struct temp *t;
	int fd;
};

static int lock_open(struct temp *t)
{
	for (int tries = 0; tries < 100; tries++) {
		struct stat mine, named;
		int fd = open(t->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

		if (fd < 0)
			return -errno;
		while (flock(fd, LOCK_EX) && errno == EINTR)
			;
		if (!fstat(fd, &mine) && !stat(t->path, &named) && mine.st_ino == named.st_ino &&
		    mine.st_dev == named.st_dev)
			return fd;
		close(fd);
	}
	return -EAGAIN;
}

int lidia_store_lock(struct lidia_store_lock **out, const char *dir, const char *key)
{
	struct lidia_store_lock *l = calloc(1, sizeof(*l));
	const char *base;
	char path[PATH_MAX];
	int n, err;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	n = snprintf(path, sizeof(path), "%s/%s", dir, key);
	base = strrchr(path, '/') + 1;
	if (n < 0 || (size_t)n >= sizeof(path) ||
	    snprintf(NULL, 0, "%.*s.%s.tmp.locked", (int)(base - path), path, base) >= PATH_MAX) {
		free(l);
		return -ENAMETOOLONG;
	}
	if ((err = make_parents(path)) || !(l->t = temp_take())) {
		free(l);
		return err ? err : -ENOMEM;
	}
	snprintf(l->t->path, sizeof(l->t->path), "%.*s.%s.tmp.locked", (int)(base - path), path,
		 base);
	l->t->owner = getpid();
	/* Registered before it exists: a signal meanwhile removes at most a name not yet made. */
	atomic_store(&l->t->state, TEMP_LIVE);
	if ((l->fd = lock_open(l->t)) < 0) {
		err = l->fd;
		atomic_store(&l->t->state, TEMP_FREE);
		free(l);
		return err;
	}
	*out = l;
	return 0;
}

void lidia_store_unlock(struct lidia_store_lock *l)
{
	if (!l)
		return;
	/* Removed while still held: a waiter then finds the name gone, and makes it again. */
	unlink(l->t->path);
	atomic_store(&l->t->state, TEMP_FREE);
	close(l->fd);
	free(l);
}

struct store_src {
	struct lidia_builder *b; /* or the bytes: */
	const void *buf;
	size_t size;
};

static int fill_store(int fd, void *ctx)
{
	const struct store_src *src = ctx;

	return src->b ? lidia_builder_write_fd(src->b, fd)
		      : lidia_write_all(fd, src->buf, src->size);
}

static int store(const char *dir, const char *key, const struct store_src *src)
{
	char path[PATH_MAX];
	int err, n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, key);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	if ((err = make_parents(path)))
		return err;
	return lidia_store_write_file(path, fill_store, (void *)src);
}

/* Remove the temporary files no live writer holds, depth levels down from dirfd. */
static size_t clean_dir(int dirfd, unsigned depth)
{
	size_t removed = 0;
	struct dirent *de;
	DIR *d = fdopendir(dirfd);

	if (!d) {
		close(dirfd);
		return 0;
	}
	while ((de = readdir(d))) {
		struct stat st;
		int fd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISDIR(st.st_mode) && depth > 1) {
			fd = openat(dirfd, de->d_name,
				    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				removed += clean_dir(fd, depth - 1);
			continue;
		}
		if (!S_ISREG(st.st_mode) || !lidia_store_is_temp(de->d_name))
			continue;
		fd = openat(dirfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!flock(fd, LOCK_EX | LOCK_NB) && !unlinkat(dirfd, de->d_name, 0))
			removed++;
		close(fd);
	}
	closedir(d);
	return removed;
}

/*
 * Where a layout's keys live: the directory of the key's fixed leading
 * elements (the tenant's for pyroscope), and how many levels below it.
 */
static int layout_root(const struct lidia_store_opts *opts, char *root, size_t root_size,
		       unsigned *depth)
{
	char key[LIDIA_KEY_MAX + 256];
	const char *id = "0000000000000000", *p;
	size_t fixed = 0;
	int err;

	if ((err = lidia_store_key(key, sizeof(key), id, opts)))
		return err;
	*depth = 1;
	p = strstr(key, id);
	for (const char *c = key; c < p; c++)
		if (*c == '/')
			fixed = (size_t)(c - key) + 1;
	for (const char *c = key + fixed; *c; c++)
		*depth += *c == '/';
	if (fixed + 1 > root_size)
		return -ENAMETOOLONG;
	memcpy(root, key, fixed);
	root[fixed] = '\0';
	return 0;
}

int lidia_store_clean(const char *dir, const struct lidia_store_opts *opts, size_t *removed)
{
	char root[LIDIA_KEY_MAX + 256], path[PATH_MAX];
	unsigned depth;
	int fd, err;

	*removed = 0;
	if ((err = layout_root(opts, root, sizeof(root), &depth)))
		return err;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, root) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	*removed = clean_dir(fd, depth);
	return 0;
}

int lidia_store_write(struct lidia_builder *b, const char *dir, const char *key)
{
	struct store_src src = { .b = b };

	return store(dir, key, &src);
}

int lidia_store_write_buf(const void *buf, size_t size, const char *dir, const char *key)
{
	struct store_src src = { .buf = buf, .size = size };

	return store(dir, key, &src);
}
