/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `lidiagen upload` (upload.h): the tree is listed first and sorted, so
 * that messages and the manifest come in key order whatever the thread
 * count; then each file is read (CRCs checked, sha256), its key asked
 * about with one HEAD, and sent with one PUT when the rules say so, on
 * the pool's threads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "pool.h"
#include "tempfile.h"
#include "upload.h"
#include "usage.h"

/* The largest file sent (each is read whole): 4 GiB, under S3's 5 GiB for one PUT. */
#define UPLOAD_MAX_SIZE (4ULL << 30)

enum up_status { UP_PENDING, UP_UPLOADED, UP_REPLACED, UP_EXISTS, UP_FAILED };

static const char *const up_names[] = { "failed", "uploaded", "replaced", "exists", "failed" };

/* One file of the tree, and what became of it. */
struct up_file {
	char *key; /* its path under the tree */
	enum up_status status;
	bool existed;	     /* something was at the key */
	struct existing now; /* what the file holds */
	const char *why;     /* exists because another publisher came meanwhile: why */
	char *message;	     /* -v line, or the error */
	bool not_sent;	     /* publishing stopped before it: report() says so once */
};

struct upload {
	const struct upload_opts *o;
	struct up_file *files;
	size_t nfiles, cap;
	int walk_err;
	char walk_path[4096];
};

/* ---- listing the tree ---- */

static void say(struct up_file *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int add_file(struct upload *u, const char *key)
{
	if (u->nfiles == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 256;
		struct up_file *n = realloc(u->files, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		u->files = n;
		u->cap = cap;
	}
	memset(&u->files[u->nfiles], 0, sizeof(u->files[0]));
	if (!(u->files[u->nfiles].key = strdup(key)))
		return -ENOMEM;
	u->nfiles++;
	return 0;
}

/*
 * A symbolic link in the tree: not followed, so nothing outside the tree is
 * published; a failure naming it, not a silent gap in the bucket.
 */
static int add_link(struct upload *u, const char *key)
{
	struct up_file *f;
	int err = add_file(u, key);

	if (err)
		return err;
	f = &u->files[u->nfiles - 1];
	f->status = UP_FAILED;
	say(f, "%s/%s: %s: not uploaded", u->o->dir, key, lidia_strerror(LIDIA_E_SYMLINK));
	return 0;
}

/*
 * Regular files under dir/rel, as keys. Temporary files of a writer (and
 * other hidden names) are passed over, as a sync passes them over; symbolic
 * links are not followed (add_link).
 */
static int list_dir(struct upload *u, const char *rel, unsigned depth)
{
	char path[4096], key[4096];
	struct dirent *e;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "%s%s%s", u->o->dir, *rel ? "/" : "", rel);
	if (depth > 32)
		return -ELOOP;
	if (!(d = opendir(path))) {
		snprintf(u->walk_path, sizeof(u->walk_path), "%s", path);
		return -errno;
	}
	while (!err && (e = readdir(d))) {
		struct stat st;

		if (e->d_name[0] == '.' || lidia_store_is_temp(e->d_name))
			continue;
		if (snprintf(key, sizeof(key), "%s%s%s", rel, *rel ? "/" : "", e->d_name) >=
			    (int)sizeof(key) ||
		    snprintf(path, sizeof(path), "%s/%s", u->o->dir, key) >= (int)sizeof(path) ||
		    lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			err = list_dir(u, key, depth + 1);
		else if (S_ISREG(st.st_mode))
			err = add_file(u, key);
		else if (S_ISLNK(st.st_mode))
			err = add_link(u, key);
	}
	closedir(d);
	return err;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct up_file *)a)->key, ((const struct up_file *)b)->key);
}

/* ---- one file ---- */

struct up_task {
	struct upload *u;
	struct up_file *f;
};

static void say(struct up_file *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&f->message, fmt, ap) < 0)
		f->message = NULL;
	va_end(ap);
}

static void send_file(struct upload *u, struct up_file *f, const struct existing *ex,
		      const char *path, const void *buf, size_t size);

/* Whether the object there (ex) is to be left: the same bytes, or as much. */
static bool leave_there(const struct upload_opts *o, const struct existing *ex,
			const struct existing *now)
{
	if (!ex->valid || o->force)
		return false;
	return !strcmp(ex->sha, now->sha) || keep_enough(ex->level, now->level);
}

/*
 * The whole file, read once: what is checked, hashed and sent are the same
 * bytes. Opened below the tree as the store opens a key: a link put there
 * since the listing is not followed either.
 */
