/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Store: where each build ID's file goes, and getting it there atomically.
 * Keys are made only from validated build IDs and tenants, never from input
 * file names, so no input can steer a write outside the output tree; and
 * every path below the tree's directory is resolved without following a
 * symbolic link (beneath.h), so no link put in the tree can either. The
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
#include <time.h>
#include <unistd.h>

#include "beneath.h"

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

static pthread_once_t umask_once = PTHREAD_ONCE_INIT;
static mode_t process_umask;

/* Read once: umask() can only be read by setting it, which races with other threads. */
static void read_umask(void)
{
	process_umask = umask(022);
	umask(process_umask);
}

/*
 * A temporary file of the writer: ".<name>.lidiagen.tmp.XXXXXX" beside the
 * final name, X from [A-Za-z0-9]; a key's lock is ".<name>.lidiagen.tmp.locked".
 * While its writer lives it holds an flock on it, so that a later run can
 * tell a writer's file from one a killed run left behind.
 */
#define TEMP_MARK ".lidiagen.tmp."
#define TEMP_MARK_LEN (sizeof(TEMP_MARK) - 1)
#define TEMP_RANDOM 6

static bool alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Any writer's temporary file, this version's or an earlier one's (".<name>.tmp.XXXXXX"). */
bool lidia_store_is_temp(const char *name)
{
	size_t n = strlen(name);

	if (n < 13 || name[0] != '.' || memcmp(name + n - 11, ".tmp.", 5))
		return false;
	for (size_t i = n - TEMP_RANDOM; i < n; i++)
		if (!alnum(name[i]))
			return false;
	return true;
}

/*
 * Only a name this store makes, exactly: '.', a name a key can end in (not
 * hidden, [A-Za-z0-9_.-]), the mark, six random characters. A user's
 * ".notes.tmp.backup" is no temporary file of ours, and neither is one an
 * earlier lidiagen left without the mark (".<name>.tmp.XXXXXX"): those
 * the cleaner leaves alone.
 */
static bool is_own_temp(const char *name)
{
	size_t n = strlen(name), base;

	if (n < 2 + TEMP_MARK_LEN + TEMP_RANDOM || name[0] != '.' || name[1] == '.')
		return false;
	base = n - TEMP_RANDOM - TEMP_MARK_LEN;
	if (memcmp(name + base, TEMP_MARK, TEMP_MARK_LEN))
		return false;
	for (size_t i = 1; i < base; i++)
		if (!alnum(name[i]) && name[i] != '_' && name[i] != '-' && name[i] != '.')
			return false;
	for (size_t i = n - TEMP_RANDOM; i < n; i++)
		if (!alnum(name[i]))
			return false;
	return true;
}

/* name's temporary file (or lock) into out, ending in suffix; -ENAMETOOLONG past NAME_MAX. */
static int temp_name(char *out, size_t out_size, const char *name, const char *suffix)
{
	int n = snprintf(out, out_size, ".%s" TEMP_MARK "%s", name, suffix);

	return n < 0 || (size_t)n >= out_size || n > NAME_MAX ? -ENAMETOOLONG : 0;
}

