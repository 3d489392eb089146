/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libexpat loaded on first use (expat_load.h), as curl_load.c loads
 * libcurl: dlopen of the soname, every function looked up once into one
 * table, a missing library one line. Only publishing reads XML, and a run
 * that converts to a directory should not carry the library.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "expat_load.h"

#define EXPAT_SONAME "libexpat.so.1"
#define EXPAT_NEEDED "publishing needs " EXPAT_SONAME " (Debian: libexpat1)"

struct s3_expat_fns s3_expat;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_ret;
static char load_why[256];

static void load(void)
{
	struct s3_expat_fns fns;
	void *h = dlopen(EXPAT_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		const char *why = dlerror();

		snprintf(load_why, sizeof(load_why), "%s%s%s", EXPAT_NEEDED, why ? ": " : "",
			 why ? why : "");
		load_ret = -ELIBACC;
		return;
	}
#define X(ret, name, args)                                                                         \
	if (!(*(void **)&fns.name = dlsym(h, "XML_" #name))) {                                     \
		snprintf(load_why, sizeof(load_why), "%s: the one found lacks XML_%s",             \
			 EXPAT_NEEDED, #name);                                                     \
		load_ret = -ELIBACC;                                                               \
		dlclose(h);                                                                        \
		return;                                                                            \
	}
	S3_EXPAT_FNS(X)
#undef X
	s3_expat = fns;
}

int s3_expat_load(char *err, size_t err_size)
{
	pthread_once(&load_once, load);
	if (load_ret && err_size)
		snprintf(err, err_size, "%s", load_why);
	return load_ret;
}
