/* SPDX-License-Identifier: Apache-2.0 */
/* Fetching debug files from debuginfod servers (debuginfod.h). */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debuginfod.h"
#include "open_regular.h"

#define DEBUGINFOD_SONAME "libdebuginfod.so.1"
#define DEBUGINFOD_NEEDED "--debuginfod needs " DEBUGINFOD_SONAME " (Debian: libdebuginfod1)"

/* <elfutils/debuginfod.h> gives the types; the calls go through fns only. */
#define DEBUGINFOD_FNS(X)                                                                          \
	X(debuginfod_client *, begin, (void))                                                      \
	X(int, find_debuginfo, (debuginfod_client *, const unsigned char *, int, char **))         \
	X(int, find_executable, (debuginfod_client *, const unsigned char *, int, char **))        \
	X(void, set_progressfn, (debuginfod_client *, debuginfod_progressfn_t))                    \
	X(const char *, get_url, (debuginfod_client *))                                            \
	X(void, set_user_data, (debuginfod_client *, void *))                                      \
	X(void *, get_user_data, (debuginfod_client *))                                            \
	X(void, end, (debuginfod_client *))

static struct {
#define X(ret, name, args) ret(*name) args;
	DEBUGINFOD_FNS(X)
#undef X
} fns;

static int load_ret;
static char load_why[256];

static int load_library(void)
{
	void *h = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		const char *why = dlerror();

		snprintf(load_why, sizeof(load_why), "%s%s%s", DEBUGINFOD_NEEDED, why ? ": " : "",
			 why ? why : "");
		return -ELIBACC;
	}
#define X(ret, name, args)                                                                         \
	if (!(*(void **)&fns.name = dlsym(h, "debuginfod_" #name))) {                              \
		snprintf(load_why, sizeof(load_why), "%s: the one found lacks debuginfod_%s",      \
			 DEBUGINFOD_NEEDED, #name);                                                \
		dlclose(h);                                                                        \
		return -ELIBACC;                                                                   \
	}
	DEBUGINFOD_FNS(X)
#undef X
	return 0;
}

/* The URLs joined by spaces into DEBUGINFOD_URLS, as libdebuginfod reads them. */
static int set_urls(const char *const *urls, size_t n)
{
	size_t len = 1;
	char *all;
	int err;

	for (size_t i = 0; i < n; i++)
		len += strlen(urls[i]) + 1;
	if (!(all = calloc(1, len)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(all, " ");
		strcat(all, urls[i]);
	}
	err = setenv("DEBUGINFOD_URLS", all, 1) ? -errno : 0;
	free(all);
	return err;
}

/* name set to value unless it is set (an empty variable counts as unset). */
static void default_env(const char *name, const char *value)
{
	const char *v = getenv(name);

	if (!v || !*v)
		setenv(name, value, 1);
}

int dbgd_setup(const char *const *urls, size_t n, char *err, size_t err_size)
{
	const char *env;

	if (n && set_urls(urls, n)) {
		snprintf(err, err_size, "--debuginfod-url: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	env = getenv("DEBUGINFOD_URLS");
	if (!env || !env[strspn(env, " \t")]) {
		snprintf(err, err_size,
			 "--debuginfod: no server: set DEBUGINFOD_URLS or give "
			 "--debuginfod-url URL");
		return -EINVAL;
	}
	/* libdebuginfod's own defaults (and "" is no limit at all) hold a CI step for minutes. */
	default_env("DEBUGINFOD_TIMEOUT", DEBUGINFOD_DEFAULT_TIMEOUT);
	default_env("DEBUGINFOD_RETRY_LIMIT", DEBUGINFOD_DEFAULT_RETRY_LIMIT);
	if (!load_ret && !fns.begin)
		load_ret = load_library();
	if (load_ret)
		snprintf(err, err_size, "%s", load_why);
	return load_ret;
}

const char *dbgd_urls(void)
{
	const char *env = getenv("DEBUGINFOD_URLS");

	return env ? env : "";
}

/*
 * Called while a download moves: the caller's function, which may cut it
 * (non-zero). Without one of ours, libdebuginfod prints its own progress to
 * stderr when DEBUGINFOD_PROGRESS is set, across the batch's lines.
 */
static int progress(debuginfod_client *c, long done, long total)
{
	const struct dbgd_progress *p = fns.get_user_data(c);

	return p && p->fn ? p->fn(p->ctx, done, total) : 0;
}

/*
 * A cache hit has no URL of its own: the first server's, where a fetch
 * would have gone first, so that a re-run's manifest says the same.
 */
static char *cached_url(const char *hex, const char *kind)
{
	const char *urls = dbgd_urls() + strspn(dbgd_urls(), " \t");
	size_t len = strcspn(urls, " \t");
	char *url;

	while (len && urls[len - 1] == '/')
		len--;
	if (asprintf(&url, "%.*s/buildid/%s/%s", (int)len, urls, hex, kind) < 0)
		return NULL;
	return url;
}

int dbgd_fetch(const char *hex, const struct dbgd_progress *p, struct dbgd_got *got)
{
	return dbgd_fetch_kind(hex, false, p, got);
}

int dbgd_fetch_kind(const char *hex, bool executable, const struct dbgd_progress *p,
		    struct dbgd_got *got)
{
	debuginfod_client *c;
	const char *url;
	char *path = NULL;
	int fd;

	memset(got, 0, sizeof(*got));
	if (!fns.begin)
		return -ELIBACC;
	if (!(c = fns.begin()))
		return -ENOMEM;
	fns.set_user_data(c, (void *)p);
	fns.set_progressfn(c, progress);
	fd = executable ? fns.find_executable(c, (const unsigned char *)hex, 0, &path)
			: fns.find_debuginfo(c, (const unsigned char *)hex, 0, &path);
	if (fd < 0) {
		fns.end(c);
		return fd;
	}
	close(fd); /* the extraction opens the path itself, as a file found on disk */
	got->path = path;
	got->url = (url = fns.get_url(c))
			   ? strdup(url)
			   : cached_url(hex, executable ? "executable" : "debuginfo");
	fns.end(c);
	if (!got->url) {
		dbgd_got_free(got);
		return -ENOMEM;
	}
	return 0;
}

void dbgd_got_free(struct dbgd_got *got)
{
	free(got->path);
	free(got->url);
	got->path = got->url = NULL;
}

/* The contents of the section named name, or NULL. */
static Elf_Data *section_named(Elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (n = elf_strptr(e, shstrndx, sh.sh_name)) && !strcmp(n, name))
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* .gnu_debugaltlink: the file's name, NUL, then its build ID's bytes. */
static int altlink_of(Elf *e, char *hex, size_t hex_size)
{
	Elf_Data *d = section_named(e, ".gnu_debugaltlink");
	const unsigned char *p, *nul;
	size_t idlen;

	if (!d || !d->d_buf || !d->d_size || !(nul = memchr(d->d_buf, 0, d->d_size)))
		return 0;
	p = nul + 1;
	idlen = d->d_size - (size_t)(p - (const unsigned char *)d->d_buf);
	if (!idlen || idlen > 64 || 2 * idlen + 1 > hex_size)
		return 0;
	for (size_t i = 0; i < idlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", p[i]);
	return 1;
}

int dbgd_altlink_id(const char *path, char *hex, size_t hex_size)
{
	int fd = open_regular(path), found = 0;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL); /* pread: no mapping that could fault */
	if (e && elf_kind(e) == ELF_K_ELF)
		found = altlink_of(e, hex, hex_size);
	elf_end(e);
	close(fd);
	return found;
}