/* Six characters no other writer is likely to pick: O_EXCL settles the unlikely. */
static void random_suffix(char out[TEMP_RANDOM + 1])
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static atomic_uint_fast64_t counter;
	struct timespec ts;
	uint64_t x;

	clock_gettime(CLOCK_REALTIME, &ts);
	x = atomic_fetch_add(&counter, 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32 ^
	    (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 20;
	/* splitmix64's finaliser: every input bit moves every output character. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	for (int i = 0; i < TEMP_RANDOM; i++, x /= 62)
		out[i] = set[x % 62];
	out[TEMP_RANDOM] = '\0';
}

/*
 * The live temporary files of this process (git's tempfile.c), for
 * lidia_store_remove_temps() to remove from a signal handler. Slots are
 * pushed at the head and never freed nor unlinked from the list, so the
 * handler can walk it at any moment without a lock; a slot's directory
 * and name are read only while it is TEMP_LIVE, and written only while it
 * is not. The name is relative to the directory's fd, which its writer
 * keeps open while the slot is live: the handler unlinks by it, so that no
 * link put in the tree meanwhile steers it elsewhere.
 */
enum { TEMP_FREE, TEMP_TAKEN, TEMP_LIVE };

struct temp {
	struct temp *next;
	atomic_int state;
	pid_t owner; /* a forked child does not remove its parent's files */
	int dirfd;
	char name[NAME_MAX + 1];
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

	/* Async-signal-safe: atomic loads, getpid() and unlinkat() only. */
	for (struct temp *t = atomic_load(&temps); t; t = t->next)
		if (atomic_load(&t->state) == TEMP_LIVE && t->owner == me)
			unlinkat(t->dirfd, t->name, 0);
}

/* Whether t's name in its directory still leads to the file open as fd. */
static bool still_named(const struct temp *t, int fd)
{
	struct stat mine, named;

	return !fstat(fd, &mine) && !fstatat(t->dirfd, t->name, &named, AT_SYMLINK_NOFOLLOW) &&
	       mine.st_ino == named.st_ino && mine.st_dev == named.st_dev;
}

/*
 * A new temporary file for name in dirfd, locked and registered in t. A
 * cleaner (lidia_store_clean) that opened the name before our lock may
 * have removed it: then the name no longer leads to our file, and we make
 * another.
 */
static int temp_create(struct temp *t, int dirfd, const char *name)
{
	t->dirfd = dirfd;
	for (int tries = 0; tries < 100; tries++) {
		char rnd[TEMP_RANDOM + 1];
		int fd, err;

		random_suffix(rnd);
		if ((err = temp_name(t->name, sizeof(t->name), name, rnd)))
			return err;
		fd = openat(dirfd, t->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return -errno;
		t->owner = getpid();
		atomic_store(&t->state, TEMP_LIVE);
		if (!flock(fd, LOCK_EX) && still_named(t, fd))
			return fd;
		atomic_store(&t->state, TEMP_TAKEN);
		close(fd);
	}
	return -EAGAIN;
}

/*
 * Write name in dirfd through a temporary file beside it, renamed over it
 * when whole. With no_link, a symbolic link at name fails with -ELOOP
 * rather than being replaced: a key's place is the tree's own.
 */
static int write_at(int dirfd, const char *name, bool no_link, lidia_store_fill_fn fill, void *ctx)
{
	struct temp *t;
	struct stat st;
	int fd, err;

	if (!(t = temp_take()))
		return -ENOMEM;
	fd = temp_create(t, dirfd, name);
	if (fd < 0) {
		atomic_store(&t->state, TEMP_FREE);
		return fd;
	}
	/* mkstemp would make 0600; files are meant to be shared, so honour the umask instead. */
	pthread_once(&umask_once, read_umask);
	err = fchmod(fd, 0666 & ~process_umask) ? -errno : 0;
	if (!err)
		err = fill(fd, ctx);
	if (!err && no_link && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISLNK(st.st_mode))
		err = -ELOOP;
	/* The temporary file sits beside the final one, so the rename is atomic. */
	if (!err && renameat(dirfd, t->name, dirfd, name))
		err = -errno;
	if (err)
		unlinkat(dirfd, t->name, 0);
	atomic_store(&t->state, TEMP_FREE);
	/* Closed (and so unlocked) only once renamed: a cleaner never sees it unlocked. */
	if (close(fd) && !err)
		err = -errno;
	return err;
}

int lidia_store_write_file(const char *path, lidia_store_fill_fn fill, void *ctx)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	char dir[PATH_MAX];
	int dirfd, err;

	/* A path the caller names is followed as the caller named it, links and all. */
	if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
				  slash ? path : ".") >= sizeof(dir))
		return -ENAMETOOLONG;
	if ((dirfd = open_tree(dir, false)) < 0)
		return dirfd;
	err = write_at(dirfd, base, false, fill, ctx);
	close(dirfd);
	return err;
}

/* The directory of key below dir, made when create; *base its last element. */
static int open_key_dir(const char *dir, const char *key, bool create, const char **base)
{
	char parent[PATH_MAX];
	int root, fd;

	if ((fd = split_key(key, parent, sizeof(parent), base)))
		return fd;
	if ((root = open_tree(dir, create)) < 0)
		return root;
	fd = open_dir_beneath(root, parent, create);
	close(root);
	return fd;
}

