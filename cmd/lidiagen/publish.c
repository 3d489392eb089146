/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bucket (publish.h). Clients are kept on a stack and lent to the
 * threads at work, so that each request reuses an open connection and no
 * two threads share one curl handle.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lidia.h"
#include "md5.h"
#include "publish.h"

/* What a listing showed at a key. */
struct listed {
	char *key;
	char etag[36]; /* the MD5 of a single PUT's body, in hex */
	uint64_t size;
};

struct publish {
	struct s3_config cfg;
	char url[1024];
	pthread_mutex_t lock; /* guards idle and stats */
	struct s3_client **idle;
	size_t nidle, cap_idle;
	struct s3_stats stats;
	/* The catalog (publish_survey): made before the threads, read-only after. */
	struct listed *cat; /* in key order */
	size_t ncat, cap_cat;
	char *surveyed;	 /* the directory listed; NULL: no listing */
	char *listed_to; /* the last key listed when the listing stopped early; NULL: whole */
};

/* A client for the calling thread, reused when one is idle. */
static struct s3_client *borrow(struct publish *p)
{
	struct s3_client *cl = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->nidle)
		cl = p->idle[--p->nidle];
	pthread_mutex_unlock(&p->lock);
	if (!cl && s3_client_new(&cl, &p->cfg))
		return NULL;
	return cl;
}

static void give_back(struct publish *p, struct s3_client *cl)
{
	pthread_mutex_lock(&p->lock);
	s3_client_take_stats(cl, &p->stats);
	if (p->nidle == p->cap_idle) {
		size_t cap = p->cap_idle ? p->cap_idle * 2 : 16;
		struct s3_client **n = realloc(p->idle, cap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&p->lock);
			s3_client_free(cl);
			return;
		}
		p->idle = n;
		p->cap_idle = cap;
	}
	p->idle[p->nidle++] = cl;
	pthread_mutex_unlock(&p->lock);
}

/* "s3://BUCKET/PREFIX/KEY: 403 AccessDenied: ..." into err. */
static void key_error(const struct publish *p, const char *key, const struct s3_error *e, char *err,
		      size_t err_size)
{
	char what[400];

	s3_error_format(e, what, sizeof(what));
	snprintf(err, err_size, "%s/%s: %s", p->url, key, what);
}

static int check_bucket(struct publish *p, char *err, size_t err_size)
{
	struct s3_client *cl = borrow(p);
	struct s3_error e;
	char what[400];
	int ret;

	if (!cl)
		return -ENOMEM;
	ret = s3_check_bucket(cl, &e);
	give_back(p, cl);
	if (ret) {
		s3_error_format(&e, what, sizeof(what));
		snprintf(err, err_size, "%s: %s", p->url, what);
	}
	return ret;
}

int publish_open(struct publish **out, const char *url, const struct s3_overrides *ov, char *err,
		 size_t err_size, bool *usage)
{
	struct publish *p = calloc(1, sizeof(*p));
	int ret;

	*usage = false;
	if (!p)
		return -ENOMEM;
	/*
	 * libcurl is told not to touch signals (CURLOPT_NOSIGNAL: threads), so a
	 * peer that closes a TLS connection must not kill the run with SIGPIPE.
	 */
	signal(SIGPIPE, SIG_IGN);
	pthread_mutex_init(&p->lock, NULL);
	if ((ret = s3_config_load(&p->cfg, url, ov, err, err_size))) {
		*usage = true;
		publish_close(p, NULL);
		return ret;
	}
	snprintf(p->url, sizeof(p->url), "s3://%s%s%s", p->cfg.bucket, *p->cfg.prefix ? "/" : "",
		 p->cfg.prefix);
	if ((ret = check_bucket(p, err, err_size))) {
		publish_close(p, NULL);
		return ret;
	}
	*out = p;
	return 0;
}

void publish_close(struct publish *p, struct s3_stats *st)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nidle; i++) {
		s3_client_take_stats(p->idle[i], &p->stats);
		s3_client_free(p->idle[i]);
	}
	if (st)
		*st = p->stats;
	free(p->idle);
	for (size_t i = 0; i < p->ncat; i++)
		free(p->cat[i].key);
	free(p->cat);
	free(p->surveyed);
	free(p->listed_to);
	s3_config_free(&p->cfg);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

void publish_stats(struct publish *p, struct s3_stats *st)
{
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->nidle; i++)
		s3_client_take_stats(p->idle[i], &p->stats);
	*st = p->stats;
	pthread_mutex_unlock(&p->lock);
}

const char *publish_url(const struct publish *p)
{
	return p->url;
}

bool publish_stopped(const struct publish *p, char *buf, size_t size)
{
	return s3_stopped(&p->cfg, buf, size);
}

const char *publish_credentials_source(const struct publish *p)
{
	return p->cfg.creds.source;
}

/* Our metadata as what the object holds; anything unreadable makes it not ours. */
static void existing_from_meta(const struct s3_head *h, struct existing *ex)
{
	int level = level_parse(h->meta.holds);

	memset(ex, 0, sizeof(*ex));
	ex->level = LEVEL_NONE;
	if (!h->ours || level <= LEVEL_NONE)
		return;
	ex->valid = true;
	ex->level = (enum level)level;
	ex->counts.functions = (size_t)h->meta.functions;
	ex->counts.inline_ranges = (size_t)h->meta.inline_ranges;
	ex->counts.line_rows = (size_t)h->meta.line_rows;
	ex->size = h->size;
	memcpy(ex->sha, h->meta.sha256, sizeof(ex->sha));
}

