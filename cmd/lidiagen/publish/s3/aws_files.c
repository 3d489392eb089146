/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The profile's two files, found and read as the AWS tools find them:
 * AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials, and AWS_CONFIG_FILE,
 * else ~/.aws/config (the home from HOME, else the password database; a
 * leading "~/" in a variable meaning it too). A missing file is an empty
 * one; one over 1 MiB or with a NUL byte is no profile file. The profile is
 * the overrides', else AWS_PROFILE, else "default", and must be in one of
 * the files when named. Each file is parsed (aws_ini.c) for the profile's
 * settings, which the other files then read; its buffer, which may hold
 * secrets, is wiped when released.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aws_files.h"
#include "aws_ini.h"
#include "aws_util.h"

#define FILE_MAX_SIZE (1 << 20)

/* Where a file is: its variable (a leading "~/" meaning the home), else ~/.aws/LEAF. */
static int file_locate(struct load *ld, struct aws_file *f, const char *var, const char *leaf)
{
	const char *path = aws_env(var), *home = getenv("HOME");
	struct passwd pw, *found = NULL;
	char pwbuf[4096];
	int n;

	if ((!home || !*home) && !getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &found) && found)
		home = pw.pw_dir;
	if (path && strncmp(path, "~/", 2))
		n = snprintf(f->path, sizeof(f->path), "%s", path);
	else if (!home || !*home)
		n = 0; /* nowhere to look: as if missing */
	else if (path)
		n = snprintf(f->path, sizeof(f->path), "%s/%s", home, path + 2);
	else
		n = snprintf(f->path, sizeof(f->path), "%s/.aws/%s", home, leaf);
	if (n < 0 || (size_t)n >= sizeof(f->path))
		return aws_fail(ld, -ENAMETOOLONG, "the path of the AWS %s file is too long", leaf);
	f->path[n] = '\0';
	return 0;
}

/* A larger copy of buf, the old one wiped: the credentials file holds secrets. */
static char *grow(char *buf, size_t len, size_t cap)
{
	char *p = malloc(cap);

	if (p && len)
		memcpy(p, buf, len);
	if (buf) {
		explicit_bzero(buf, len);
		free(buf);
	}
	return p;
}

/* All of fd into f->buf, NUL-terminated; -EFBIG past FILE_MAX_SIZE. */
static int read_whole(int fd, struct aws_file *f)
{
	size_t cap = 0;
	ssize_t got;

	for (;;) {
		if (f->len == cap) {
			if (cap > FILE_MAX_SIZE)
				return -EFBIG;
			cap = cap ? cap * 2 : 16384;
			if (cap > FILE_MAX_SIZE + 1)
				cap = FILE_MAX_SIZE + 1;
			if (!(f->buf = grow(f->buf, f->len, cap + 1)))
				return -ENOMEM;
		}
		got = read(fd, f->buf + f->len, cap - f->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (!got)
			break;
		f->len += (size_t)got;
	}
	f->buf[f->len] = '\0';
	return 0;
}

/* f->buf from f->path; a missing file is an empty one. */
static int file_read(struct load *ld, struct aws_file *f)
{
	int fd, ret;

	if (!f->path[0])
		return 0;
	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	ret = fd < 0 ? errno : 0;
	if (ret == ENOENT || ret == ENOTDIR)
		return 0;
	if (ret)
		return aws_fail(ld, -ret, "cannot open '%s': %s", f->path, strerror(ret));
	ret = read_whole(fd, f);
	close(fd);
	if (ret == -EFBIG)
		return aws_fail(ld, ret, "'%s' is larger than 1 MiB: not an AWS profile file",
				f->path);
	if (ret)
		return aws_fail(ld, ret, "cannot read '%s': %s", f->path, strerror(-ret));
	if (memchr(f->buf, '\0', f->len))
		return aws_fail(ld, -EINVAL, "'%s' has a NUL byte: not an AWS profile file",
				f->path);
	return 0;
}

int aws_profile_load(struct load *ld)
{
	struct aws_file *cr = &ld->files[FILE_CREDENTIALS], *cf = &ld->files[FILE_CONFIG];
	char q[80];
	int ret;

	ld->profile =
		ld->ov->profile && *ld->ov->profile ? ld->ov->profile : aws_env("AWS_PROFILE");
	ld->profile_named = ld->profile != NULL;
	if (!ld->profile)
		ld->profile = "default";
	if ((ret = file_locate(ld, cr, "AWS_SHARED_CREDENTIALS_FILE", "credentials")) ||
	    (ret = file_locate(ld, cf, "AWS_CONFIG_FILE", "config")) || (ret = file_read(ld, cr)) ||
	    (ret = file_read(ld, cf)) || (cr->buf && (ret = aws_ini_parse(ld, cr, false))) ||
	    (cf->buf && (ret = aws_ini_parse(ld, cf, true))))
		return ret;
	snprintf(ld->in_config, sizeof(ld->in_config), "profile '%.80s' in %.4096s",
		 aws_shown(ld->profile, q, sizeof(q)), cf->path);
	if (ld->profile_named && !cr->found && !cf->found)
		return aws_fail(ld, -ENOENT, "AWS profile '%s' is in neither '%s' nor '%s'",
				aws_shown(ld->profile, q, sizeof(q)), cr->path, cf->path);
	return 0;
}

void aws_files_release(struct load *ld)
{
	for (int i = 0; i < FILE_COUNT; i++) {
		if (ld->files[i].buf) {
			explicit_bzero(ld->files[i].buf, ld->files[i].len);
			free(ld->files[i].buf);
		}
	}
}

/* A setting of the profile in the config file (where the AWS tools read settings from). */
const char *aws_profile_setting(const struct load *ld, enum setting s)
{
	return ld->files[FILE_CONFIG].set[s];
}
