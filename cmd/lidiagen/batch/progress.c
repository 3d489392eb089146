/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the batch prints (batch_internal.h): the progress line on a
 * terminal, warnings, problems with inputs, the library's messages, each
 * group's lines in group order, and the summary. All of it under b->lock,
 * so lines never interleave, and the progress line is erased before any
 * other line is printed.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "batch_internal.h"
#include "oci_dir.h"
#include "publish.h"
#include "usage.h"

/* ---- the progress line -------------------------------------------------- */

static double seconds_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

/* The terminal's width: COLUMNS, else what the terminal says, else 80. */
static unsigned term_width(void)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;

	if (env && atoi(env) > 0)
		return (unsigned)atoi(env);
	if (!ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

static bool line_shown(const struct batch *b)
{
	return b->tty && verbosity >= 1;
}

void progress_key(struct batch *b, const char *key)
{
	uint64_t h;
	size_t i;

	if (!line_shown(b))
		return;
	h = str_hash64(key) | 1; /* distinct keys, for the line alone; 0 marks an empty slot */
	if (2 * (b->keys_seen + 1) > b->cap_keys) {
		size_t cap = b->cap_keys ? 2 * b->cap_keys : 256;
		uint64_t *keys = calloc(cap, sizeof(*keys));

		if (!keys)
			return;
		for (size_t k = 0; k < b->cap_keys; k++) {
			if (!b->keys[k])
				continue;
			for (i = b->keys[k] & (cap - 1); keys[i]; i = (i + 1) & (cap - 1))
				;
			keys[i] = b->keys[k];
		}
		free(b->keys);
		b->keys = keys;
		b->cap_keys = cap;
	}
	for (i = h & (b->cap_keys - 1); b->keys[i]; i = (i + 1) & (b->cap_keys - 1))
		if (b->keys[i] == h)
			return;
	b->keys[i] = h;
	b->keys_seen++;
}

void progress_input(struct batch *b, const char *path)
{
	size_t n = strlen(path);

	/* Its end: the member's name says most. */
	if (n >= sizeof(b->current))
		path += n - (sizeof(b->current) - 1);
	memcpy(b->current, path, strlen(path) + 1);
	progress(b);
}

void progress(struct batch *b)
{
	char line[1024], eta[32] = "ETA -:--";
	size_t total, done = b->groups_done, width = term_width();
	double secs, rate;
	int n;

	if (!line_shown(b))
		return;
	total = b->ngroups - b->skipped_shard;
	if (done > total)
		done = total;
	/* At most ten times a second, but the last one always: the line ends at 100%. */
	if (seconds_since(&b->last_progress) < 0.1 && !(b->ngroups && done == total))
		return;
	clock_gettime(CLOCK_MONOTONIC, &b->last_progress);
	secs = seconds_since(&b->start);
	rate = secs > 0 ? (double)b->bytes / (1 << 20) / secs : 0;
	if (b->ngroups && done && done < total) {
		double per = seconds_since(&b->convert_start) / (double)done;
		double left = per * (double)(total - done);

		snprintf(eta, sizeof(eta), "ETA %u:%02u", (unsigned)left / 60, (unsigned)left % 60);
	} else if (b->ngroups && done == total) {
		snprintf(eta, sizeof(eta), "ETA 0:00");
	}
	/* Identifying, the inputs read and the keys found so far; then the groups converted. */
	if (!b->ngroups)
		n = snprintf(line, sizeof(line), "lidiagen: identifying: %zu files, %zu build IDs ",
			     b->files, b->keys_seen);
	else
		n = snprintf(line, sizeof(line), "lidiagen: %zu/%zu build IDs %3u%% %.1f MiB/s %s ",
			     done, total, total ? (unsigned)(100 * done / total) : 0, rate, eta);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	/* Leave the last column free: a full line wraps on some terminals. */
	if (width > sizeof(line) - 1)
		width = sizeof(line) - 1;
	if ((size_t)n + 1 >= width) {
		line[width > 1 ? width - 1 : 0] = '\0';
	} else {
		size_t room = width - 1 - (size_t)n, len = strlen(b->current);

		if (len <= room)
			memcpy(line + n, b->current, len + 1);
		else if (room > 3)
			snprintf(line + n, room + 1, "...%s", b->current + len - (room - 3));
		else
			line[n] = '\0';
	}
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
	b->drawn = true;
}

void end_progress(struct batch *b)
{
	if (b->drawn) {
		fputs("\r\033[K", stderr);
		b->drawn = false;
	}
}

/* The redrawing thread: the line moves on (MiB/s, ETA) while a large input is read. */
static void *ticker(void *arg)
{
	struct batch *b = arg;

	pthread_mutex_lock(&b->lock);
	while (!b->stop_ticking) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 100 * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&b->tick, &b->lock, &until);
		if (!b->stop_ticking)
			progress(b);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

void progress_start(struct batch *b)
{
	clock_gettime(CLOCK_MONOTONIC, &b->start);
	b->convert_start = b->start;
	pthread_cond_init(&b->tick, NULL);
	if (line_shown(b))
		b->ticking = !pthread_create(&b->ticker, NULL, ticker, b);
}

void progress_stop(struct batch *b)
{
	pthread_mutex_lock(&b->lock);
	b->stop_ticking = true;
	pthread_cond_signal(&b->tick);
	pthread_mutex_unlock(&b->lock);
	if (b->ticking)
		pthread_join(b->ticker, NULL);
	b->ticking = false;
	pthread_cond_destroy(&b->tick);
	pthread_mutex_lock(&b->lock);
	end_progress(b);
	pthread_mutex_unlock(&b->lock);
	free(b->keys);
	b->keys = NULL;
}

/* ---- lines ------------------------------------------------------------- */

void input_problem(void *ctx, const char *path, const char *msg)
{
	struct batch *b = ctx;
	char shown[4096];

	path = oci_dir_shown(path, shown, sizeof(shown)); /* an OCI layout directory's tar */
	pthread_mutex_lock(&b->lock);
	end_progress(b);
	error(path, "%s", msg);
	b->failed_inputs++;
	problems_add(&b->failures, path, msg); /* out of memory: said, if not in the manifest */
	pthread_mutex_unlock(&b->lock);
}

/* A warning's line: an error's with --strict (then shown even with -q). */
static void vwarn(struct batch *b, const char *what, const char *fmt, va_list ap)
{
	b->warnings++;
	if (!b->o->strict && verbosity < 1)
		return;
	end_progress(b);
	fputs(b->o->strict ? "lidiagen: " : "lidiagen: warning: ", stderr);
	if (what)
		fprintf(stderr, "%s: ", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void batch_warning(struct batch *b, const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(b, what, fmt, ap);
	va_end(ap);
}

static void warn_line(struct batch *b, const char *msg)
{
	batch_warning(b, NULL, "%s", msg);
}

void batch_log(enum lidia_log_level level, const char *msg, void *ctx)
{
	struct batch *b = ctx;

	/* Notes with -v; the library's internals (LIDIA_LOG_DEBUG) with -vv only. */
	if ((level == LIDIA_LOG_INFO && verbosity < 2) ||
	    (level == LIDIA_LOG_DEBUG && verbosity < 3))
		return;
	pthread_mutex_lock(&b->lock);
	if (level == LIDIA_LOG_WARN) {
		warn_line(b, msg);
	} else {
		end_progress(b);
		fprintf(stderr, "lidiagen: %s\n", msg);
	}
	pthread_mutex_unlock(&b->lock);
}

void group_message(struct group *g, bool is_error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&g->message, fmt, ap) < 0)
		g->message = NULL;
	va_end(ap);
	g->message_is_error = is_error;
}

void group_warning(struct group *g, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&g->warning, fmt, ap) < 0)
		g->warning = NULL;
	va_end(ap);
}

