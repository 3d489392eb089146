/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Debug files from debuginfod servers (--debuginfod), through elfutils'
 * libdebuginfod, loaded on first use as publish/s3/curl_load.c loads
 * libcurl: only a run that asks the servers carries the library. The
 * servers are DEBUGINFOD_URLS's; the library keeps its own cache
 * (DEBUGINFOD_CACHE_PATH) and timeout (DEBUGINFOD_TIMEOUT).
 */
#ifndef LIDIAGEN_DEBUGINFOD_H
#define LIDIAGEN_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The defaults of DEBUGINFOD_TIMEOUT (seconds) and DEBUGINFOD_RETRY_LIMIT:
 * libdebuginfod tries a silent server 1 + 2 times for 90 s each, 4.5
 * minutes of a CI step; these give it up after 2 x 15 s.
 */
#define DEBUGINFOD_DEFAULT_TIMEOUT "15"
#define DEBUGINFOD_DEFAULT_RETRY_LIMIT "1"

/*
 * Before any thread starts: DEBUGINFOD_URLS set to urls[0..n) (space
 * separated) when n > 0, DEBUGINFOD_TIMEOUT and DEBUGINFOD_RETRY_LIMIT to
 * the defaults when unset; then
 * the library loaded. 0, or -ELIBACC / -EINVAL (no URL at all) and one
 * line in err.
 */
int dbgd_setup(const char *const *urls, size_t n, char *err, size_t err_size);

/* What one fetch got. */
struct dbgd_got {
	char *path; /* the debug file, in the cache (malloc'd) */
	char *url;  /* where it came from (malloc'd; the servers' list for a cache hit) */
};

/* Told how a download goes (bytes so far, of total; 0: unknown); non-zero cuts it. */
struct dbgd_progress {
	int (*fn)(void *ctx, long done, long total);
	void *ctx;
};

/*
 * /buildid/<hex>/debuginfo from the servers (or the cache), p told as it
 * goes (p may be NULL): 0 and *got
 * filled; -ENOENT when no server has it; another -errno when none could
 * be asked or answered in time (-ETIME, -ECONNREFUSED...). One client per
 * fetch: a client is not shared between threads.
 */
int dbgd_fetch(const char *hex, const struct dbgd_progress *p, struct dbgd_got *got);

/* As dbgd_fetch, or with executable /buildid/<hex>/executable. */
int dbgd_fetch_kind(const char *hex, bool executable, const struct dbgd_progress *p,
		    struct dbgd_got *got);

/* The servers asked, as DEBUGINFOD_URLS lists them. */
const char *dbgd_urls(void);

void dbgd_got_free(struct dbgd_got *got);

/*
 * The build ID (hex) of the dwz supplementary file that the debug file at
 * path names (.gnu_debugaltlink): 1 and hex set, 0 when it names none.
 */
int dbgd_altlink_id(const char *path, char *hex, size_t hex_size);

#endif
