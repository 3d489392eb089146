/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Store: where each build ID's file goes, and getting it there atomically.
 * Keys are made only from validated build IDs and tenants, never from input
 * file names, so no input can steer a write outside the output tree.
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

int lidia_layout_parse(const char *name, enum lidia_layout *out)
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

bool lidia_build_id_valid(const char *hex)
{
	size_t n = strlen(hex);

	if (n < 2 || n > LIDIA_KEY_MAX - 1 || n % 2)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
			return false;
	return true;
}

bool lidia_tenant_valid(const char *t)
{
	size_t n = strlen(t);

	if (n < 1 || n > 128 || !strcmp(t, ".") || !strcmp(t, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = t[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

bool lidia_template_valid(const char *t)
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

			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      c == '_' || c == '-' || c == '.' || c == '{' || c == '}'))
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

	if (!tenant)
		tenant = "anonymous";
	if (!lidia_build_id_valid(build_id) || !lidia_tenant_valid(tenant))
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

		if (!lidia_template_valid(t))
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

struct buf_src {
	const void *buf;
	size_t size;
};

static int store(const char *dir, const char *key, struct lidia_builder *b,
		 const struct buf_src *src)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	const char *base;
	int fd, err, n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, key);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	base = strrchr(path, '/') + 1;
	/* The temporary file sits beside the final one, so rename() is atomic. */
	n = snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp.XXXXXX", (int)(base - path), path, base);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	if ((err = make_parents(path)))
		return err;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* mkstemp makes 0600; outputs are meant to be shared, so honour the umask instead. */
	pthread_once(&umask_once, read_umask);
	err = fchmod(fd, 0666 & ~process_umask) ? -errno : 0;
	if (!err)
		err = b ? lidia_builder_write_fd(b, fd) : lidia_write_all(fd, src->buf, src->size);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int lidia_store_write(struct lidia_builder *b, const char *dir, const char *key)
{
	return store(dir, key, b, NULL);
}

int lidia_store_write_buf(const void *buf, size_t size, const char *dir, const char *key)
{
	struct buf_src src = { buf, size };

	return store(dir, key, NULL, &src);
}