static int slurp(const char *dir, const char *key, void **out, size_t *size)
{
	int fd = lidia_store_open(dir, key);
	struct stat st;
	size_t got = 0;
	char *buf;

	*out = NULL;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > UPLOAD_MAX_SIZE ||
	    !(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return -EFBIG;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	*out = buf;
	*size = got;
	return 0;
}

static void upload_one(struct upload *u, struct up_file *f)
{
	const struct upload_opts *o = u->o;
	const char *url = publish_url(o->bucket);
	struct existing ex;
	char path[4096], err[1024];
	void *buf = NULL;
	size_t size = 0;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", o->dir, f->key);
	if ((ret = slurp(o->dir, f->key, &buf, &size))) {
		f->status = UP_FAILED;
		say(f, "%s: %s", path, lidia_strerror(ret));
		return;
	}
	existing_read_mem(buf, size, &f->now);
	if (!f->now.valid || f->now.level == LEVEL_NONE) {
		f->status = UP_FAILED;
		say(f,
		    "%s: not a lidia file with a function in it (or its CRCs fail): not uploaded",
		    path);
	} else if (!o->force && publish_listed_same(o->bucket, f->key, buf, size)) {
		f->status = UP_EXISTS;
		f->existed = true;
		say(f, "exists %s/%s: the same bytes", url, f->key);
	} else if ((ret = publish_probe(o->bucket, f->key, NULL, &ex, &f->existed, err,
					sizeof(err)))) {
		f->status = UP_FAILED;
		f->not_sent = ret == -ECANCELED;
		say(f, "%s", err);
	} else if (f->existed && leave_there(o, &ex, &f->now)) {
		f->status = UP_EXISTS;
		say(f, "exists %s/%s: %s", url, f->key,
		    strcmp(ex.sha, f->now.sha) ? "it holds as much already" : "the same bytes");
	} else {
		send_file(u, f, &ex, path, buf, size);
	}
	free(buf);
}

/* Once per run: the server ignores conditional writes (publish.c found out). */
static void say_notice(struct publish *p)
{
	char msg[2048], *line, *save;

	if (!publish_notice(p, msg, sizeof(msg)))
		return;
	for (line = strtok_r(msg, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		warning(NULL, "%s", line);
}

/* Uploaded, or over what was there (ex), unless a dry run or another publisher came first. */
static void send_file(struct upload *u, struct up_file *f, const struct existing *ex,
		      const char *path, const void *buf, size_t size)
{
	const struct upload_opts *o = u->o;
	const char *url = publish_url(o->bucket);
	struct existing there = *ex;
	enum publish_outcome out;
	char err[1024];
	int ret;

	f->status = f->existed ? UP_REPLACED : UP_UPLOADED;
	if (o->dry_run) {
		say(f, "would %s %s/%s <- %s (%s)", f->existed ? "replace" : "upload", url, f->key,
		    path, level_name[f->now.level]);
		return;
	}
	ret = publish_write(o->bucket, f->key, buf, size, &f->now, &f->existed, &there, &out, err,
			    sizeof(err));
	say_notice(o->bucket);
	if (ret) {
		f->status = UP_FAILED;
		f->not_sent = ret == -ECANCELED;
		say(f, "%s", err);
	} else if (out != PUBLISH_WRITTEN) {
		f->status = UP_EXISTS;
		f->why = out == PUBLISH_KEPT_MORE
				 ? "a stronger object was published meanwhile"
				 : "an object holding as much was published meanwhile";
		say(f, "exists %s/%s: kept: %s (it has %s)", url, f->key, f->why,
		    level_name[there.level]);
	} else {
		f->status = f->existed ? UP_REPLACED : UP_UPLOADED;
		say(f, "%s %s/%s <- %s (%s)%s", f->existed ? "replaced" : "uploaded", url, f->key,
		    path, level_name[f->now.level],
		    !f->existed	  ? ""
		    : there.valid ? " (it had less)"
				  : " (not written by lidiagen)");
	}
}

static void run_task(void *arg)
{
	struct up_task *t = arg;

	upload_one(t->u, t->f);
}

/* ---- the run ---- */

static void print_entry(FILE *f, const struct upload *u, const struct up_file *e)
{
	bool planned = u->o->dry_run && (e->status == UP_UPLOADED || e->status == UP_REPLACED);
	char *file = NULL;

	/* The file read, then the object fields convert's manifest has too. */
	if (asprintf(&file, "%s/%s", u->o->dir, e->key) < 0)
		file = NULL;
	fputs("{\"file\":", f);
	json_str(f, file ? file : e->key);
	free(file);
	manifest_object(f, publish_url(u->o->bucket), e->key);
	fprintf(f, ",\"status\":\"%s%s\"", planned ? "would-" : "",
		planned && e->status == UP_UPLOADED ? "upload"
		: planned			    ? "replace"
						    : up_names[e->status]);
	if (e->now.valid)
		manifest_holds(f, e->now.level, &e->now.counts, e->now.size, e->now.sha);
	if (e->why) {
		fputs(",\"reason\":", f);
		json_string(f, e->why, strlen(e->why));
	}
	if (e->status == UP_FAILED || e->status == UP_PENDING) {
		fputs(",\"error\":", f);
		json_string(f, e->message ? e->message : "", e->message ? strlen(e->message) : 0);
	}
	fputs("}\n", f);
}

static void print_manifest(FILE *f, void *ctx)
{
	const struct upload *u = ctx;

	for (size_t i = 0; i < u->nfiles; i++)
		print_entry(f, u, &u->files[i]);
}

/* Each file's line (errors always, the others with -v), then the summary. */
static size_t report(const struct upload *u)
{
	size_t n[5] = { 0 };
	struct s3_stats st;
	char why[1024];

	for (size_t i = 0; i < u->nfiles; i++) {
		const struct up_file *f = &u->files[i];

		n[f->status]++;
		if (f->not_sent && verbosity < 2)
			continue; /* said once, below */
		if (f->status == UP_FAILED || f->status == UP_PENDING)
			error(NULL, "%s", f->message ? f->message : "not uploaded (out of memory)");
		else if (verbosity >= 2 && f->message)
			printf("%s\n", f->message); /* as convert's line per output */
	}
	if (publish_stopped(u->o->bucket, why, sizeof(why)))
		error(NULL, "%s", why);
	publish_stats(u->o->bucket, &st);
	fprintf(stderr,
		"lidiagen: %s%zu file%s: %zu %s, %zu %s, %zu exist; %zu failed; %" PRIu64
		" request%s (%" PRIu64 " HEAD, %" PRIu64 " PUT, %" PRIu64 " GET, %" PRIu64
		" retried), %.1f MiB sent\n",
		u->o->dry_run ? "dry run: " : "", u->nfiles, u->nfiles == 1 ? "" : "s",
		n[UP_UPLOADED], u->o->dry_run ? "would be uploaded" : "uploaded", n[UP_REPLACED],
		u->o->dry_run ? "would be replaced" : "replaced", n[UP_EXISTS],
		n[UP_FAILED] + n[UP_PENDING], st.requests, st.requests == 1 ? "" : "s", st.heads,
		st.puts, st.gets, st.retries, (double)st.bytes_sent / (1 << 20));
	return n[UP_FAILED] + n[UP_PENDING];
}

/* One listing of where the keys go, so that most keys need no HEAD. */
static void survey(struct upload *u)
{
	const char **keys = malloc((u->nfiles + 1) * sizeof(*keys));

	if (!keys)
		return;
	for (size_t i = 0; i < u->nfiles; i++)
		keys[i] = u->files[i].key;
	publish_survey(u->o->bucket, keys, u->nfiles);
	free(keys);
}

/* Every file on the pool: one task each, all in one array. */
static int upload_all(struct upload *u)
{
	struct up_task *tasks = calloc(u->nfiles + 1, sizeof(*tasks));
	struct pool pool;

	if (!tasks || pool_start(&pool, u->o->jobs)) {
		free(tasks);
		return -ENOMEM;
	}
	for (size_t i = 0; i < u->nfiles; i++) {
		if (u->files[i].status != UP_PENDING)
			continue; /* failed at listing (a link) */
		tasks[i] = (struct up_task){ u, &u->files[i] };
		pool_add(&pool, run_task, &tasks[i]);
	}
	pool_wait(&pool);
	pool_stop(&pool);
	free(tasks);
	return 0;
}

int upload_run(const struct upload_opts *o)
{
	struct upload u = { .o = o };
	size_t failed = 0;
	int err;

	if ((err = list_dir(&u, "", 0)))
		error(u.walk_path[0] ? u.walk_path : o->dir, "cannot list: %s", strerror(-err));
	else if (u.nfiles > 1)
		qsort(u.files, u.nfiles, sizeof(*u.files), cmp_key);
	if (!err)
		survey(&u);
	if (!err && (err = upload_all(&u)))
		error(NULL, "cannot start %u threads", o->jobs);
	if (!err && publish_settle(o->bucket))
		failed++;
	if (!err) {
		failed += report(&u);
		if (o->manifest && (err = write_file(o->manifest, print_manifest, &u)))
			error(o->manifest, "cannot write the manifest: %s", strerror(-err));
	}
	for (size_t i = 0; i < u.nfiles; i++) {
		free(u.files[i].key);
		free(u.files[i].message);
	}
	free(u.files);
	return err || failed ? EXIT_FAILED : EXIT_OK;
}
