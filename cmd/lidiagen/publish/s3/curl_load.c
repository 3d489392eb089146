/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libcurl loaded on first use (curl_load.h), as lib/input/archive_walk.c
 * loads libarchive: dlopen of the soname, every function looked up once
 * into one table, and a missing library a one-line reason, not a failure
 * to start. Linked, libcurl and its 30 libraries took 6 MiB of every run.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "curl_load.h"

#define CURL_SONAME "libcurl.so.4"
#define CURL_NEEDED "publishing needs " CURL_SONAME " (Debian: libcurl4)"
/* What dlerror says when there is no such library at all. */
#define CURL_ABSENT CURL_SONAME ": cannot open shared object file"

struct s3_curl_fns s3_curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_ret;
static char load_why[256];

static void load(void)
{
	struct s3_curl_fns fns;
	const char *why;
	void *h = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		/*
		 * Not there at all: the line says so. Anything else (one of its
		 * own libraries missing, a broken file): the loader's reason too.
		 */
		why = dlerror();
		load_ret = -ELIBACC;
		if (!why || !strncmp(why, CURL_ABSENT, strlen(CURL_ABSENT)))
			snprintf(load_why, sizeof(load_why), "%s", CURL_NEEDED);
		else
			snprintf(load_why, sizeof(load_why), "%s: %s", CURL_NEEDED, why);
		return;
	}
#define X(ret, name, args)                                                                         \
	if (!(*(void **)&fns.name = dlsym(h, "curl_" #name))) {                                    \
		snprintf(load_why, sizeof(load_why), "%s: the one found lacks curl_%s",            \
			 CURL_NEEDED, #name);                                                      \
		load_ret = -ELIBACC;                                                               \
		dlclose(h);                                                                        \
		return;                                                                            \
	}
	S3_CURL_FNS(X)
#undef X
	/* Once, before any handle, as libcurl asks: it is not for two threads at once. */
	if (fns.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(load_why, sizeof(load_why), "cannot start libcurl (curl_global_init)");
		load_ret = -ENOMEM;
		dlclose(h);
		return;
	}
	s3_curl = fns;
}

int s3_curl_load(char *err, size_t err_size)
{
	pthread_once(&load_once, load);
	if (load_ret && err_size)
		snprintf(err, err_size, "%s", load_why);
	return load_ret;
}

static size_t body_write(char *data, size_t size, size_t count, void *arg)
{
	struct curl_body *b = arg;
	size_t n = size * count; /* size is 1: libcurl's promise */

	/* Returning less than n stops the transfer. */
	if (n > b->cap - b->len)
		return 0;
	memcpy(b->buf + b->len, data, n);
	b->len += n;
	return n;
}

void s3_curl_small_request(CURL *h, const char *url, long connect_ms, long total_ms, char *curl_err,
			   struct curl_slist *headers, struct curl_body *body)
{
	s3_curl.easy_setopt(h, CURLOPT_URL, url);
	s3_curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	s3_curl.easy_setopt(h, CURLOPT_NOPROXY, "*");
	s3_curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	s3_curl.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	s3_curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	s3_curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, total_ms);
	s3_curl.easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
	s3_curl.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	s3_curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, body_write);
	s3_curl.easy_setopt(h, CURLOPT_WRITEDATA, body);
}