/* ---- the catalog: one listing instead of a HEAD per key ---- */

static int add_listed(void *ctx, const struct s3_listed *o)
{
	struct publish *p = ctx;
	struct listed *l;

	if (p->ncat == p->cap_cat) {
		size_t cap = p->cap_cat ? p->cap_cat * 2 : 1024;
		struct listed *n = realloc(p->cat, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->cat = n;
		p->cap_cat = cap;
	}
	l = &p->cat[p->ncat];
	if (!(l->key = strdup(o->key)))
		return -ENOMEM;
	snprintf(l->etag, sizeof(l->etag), "%s", o->etag);
	l->size = o->size;
	p->ncat++;
	free(p->listed_to);
	p->listed_to = strdup(o->key);
	return p->listed_to ? 0 : -ENOMEM;
}

/* The directory all keys share ("a/b/" of "a/b/c" and "a/b/d"), into dir. */
static void common_dir(const char *const *keys, size_t n, char *dir, size_t size)
{
	size_t len = strlen(keys[0]), cut = 0;

	for (size_t i = 1; i < n; i++)
		for (size_t k = 0; k < len; k++)
			if (keys[i][k] != keys[0][k]) {
				len = k;
				break;
			}
	for (size_t k = 0; k < len; k++)
		if (keys[0][k] == '/')
			cut = k + 1;
	snprintf(dir, size, "%.*s", (int)(cut < size ? cut : size - 1), keys[0]);
}

static int cmp_listed(const void *a, const void *b)
{
	return strcmp(((const struct listed *)a)->key, ((const struct listed *)b)->key);
}

void publish_survey(struct publish *p, const char *const *keys, size_t n)
{
	char dir[1024], token[2048] = "";
	size_t pages = 0, max_pages = n / 1000 + 2;
	struct s3_client *cl;
	struct s3_error e;
	int ret = 0;

	if (!n || p->surveyed || !(cl = borrow(p)))
		return;
	common_dir(keys, n, dir, sizeof(dir));
	/* A bucket far fuller than the keys to come: HEADs cost less past a few pages. */
	do
		ret = s3_list_page(cl, dir, token, sizeof(token), add_listed, p, &e);
	while (!ret && *token && ++pages < max_pages);
	give_back(p, cl);
	if (ret)
		return; /* every key is asked about with a HEAD */
	if (!*token) {
		free(p->listed_to);
		p->listed_to = NULL; /* the whole directory */
	}
	p->surveyed = strdup(dir);
	if (p->ncat > 1)
		qsort(p->cat, p->ncat, sizeof(*p->cat), cmp_listed);
}

/* What the listing showed at key; NULL when it showed nothing there. */
static const struct listed *find_listed(const struct publish *p, const char *key)
{
	struct listed k = { .key = (char *)key };

	return p->ncat ? bsearch(&k, p->cat, p->ncat, sizeof(*p->cat), cmp_listed) : NULL;
}

/* Whether the listing proves there is no object at key. */
static bool listed_absent(const struct publish *p, const char *key)
{
	if (!p->surveyed || strncmp(key, p->surveyed, strlen(p->surveyed)) || find_listed(p, key))
		return false;
	return !p->listed_to || strcmp(key, p->listed_to) < 0;
}

bool publish_listed_same(const struct publish *p, const char *key, const void *buf, size_t size)
{
	const struct listed *l = p->surveyed ? find_listed(p, key) : NULL;
	char md5[33];

	if (!l || l->size != size)
		return false;
	md5_hex(buf, size, md5);
	return !strcmp(l->etag, md5);
}

int publish_probe(struct publish *p, const char *key, struct existing *ex, bool *exists, char *err,
		  size_t err_size)
{
	struct s3_client *cl;
	struct s3_head h;
	struct s3_error e;
	int ret;

	if (listed_absent(p, key)) {
		memset(ex, 0, sizeof(*ex));
		ex->level = LEVEL_NONE;
		*exists = false;
		return 0;
	}
	if (!(cl = borrow(p))) {
		snprintf(err, err_size, "%s/%s: out of memory", p->url, key);
		return -ENOMEM;
	}
	ret = s3_head(cl, key, &h, &e);
	give_back(p, cl);
	if (ret) {
		key_error(p, key, &e, err, err_size);
		return ret;
	}
	*exists = h.exists;
	existing_from_meta(&h, ex);
	return 0;
}

int publish_put(struct publish *p, const char *key, const void *buf, size_t size,
		const struct existing *ex, char *err, size_t err_size)
{
	struct s3_client *cl = borrow(p);
	struct s3_meta m = {
		.functions = ex->counts.functions,
		.inline_ranges = ex->counts.inline_ranges,
		.line_rows = ex->counts.line_rows,
	};
	struct s3_error e;
	int ret;

	if (!cl) {
		snprintf(err, err_size, "%s/%s: out of memory", p->url, key);
		return -ENOMEM;
	}
	snprintf(m.holds, sizeof(m.holds), "%s", level_name[ex->level]);
	memcpy(m.sha256, ex->sha, sizeof(m.sha256));
	snprintf(m.version, sizeof(m.version), "lidiagen %s", LIDIA_VERSION_STRING);
	ret = s3_put(cl, key, buf, size, &m, &e);
	give_back(p, cl);
	if (ret)
		key_error(p, key, &e, err, err_size);
	return ret;
}
