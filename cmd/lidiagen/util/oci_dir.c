// SPDX-License-Identifier: Apache-2.0
/* An OCI image layout directory, as a tar in an unnamed file (oci_dir.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci_dir.h"
#include "tempfile.h"

#define MAX_DIRS 64

/* The directories replaced, and the /dev/fd/N paths that stand for them. */
static struct {
	char *dir, *path;
} dirs[MAX_DIRS];
static size_t ndirs;

static bool is_layout(const char *dir)
{
	char p[4096];
	struct stat st;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return false;
	snprintf(p, sizeof(p), "%s/oci-layout", dir);
	if (access(p, R_OK))
		return false;
	snprintf(p, sizeof(p), "%s/index.json", dir);
	return !access(p, R_OK);
}

/* A ustar header for a regular file of size bytes (sizes past 8 GiB in base-256). */
static void tar_header(unsigned char h[512], const char *name, uint64_t size)
{
	unsigned sum = 0;

	memset(h, 0, 512);
	snprintf((char *)h, 100, "%s", name);
	memcpy(h + 100, "0000644", 7);
	memcpy(h + 108, "0000000", 7);
	memcpy(h + 116, "0000000", 7);
	if (size < 077777777777ull) {
		snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
	} else {
		h[124] = 0x80;
		for (int i = 0; i < 8; i++)
			h[135 - i] = (unsigned char)(size >> (8 * i));
	}
	memcpy(h + 136, "00000000000", 11);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

/* dir/name into the tar at out, as name. */
static int tar_append(int out, const char *dir, const char *name)
{
	static unsigned char buf[1 << 16];
	unsigned char h[512];
	char p[4096];
	struct stat st;
	uint64_t left;
	int in = -1, e = 0;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (strlen(name) >= 100 || (in = open(p, O_RDONLY)) < 0 || fstat(in, &st) ||
	    !S_ISREG(st.st_mode)) {
		e = in < 0 ? -errno : 0;
		if (in >= 0)
			close(in);
		return e; /* not a regular file, or a name a blob never has: left out */
	}
	tar_header(h, name, (uint64_t)st.st_size);
	e = write_whole(out, h, sizeof(h));
	for (left = (uint64_t)st.st_size; !e && left;) {
		ssize_t n = read(in, buf, left < sizeof(buf) ? left : sizeof(buf));

		if (n <= 0) {
			e = n < 0 ? -errno : -EIO; /* it shrank meanwhile */
			break;
		}
		e = write_whole(out, buf, (size_t)n);
		left -= (uint64_t)n;
	}
	close(in);
	memset(buf, 0, 512);
	if (!e && st.st_size % 512)
		e = write_whole(out, buf, 512 - (size_t)(st.st_size % 512));
	return e;
}

/* Every blobs/ALG/HEX of dir. */
static int add_blobs(int out, const char *dir)
{
	char p[4096], name[1024];
	struct dirent *a, *f;
	DIR *blobs, *alg;
	int e = 0;

	snprintf(p, sizeof(p), "%s/blobs", dir);
	if (!(blobs = opendir(p)))
		return -errno;
	while (!e && (a = readdir(blobs))) {
		if (a->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/blobs/%s", dir, a->d_name);
		if (!(alg = opendir(p)))
			continue;
		while (!e && (f = readdir(alg))) {
			if (f->d_name[0] == '.')
				continue;
			snprintf(name, sizeof(name), "blobs/%s/%s", a->d_name, f->d_name);
			e = tar_append(out, dir, name);
		}
		closedir(alg);
	}
	closedir(blobs);
	return e;
}

/* The layout at dir as a tar in an unnamed file: its fd, or -errno. */
static int tar_layout(const char *dir)
{
	static const unsigned char end[1024];
	int fd = unnamed_temp_file(), e;

	if (fd < 0)
		return fd;
	/* oci-layout first: what tells an image's tar from another (image_candidate). */
	e = tar_append(fd, dir, "oci-layout");
	if (!e)
		e = tar_append(fd, dir, "index.json");
	if (!e)
		e = add_blobs(fd, dir);
	if (!e)
		e = write_whole(fd, end, sizeof(end));
	if (e) {
		close(fd);
		return e;
	}
	return fd;
}

int oci_dir_inputs(char **paths, size_t n, char *err, size_t err_size)
{
	char p[64];
	int fd;

	for (size_t i = 0; i < n; i++) {
		if (!is_layout(paths[i]))
			continue;
		if (ndirs == MAX_DIRS) {
			snprintf(err, err_size, "%s: more than %d OCI layout directories", paths[i],
				 MAX_DIRS);
			return -1;
		}
		if ((fd = tar_layout(paths[i])) < 0) {
			snprintf(err, err_size, "%s: cannot copy the OCI layout to $TMPDIR: %s",
				 paths[i], strerror(-fd));
			return -1;
		}
		snprintf(p, sizeof(p), "/dev/fd/%d", fd);
		dirs[ndirs].dir = paths[i];
		if (!(dirs[ndirs].path = strdup(p))) {
			snprintf(err, err_size, "out of memory");
			return -1;
		}
		paths[i] = dirs[ndirs++].path;
	}
	return 0;
}

const char *oci_dir_name(const char *path)
{
	for (size_t i = 0; i < ndirs; i++)
		if (!strcmp(dirs[i].path, path))
			return dirs[i].dir;
	return path;
}

const char *oci_dir_shown(const char *path, char *buf, size_t size)
{
	for (size_t i = 0; i < ndirs; i++) {
		size_t n = strlen(dirs[i].path);

		if (!strncmp(path, dirs[i].path, n) && (!path[n] || path[n] == '!')) {
			snprintf(buf, size, "%s%s", dirs[i].dir, path + n);
			return buf;
		}
	}
	return path;
}