void print_done(struct batch *b)
{
	while (b->next_print < b->ngroups && b->groups[b->next_print].done) {
		struct group *g = &b->groups[b->next_print++];

		/* Kept for the manifest: its warning and error. */
		if (g->warning)
			warn_line(b, g->warning);
		if (g->message && g->message_is_error && (!g->said || verbosity >= 2)) {
			end_progress(b);
			fprintf(stderr, "lidiagen: %s\n", g->message);
		} else if (g->message && !g->message_is_error &&
			   verbosity >= (g->status == ST_PLANNED ? 1 : 2)) {
			/* A dry run's plan is what it is run for: said without -v. */
			end_progress(b);
			printf("%s\n", g->message);
		}
	}
	fflush(stdout);
	progress(b);
}

/* ", N reason" into the summary's parenthesis, for each reason with a count. */
static void reason(FILE *f, bool *first, size_t n, const char *what)
{
	if (!n)
		return;
	fprintf(f, "%s%zu %s", *first ? " (" : ", ", n, what);
	*first = false;
}

/* What publishing cost: "; 12 requests (10 HEAD, 2 PUT, 0 retried), 1.2 MiB sent". */
static void print_requests(struct publish *p)
{
	struct s3_stats st;

	publish_stats(p, &st);
	fprintf(stderr,
		"; %" PRIu64 " request%s (%" PRIu64 " HEAD, %" PRIu64 " PUT, %" PRIu64
		" GET, %" PRIu64 " retried), %.1f MiB sent",
		st.requests, st.requests == 1 ? "" : "s", st.heads, st.puts, st.gets, st.retries,
		(double)st.bytes_sent / (1 << 20));
}

