/* SPDX-License-Identifier: Apache-2.0 */
/* Inputs fetched from debuginfod by build ID alone (by_build_id.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "by_build_id.h"
#include "cpus.h"
#include "debuginfod.h"
#include "usage.h"

/* The most build IDs one run fetches: a file past it is no list of a profiler's misses. */
#define MAX_IDS 100000

/* The build IDs, and what each fetch gave: [2 * i] its executable, [2 * i + 1] its debug file. */
struct ids {
	char **id;
	size_t n, cap;
	struct dbgd_got *got;
	int *err;
	size_t next; /* the next to fetch, under lock */
	pthread_mutex_t lock;
};

static int add_id(struct ids *s, const char *id, char *err, size_t err_size)
{
	if (!lidia_store_build_id_valid(id) || strlen(id) >= LIDIA_KEY_MAX) {
		snprintf(err, err_size, "--build-id: '%.80s' is not a build ID (hex digits)", id);
		return -1;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		void *p = cap > MAX_IDS ? NULL : realloc(s->id, cap * sizeof(*s->id));

		if (!p) {
			snprintf(err, err_size, "--build-ids: more than %d build IDs", MAX_IDS);
			return -1;
		}
		s->id = p;
		s->cap = cap;
	}
	if (!(s->id[s->n] = strdup(id))) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	s->n++;
	return 0;
}

/* FILE's build IDs, one a line ('#' comments, blank lines, spaces around). */
static int read_ids(struct ids *s, const char *path, char *err, size_t err_size)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *line = NULL, *id;
	size_t cap = 0;
	int ret = 0;

	if (!f) {
		snprintf(err, err_size, "--build-ids: %s: %s", path, strerror(errno));
		return -1;
	}
	while (!ret && getline(&line, &cap, f) >= 0) {
		line[strcspn(line, "#\r\n")] = '\0';
		id = line + strspn(line, " \t");
		id[strcspn(id, " \t")] = '\0';
		if (*id)
			ret = add_id(s, id, err, err_size);
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return ret;
}

/* One worker: the next build ID's executable and debug file, until none is left. */
static void *fetch_some(void *arg)
{
	struct ids *s = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&s->lock);
		i = s->next++;
		pthread_mutex_unlock(&s->lock);
		if (i >= s->n)
			return NULL;
		for (int k = 0; k < 2; k++)
			s->err[2 * i + k] =
				dbgd_fetch_kind(s->id[i], k == 0, NULL, &s->got[2 * i + k]);
	}
}

static void fetch_all(struct ids *s, unsigned jobs)
{
	pthread_t t[64];
	unsigned n = jobs < 64 ? jobs : 64, started = 0;

	pthread_mutex_init(&s->lock, NULL);
	for (; started < n && started < s->n; started++)
		if (pthread_create(&t[started], NULL, fetch_some, s))
			break;
	if (!started)
		fetch_some(s); /* no thread: on this one */
	for (unsigned i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	pthread_mutex_destroy(&s->lock);
}

/* What each fetch gave, in order: the paths; a build ID with nothing said, once. */
static int collect(struct ids *s, struct fetched *out)
{
	if (!(out->paths = calloc(2 * s->n + 1, sizeof(*out->paths))))
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		int e[2] = { s->err[2 * i], s->err[2 * i + 1] };

		for (int k = 0; k < 2; k++)
			if (!e[k]) {
				out->paths[out->n++] = s->got[2 * i + k].path;
				s->got[2 * i + k].path = NULL;
			}
		if (!e[0] || !e[1])
			continue;
		out->failed++;
		if (e[0] == -ENOENT && e[1] == -ENOENT)
			error(s->id[i], "not on the debuginfod servers (%s)", dbgd_urls());
		else
			error(s->id[i], "debuginfod (%s): %s", dbgd_urls(),
			      strerror(-(e[0] != -ENOENT ? e[0] : e[1])));
	}
	return 0;
}

static void ids_free(struct ids *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->id[i]);
		if (s->got) {
			dbgd_got_free(&s->got[2 * i]);
			dbgd_got_free(&s->got[2 * i + 1]);
		}
	}
	free(s->id);
	free(s->got);
	free(s->err);
}

int fetch_build_ids(const struct batch_opts *o, struct fetched *out, char *err, size_t err_size)
{
	struct ids s = { 0 };
	int ret = -1;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < o->nbuild_ids; i++)
		if (add_id(&s, o->build_ids[i], err, err_size))
			goto out;
	if (o->build_ids_file && read_ids(&s, o->build_ids_file, err, err_size))
		goto out;
	ret = -2;
	if (dbgd_setup(o->debuginfod_urls, o->ndebuginfod_urls, err, err_size))
		goto out;
	s.got = calloc(2 * s.n + 1, sizeof(*s.got));
	s.err = calloc(2 * s.n + 1, sizeof(*s.err));
	if (!s.got || !s.err) {
		snprintf(err, err_size, "out of memory");
		goto out;
	}
	fetch_all(&s, o->jobs ? o->jobs : usable_cpus());
	ret = collect(&s, out) ? -2 : 0;
	if (ret)
		snprintf(err, err_size, "out of memory");
out:
	ids_free(&s);
	return ret;
}

void fetched_free(struct fetched *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->paths[i]);
	free(f->paths);
	memset(f, 0, sizeof(*f));
}
