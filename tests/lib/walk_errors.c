/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test shim (LD_PRELOAD): errors a directory walk meets on a damaged or
 * remote file system, which a test cannot make as root. readdir() of a
 * directory whose path ends in "/eio-dir" returns its first entry, then
 * fails with EIO; lstat() of a path ending in "/eio-entry" fails with EIO.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static DIR *failing; /* the one "eio-dir" open; the tests walk on one thread */
static int given;

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

DIR *opendir(const char *path)
{
	DIR *(*real)(const char *) = (DIR * (*)(const char *)) dlsym(RTLD_NEXT, "opendir");
	DIR *d = real(path);

	if (d && ends_with(path, "/eio-dir")) {
		failing = d;
		given = 0;
	}
	return d;
}

static int fails_now(DIR *d)
{
	if (d != failing || given++ < 1)
		return 0;
	errno = EIO;
	return 1;
}

struct dirent *readdir(DIR *d)
{
	struct dirent *(*real)(DIR *) = (struct dirent * (*)(DIR *)) dlsym(RTLD_NEXT, "readdir");

	return fails_now(d) ? NULL : real(d);
}

struct dirent64 *readdir64(DIR *d)
{
	struct dirent64 *(*real)(DIR *) =
		(struct dirent64 * (*)(DIR *)) dlsym(RTLD_NEXT, "readdir64");

	return fails_now(d) ? NULL : real(d);
}

int lstat(const char *path, struct stat *st)
{
	int (*real)(const char *, struct stat *) =
		(int (*)(const char *, struct stat *))dlsym(RTLD_NEXT, "lstat");

	if (ends_with(path, "/eio-entry")) {
		errno = EIO;
		return -1;
	}
	return real(path, st);
}

int lstat64(const char *path, struct stat64 *st)
{
	int (*real)(const char *, struct stat64 *) =
		(int (*)(const char *, struct stat64 *))dlsym(RTLD_NEXT, "lstat64");

	if (ends_with(path, "/eio-entry")) {
		errno = EIO;
		return -1;
	}
	return real(path, st);
}
