/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bucket (publish.h). Clients are kept on a stack and lent to the
 * threads at work, so that each request reuses an open connection and no
 * two threads share one curl handle.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "lidia.h"
#include "md5.h"
#include "publish.h"
#include "usage.h"

/* What a listing showed at a key. */
struct listed {
	char *key;
	char etag[80]; /* without quotes: the MD5 of a single PUT's body, in hex */
	uint64_t size;
};

/* A key written where conditions are ignored, to look at again (settle_later). */
struct settle {
	char *key;
	void *buf;
	size_t size;
	struct existing mine;
	int64_t due; /* CLOCK_MONOTONIC, ns */
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
	/* Whether the server honours conditional writes (conditions_honoured), found once. */
	pthread_mutex_t cond_lock;
	enum { COND_UNKNOWN, COND_HONOURED, COND_IGNORED } cond;
	char *notice; /* what to say of it, once (publish_notice) */
	/* Keys to look at again once others had time to land theirs (conditions ignored). */
	pthread_mutex_t settle_lock;
	struct settle *settle; /* settle[settle_head .. nsettle): oldest first */
	size_t settle_head, nsettle, cap_settle, settle_bytes;
	size_t written_again, settle_failed;
	char *settle_err; /* the first failure's line */
};

static void settle_free(struct settle *s);

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
	char what[768]; /* the request, S3's code and message, the attempts: s3_error's all */

	s3_error_format(e, what, sizeof(what));
	snprintf(err, err_size, "%s/%s: %s", p->url, key, what);
}