/* A link on the way, said as such. */
static int said(int err)
{
	return err == -ELOOP ? LIDIA_E_SYMLINK : err;
}

/*
 * A key's lock: an flock on ".<name>.lidiagen.tmp.locked" beside it. Named
 * as a temporary file so that every reader of a tree passes it over, the
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
		int fd = openat(t->dirfd, t->name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

		if (fd < 0)
			return -errno;
		while (flock(fd, LOCK_EX) && errno == EINTR)
			;
		if (still_named(t, fd))
			return fd;
		close(fd);
	}
	return -EAGAIN;
}

int lidia_store_lock(struct lidia_store_lock **out, const char *dir, const char *key)
{
	struct lidia_store_lock *l = calloc(1, sizeof(*l));
	const char *base;
	int dirfd, err = 0;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	if ((dirfd = open_key_dir(dir, key, true, &base)) < 0) {
		free(l);
		return said(dirfd);
	}
	if (!(l->t = temp_take()))
		err = -ENOMEM;
	else if (!(err = temp_name(l->t->name, sizeof(l->t->name), base, "locked")))
		l->t->dirfd = dirfd;
	if (err)
		goto fail;
	l->t->owner = getpid();
	/* Registered before it exists: a signal meanwhile removes at most a name not yet made. */
	atomic_store(&l->t->state, TEMP_LIVE);
	if ((l->fd = lock_open(l->t)) >= 0) {
		*out = l;
		return 0;
	}
	err = said(l->fd);
fail:
	if (l->t)
		atomic_store(&l->t->state, TEMP_FREE);
	close(dirfd);
	free(l);
	return err;
}

void lidia_store_unlock(struct lidia_store_lock *l)
{
	int dirfd;

	if (!l)
		return;
	/* Removed while still held: a waiter then finds the name gone, and makes it again. */
	dirfd = l->t->dirfd;
	unlinkat(dirfd, l->t->name, 0);
	atomic_store(&l->t->state, TEMP_FREE);
	close(l->fd);
	close(dirfd);
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
	const char *base;
	int dirfd, err;

	if ((dirfd = open_key_dir(dir, key, true, &base)) < 0)
		return said(dirfd);
	err = write_at(dirfd, base, true, fill_store, (void *)src);
	close(dirfd);
	return said(err);
}

/*
 * Remove the temporary files no live writer holds, depth levels down from
 * dirfd: only names in this store's exact pattern, and never through a
 * link (fstatat and openat, neither following one).
 */
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
		if (!S_ISREG(st.st_mode) || !is_own_temp(de->d_name))
			continue;
		fd = openat(dirfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
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
 * elements (the tenant's for pyroscope, "" for none), and how many levels
 * below it.
 */
static int layout_root(const struct lidia_store_opts *opts, char *root, size_t root_size,
		       unsigned *depth)
{
	char key[LIDIA_KEY_MAX + 256];
	const char *id = "0123456789abcdef", *p; /* any valid build ID */
	size_t fixed = 0;
	int err;

	if ((err = lidia_store_key(key, sizeof(key), id, opts)))
		return err;
	*depth = 1;
	p = strstr(key, id);
	for (const char *c = key; c < p; c++)
		if (*c == '/')
			fixed = (size_t)(c - key);
	for (const char *c = key + fixed + (fixed > 0); *c; c++)
		*depth += *c == '/';
	if (fixed + 1 > root_size)
		return -ENAMETOOLONG;
	memcpy(root, key, fixed);
	root[fixed] = '\0';
	return 0;
}

int lidia_store_clean(const char *dir, const struct lidia_store_opts *opts, size_t *removed)
{
	char root[LIDIA_KEY_MAX + 256];
	unsigned depth;
	int tree, fd, err;

	*removed = 0;
	if ((err = layout_root(opts, root, sizeof(root), &depth)))
		return err;
	if ((tree = open_tree(dir, false)) < 0)
		return tree == -ENOENT ? 0 : tree;
	fd = open_dir_beneath(tree, root, false);
	close(tree);
	if (fd < 0)
		return fd == -ENOENT ? 0 : said(fd);
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