void print_summary(struct batch *b)
{
	size_t skipped = b->nothing + b->dynsym_only + b->mixed + b->skipped_shard, keys;
	bool first = true;
	char why[1024];

	/* The endpoint gone or untrustworthy: one line for every key not sent. */
	if (b->o->bucket && publish_stopped(b->o->bucket, why, sizeof(why)))
		fprintf(stderr, "lidiagen: %s\n", why);

	for (int r = SKIP_NO_KEY; r < SKIP_REASONS; r++)
		skipped += b->skipped[r];
	keys = b->ngroups - b->skipped_shard;
	fprintf(stderr, "lidiagen: %s%zu file%s, %zu ELF, %zu build ID%s: ",
		b->o->dry_run ? "dry run: " : "", b->files, b->files == 1 ? "" : "s", b->elves,
		keys, keys == 1 ? "" : "s");
	if (b->o->dry_run)
		fprintf(stderr, "%zu would be %s (%zu over another)", b->planned,
			b->o->bucket ? "uploaded" : "written", b->planned_over);
	else
		fprintf(stderr, "%zu %s", b->converted + b->replaced,
			b->o->bucket ? "uploaded" : "written");
	if (b->replaced)
		fprintf(stderr, " (%zu replaced)", b->replaced);
	fprintf(stderr, ", %zu %s; %zu skipped", b->kept, b->o->bucket ? "exist" : "kept", skipped);
	reason(stderr, &first, b->skipped[SKIP_NO_KEY], "no build ID");
	reason(stderr, &first, b->skipped[SKIP_SHORT_KEY], "build ID too short");
	reason(stderr, &first, b->skipped[SKIP_NOT_LINKED], "not linked");
	reason(stderr, &first, b->skipped[SKIP_NOT_PROGRAM], "not a program");
	reason(stderr, &first, b->skipped[SKIP_DEGENERATE_KEY], "degenerate build ID");
	reason(stderr, &first, b->skipped[SKIP_MACHINE], "architecture not read");
	reason(stderr, &first, b->nothing, "nothing to symbolize");
	reason(stderr, &first, b->dynsym_only, "only .dynsym");
	reason(stderr, &first, b->mixed, "debug file laid out apart");
	reason(stderr, &first, b->skipped_shard, "other shards");
	fprintf(stderr, "%s; %zu warning%s%s; %zu failed", first ? "" : ")", b->warnings,
		b->warnings == 1 ? "" : "s",
		b->warnings && b->o->strict ? " (failures: --strict)" : "",
		b->failed + b->failed_inputs);
	if (b->o->bucket)
		print_requests(b->o->bucket);
	fputc('\n', stderr);
}