static int check_bucket(struct publish *p, char *err, size_t err_size)
{
	struct s3_client *cl = borrow(p);
	struct s3_error e;
	char what[768];
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

/*
 * With -v, the settings in use, before the bucket check: what a failure
 * then says is read against the endpoint, region, style and credentials
 * it was met with.
 */
static void say_settings(const struct publish *p)
{
	char buf[PATH_MAX + 2048], *line, *save;

	if (verbosity < 2)
		return;
	s3_config_describe(&p->cfg, buf, sizeof(buf));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		fprintf(stderr, "lidiagen: s3: %s\n", line);
}

int publish_open(struct publish **out, const char *url, const struct s3_overrides *ov, char *err,
		 size_t err_size, bool *usage)
{
	struct publish *p = calloc(1, sizeof(*p));
	int ret;

	*usage = false;
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->cond_lock, NULL);
	pthread_mutex_init(&p->settle_lock, NULL);
	if ((ret = s3_config_load(&p->cfg, url, ov, err, err_size))) {
		*usage = true;
		publish_close(p, NULL);
		return ret;
	}
	snprintf(p->url, sizeof(p->url), "s3://%s%s%s", p->cfg.bucket, *p->cfg.prefix ? "/" : "",
		 p->cfg.prefix);
	say_settings(p);
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
	free(p->notice);
	/* Keys never settled (a run cut short): their bytes only. */
	for (size_t i = p->settle_head; i < p->nsettle; i++)
		settle_free(&p->settle[i]);
	free(p->settle);
	free(p->settle_err);
	pthread_mutex_destroy(&p->settle_lock);
	pthread_mutex_destroy(&p->cond_lock);
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

/* Whether ETags a and b are one, quoted or not. */
static bool etag_same(const char *a, const char *b)
{
	size_t na, nb;

	a += *a == '"';
	b += *b == '"';
	na = strcspn(a, "\"");
	nb = strcspn(b, "\"");
	return na && na == nb && !strncmp(a, b, na);
}

/* The listing shows at key the very object known was (its ETag and size): what it holds is known. */
static bool listed_known(const struct publish *p, const char *key, const struct existing *known,
			 struct existing *ex)
{
	const struct listed *l = known && p->surveyed ? find_listed(p, key) : NULL;

	if (!l || !etag_same(l->etag, known->etag) || l->size != known->size)
		return false;
	*ex = *known;
	/* As a HEAD gives it, quotes and all: what an If-Match names. */
	snprintf(ex->etag, sizeof(ex->etag), "\"%.64s\"", l->etag);
	return true;
}

int publish_probe(struct publish *p, const char *key, const struct existing *known,
		  struct existing *ex, bool *exists, char *err, size_t err_size)
{
	struct s3_client *cl;
	struct s3_head h;
	struct s3_error e;
	int ret;

	if (listed_known(p, key, known, ex)) {
		*exists = true;
		return 0;
	}
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
	snprintf(ex->etag, sizeof(ex->etag), "%s", h.exists ? h.etag : "");
	return 0;
}

/* PUT under cond with what ex holds as metadata: 0, or S3's error in *e. */
static int put_object(struct s3_client *cl, const char *key, const void *buf, size_t size,
		      const struct existing *ex, const struct s3_cond *cond, struct s3_error *e)
{
	struct s3_meta m = {
		.functions = ex->counts.functions,
		.inline_ranges = ex->counts.inline_ranges,
		.line_rows = ex->counts.line_rows,
	};

	snprintf(m.holds, sizeof(m.holds), "%s", level_name[ex->level]);
	memcpy(m.sha256, ex->sha, sizeof(m.sha256));
	snprintf(m.version, sizeof(m.version), "lidiagen %s", LIDIA_VERSION_STRING);
	return s3_put(cl, key, buf, size, &m, cond, e);
}

/* ---- conditional writes ---- */

/*
 * Whether the server honours conditional writes, found once per run with
 * a PUT that must fail: If-Match on a key that cannot exist. A server that
 * honours it answers 404 (AWS) or 412 and writes nothing; one that answers
 * 2xx ignores the header (s3rver), and the object it made is deleted.
 */
static bool probe_conditions(struct publish *p, struct s3_client *cl, char *say, size_t say_size)
{
	const struct s3_cond cond = { S3_COND_MATCH, "\"lidiagen-probe-matches-nothing\"" };
	unsigned char r[8] = { 0 };
	char key[64], what[400];
	struct s3_error e;
	int ret;

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		memcpy(r, &(pid_t){ getpid() }, sizeof(pid_t));
	snprintf(key, sizeof(key), ".lidiagen-probe/%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1],
		 r[2], r[3], r[4], r[5], r[6], r[7]);
	ret = s3_put(cl, key, "", 0, NULL, &cond, &e);
	if (ret && (e.http_status == 412 || e.http_status == 404))
		return true;
	if (ret) {
		s3_error_format(&e, what, sizeof(what));
		snprintf(say, say_size,
			 "%.512s: cannot tell whether the server honours conditional writes "
			 "(%.300s): "
			 "each write is read back",
			 p->url, what);
		return false;
	}
	snprintf(say, say_size,
		 "%.512s: the server ignores conditional writes: each write is read back", p->url);
	if (s3_delete(cl, key, &e)) {
		size_t n = strlen(say);

		s3_error_format(&e, what, sizeof(what));
		snprintf(say + n, say_size - n, "\n%.512s/%s: cannot delete the probe: %.300s",
			 p->url, key, what);
	}
	return false;
}

/* Whether conditional writes are honoured: probed by the first writer, the others wait. */
static bool conditions_honoured(struct publish *p, struct s3_client *cl)
{
	char say[2048];
	bool honoured;

	pthread_mutex_lock(&p->cond_lock);
	if (p->cond == COND_UNKNOWN) {
		honoured = probe_conditions(p, cl, say, sizeof(say));
		p->cond = honoured ? COND_HONOURED : COND_IGNORED;
		if (!honoured)
			p->notice = strdup(say);
	}
	honoured = p->cond == COND_HONOURED;
	pthread_mutex_unlock(&p->cond_lock);
	return honoured;
}

bool publish_notice(struct publish *p, char *buf, size_t size)
{
	char *n;

	pthread_mutex_lock(&p->cond_lock);
	n = p->notice;
	p->notice = NULL;
	pthread_mutex_unlock(&p->cond_lock);
	if (n)
		snprintf(buf, size, "%s", n);
	free(n);
	return n != NULL;
}

/* What is at key now (HEAD): into there, with its ETag; 0 or S3's error in *e. */
static int look_again(struct s3_client *cl, const char *key, struct existing *there, bool *exists,
		      struct s3_error *e)
{
	struct s3_head h;
	int ret = s3_head(cl, key, &h, e);

	if (ret)
		return ret;
	*exists = h.exists;
	existing_from_meta(&h, there);
	snprintf(there->etag, sizeof(there->etag), "%s", h.exists ? h.etag : "");
	return 0;
}

/*
 * Decide again by what is there now: mine's very bytes (a PUT of ours that
 * landed though its answer was lost, or a publisher of the same bytes):
 * written; an object of ours holding as much: kept, the first stays, so
 * two publishers of equal holdings never take turns; else write over it,
 * on the condition that it is still that one. True when decided.
 */
static bool settled(const struct existing *mine, const struct existing *there, bool exists,
		    enum publish_outcome *out)
{
	if (!exists || !there->valid)
		return false;
	if (!strcmp(there->sha, mine->sha))
		*out = PUBLISH_WRITTEN;
	else if (keep_enough(there->level, mine->level))
		*out = there->level > mine->level ? PUBLISH_KEPT_MORE : PUBLISH_KEPT_EQUAL;
	else
		return false;
	return true;
}

/* The condition that names what is there: create it, or replace that very object. */
static void condition(struct s3_cond *c, bool exists, const struct existing *there)
{
	c->kind = !exists ? S3_COND_CREATE : there->etag[0] ? S3_COND_MATCH : S3_COND_NONE;
	c->etag = there->etag;
}

/* A PUT's failure that means another writer came first: look again and decide again. */
static bool lost_race(const struct s3_error *e, const struct s3_cond *c)
{
	return e->http_status == 412 || e->http_status == 409 ||
	       (e->http_status == 404 && c->kind == S3_COND_MATCH);
}

/* ---- where conditions are ignored: each write looked at again, later ---- */

/*
 * A server that ignores conditional writes cannot refuse a writer that
 * looked at the key before our object landed and writes after our
 * read-back (a partial upload it saw, say, that is no lidia file to it):
 * its weaker object would stay. So each key written there is looked at
 * once more when others have had the time to land theirs, SETTLE_NS after
 * our write (or at the end of the run, whichever is later), and written
 * again if something weaker took its place. Its bytes are kept until then,
 * SETTLE_BYTES at most: past that, the oldest is settled first.
 */
#define SETTLE_NS (2 * 1000000000LL)
#define SETTLE_BYTES (64u << 20)

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* A failure of the settle pass: counted, the first said (under settle_lock). */
static void settle_failure(struct publish *p, const char *key, const struct s3_error *e)
{
	char line[2048];

	p->settle_failed++;
	if (p->settle_err)
		return;
	key_error(p, key, e, line, sizeof(line));
	p->settle_err = strdup(line);
}

/* Look at one key again, when due, and write it again if something weaker is there. */
static void settle_one(struct publish *p, struct s3_client *cl, struct settle *s)
{
	const struct s3_cond none = { S3_COND_NONE, NULL };
	int64_t wait = s->due - now_ns();
	struct existing now;
	struct s3_error e;
	bool exists;
	int ret;

	if (wait > 0)
		nanosleep(&(struct timespec){ wait / 1000000000LL, wait % 1000000000LL }, NULL);
	ret = look_again(cl, s->key, &now, &exists, &e);
	if (!ret && exists && now.valid &&
	    (!strcmp(now.sha, s->mine.sha) || keep_enough(now.level, s->mine.level)))
		return; /* ours, or as much: the first stays */
	if (!ret)
		ret = put_object(cl, s->key, s->buf, s->size, &s->mine, &none, &e);
	pthread_mutex_lock(&p->settle_lock);
	if (ret)
		settle_failure(p, s->key, &e);
	else
		p->written_again++;
	pthread_mutex_unlock(&p->settle_lock);
}

static void settle_free(struct settle *s)
{
	free(s->key);
	free(s->buf);
}

/* The oldest key waiting, taken out of the queue (under settle_lock); false when none. */
static bool settle_pop(struct publish *p, struct settle *s)
{
	if (p->settle_head == p->nsettle)
		return false;
	*s = p->settle[p->settle_head++];
	p->settle_bytes -= s->size;
	if (p->settle_head == p->nsettle)
		p->settle_head = p->nsettle = 0;
	return true;
}

/* Queue key (its bytes copied) to be looked at again; settle the oldest while too many bytes wait. */
static void settle_later(struct publish *p, struct s3_client *cl, const char *key, const void *buf,
			 size_t size, const struct existing *mine)
{
	struct settle s = { strdup(key), malloc(size + 1), size, *mine, now_ns() + SETTLE_NS };
	bool queued = false;

	if (s.key && s.buf) {
		memcpy(s.buf, buf, size);
		pthread_mutex_lock(&p->settle_lock);
		if (p->settle_head && p->nsettle == p->cap_settle) {
			memmove(p->settle, p->settle + p->settle_head,
				(p->nsettle - p->settle_head) * sizeof(*p->settle));
			p->nsettle -= p->settle_head;
			p->settle_head = 0;
		}
		if (p->nsettle == p->cap_settle) {
			size_t cap = p->cap_settle ? 2 * p->cap_settle : 16;
			void *grown = realloc(p->settle, cap * sizeof(*p->settle));

			if (grown) {
				p->settle = grown;
				p->cap_settle = cap;
			}
		}
		if (p->nsettle < p->cap_settle) {
			p->settle[p->nsettle++] = s;
			p->settle_bytes += size;
			queued = true;
		}
		pthread_mutex_unlock(&p->settle_lock);
	}
	if (!queued) {
		settle_one(p, cl, &s); /* no memory to wait with: settle it now */
		settle_free(&s);
	}
	for (;;) {
		pthread_mutex_lock(&p->settle_lock);
		queued = p->settle_bytes > SETTLE_BYTES && settle_pop(p, &s);
		pthread_mutex_unlock(&p->settle_lock);
		if (!queued)
			break;
		settle_one(p, cl, &s);
		settle_free(&s);
	}
}

static int settle_all(struct publish *p, size_t *written_again, char *err, size_t err_size)
{
	struct s3_client *cl = NULL;
	struct settle s;
	size_t failed;

	for (;;) {
		bool have;

		pthread_mutex_lock(&p->settle_lock);
		have = settle_pop(p, &s);
		pthread_mutex_unlock(&p->settle_lock);
		if (!have)
			break;
		if (cl || (cl = borrow(p)))
			settle_one(p, cl, &s);
		else
			p->settle_failed++;
		settle_free(&s);
	}
	if (cl)
		give_back(p, cl);
	pthread_mutex_lock(&p->settle_lock);
	*written_again = p->written_again;
	failed = p->settle_failed;
	snprintf(err, err_size, "%s", p->settle_err ? p->settle_err : "out of memory");
	pthread_mutex_unlock(&p->settle_lock);
	return failed ? -EIO : 0;
}

int publish_settle(struct publish *p)
{
	size_t again = 0;
	char err[2048];
	int ret;

	/* A server gone (the breaker open) was said already: nothing to look at there. */
	if (!p || publish_stopped(p, err, sizeof(err)))
		return 0;
	ret = settle_all(p, &again, err, sizeof(err));
	if (again)
		fprintf(stderr,
			"lidiagen: %s: %zu key%s written again: a weaker object had replaced %s "
			"meanwhile (the server ignores conditional writes)\n",
			p->url, again, again == 1 ? "" : "s", again == 1 ? "it" : "them");
	if (ret)
		error(NULL, "%s", err);
	return ret;
}

/*
 * The rounds: *exists and there say what the next PUT goes over, and
 * after a write, what it went over; now is what a look showed.
 */
static int write_rounds(struct publish *p, struct s3_client *cl, const char *key, const void *buf,
			size_t size, const struct existing *mine, bool *exists,
			struct existing *there, enum publish_outcome *out, char *err,
			size_t err_size)
{
	bool honoured = conditions_honoured(p, cl), now_exists;
	struct existing now;
	struct s3_error e;
	struct s3_cond c;
	int ret;

	/* Where conditions are ignored, decide by what is there now, just before writing. */
	if (!honoured) {
		if ((ret = look_again(cl, key, there, exists, &e)))
			goto fail;
		if (settled(mine, there, *exists, out))
			return 0;
	}
	for (int round = 0; round < PUBLISH_ROUNDS; round++) {
		condition(&c, *exists, there);
		ret = put_object(cl, key, buf, size, mine, &c, &e);
		if (ret && !lost_race(&e, &c))
			goto fail;
		if (!ret && honoured) {
			*out = PUBLISH_WRITTEN;
			return 0;
		}
		/* 409: a conditional write of another is under way; give it time. */
		if (ret && e.http_status == 409)
			usleep(50000u << round);
		/* Lost, or (conditions ignored) written: read back what is there now. */
		if ((ret = look_again(cl, key, &now, &now_exists, &e)))
			goto fail;
		/* Ours (or the same bytes): there still says what it went over. */
		if (now_exists && now.valid && !strcmp(now.sha, mine->sha)) {
			*out = PUBLISH_WRITTEN;
			if (!honoured)
				settle_later(p, cl, key, buf, size, mine);
			return 0;
		}
		*there = now;
		*exists = now_exists;
		if (settled(mine, there, *exists, out))
			return 0;
	}
	snprintf(err, err_size, "%s/%s: other writers kept changing it (%d rounds): not written",
		 p->url, key, PUBLISH_ROUNDS);
	return -EAGAIN;
fail:
	key_error(p, key, &e, err, err_size);
	return ret;
}

int publish_write(struct publish *p, const char *key, const void *buf, size_t size,
		  const struct existing *mine, bool *exists, struct existing *there,
		  enum publish_outcome *out, char *err, size_t err_size)
{
	struct s3_client *cl = borrow(p);
	int ret;

	if (!cl) {
		snprintf(err, err_size, "%s/%s: out of memory", p->url, key);
		return -ENOMEM;
	}
	ret = write_rounds(p, cl, key, buf, size, mine, exists, there, out, err, err_size);
	give_back(p, cl);
	return ret;
}
