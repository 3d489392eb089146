/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bucket outputs go to (-o s3://BUCKET/PREFIX, and `lidiagen upload`):
 * its settings, checked once before any work, and a client per thread at
 * work, each keeping its connection. An object's metadata says what it
 * holds, so what the bucket has is known without its body, from a listing
 * where the keys go and a HEAD of each key it does not settle: the same
 * decisions as for a tree on disk (keep.c), plus one: an object lidiagen
 * did not write (Pyroscope's own, made from symbols alone) is replaced.
 */
#ifndef LIDIAGEN_PUBLISH_H
#define LIDIAGEN_PUBLISH_H

#include <stdbool.h>
#include <stddef.h>

#include "holdings.h"
#include "s3.h"

struct publish;

/*
 * The bucket of url, configured the AWS way (s3.h, s3_config_load) and
 * checked with a listing of no key (s3_check_bucket); with -v, the
 * settings in use are said first (s3_config_describe). On failure a
 * negative errno and one line in err, naming what it is about (the URL,
 * the bucket and its endpoint, the credentials); usage is set when the
 * failure is the command line's or the configuration's (exit 2), not the
 * bucket's (exit 1).
 */
int publish_open(struct publish **out, const char *url, const struct s3_overrides *ov, char *err,
		 size_t err_size, bool *usage);

/* The requests made and bytes sent, for the summary; then everything freed. */
void publish_close(struct publish *p, struct s3_stats *st);

/* The requests made and bytes sent so far by the clients not at work. */
void publish_stats(struct publish *p, struct s3_stats *st);

/* "s3://BUCKET/PREFIX": where the keys are, for messages. */
const char *publish_url(const struct publish *p);

/*
 * Whether publishing stopped early (the endpoint gone, or answering what
 * S3 does not: s3_stopped): then the one line to say, in buf. The keys
 * not sent failed with -ECANCELED, their own lines left unsaid.
 */
bool publish_stopped(const struct publish *p, char *buf, size_t size);

/*
 * List, once, what the bucket holds where the keys to come are (their
 * common directory), a page per 1000 keys, and stop early where the bucket
 * holds far more than them. Then publish_probe asks nothing of a key the
 * listing shows absent, and publish_listed_same tells same bytes from the
 * listing's ETag. A listing that fails is no failure: HEADs do its job.
 */
void publish_survey(struct publish *p, const char *const *keys, size_t n);

/* Whether the listing showed at key these very bytes (its ETag their MD5). */
bool publish_listed_same(const struct publish *p, const char *key, const void *buf, size_t size);

/*
 * What the bucket holds at key: *exists, and in ex what our metadata says
 * (ex->valid: it is ours; else level NONE, and it is to be replaced). known
 * (may be NULL): what an earlier run saw there (--state); when the listing
 * shows the same ETag and size at key, it is what is there, without a HEAD.
 * On failure a negative errno and one line in err (the key, S3's code).
 */
int publish_probe(struct publish *p, const char *key, const struct existing *known,
		  struct existing *ex, bool *exists, char *err, size_t err_size);

/* What became of a write (publish_write). */
enum publish_outcome {
	PUBLISH_WRITTEN,    /* the bytes are there */
	PUBLISH_KEPT_MORE,  /* another publisher's object, holding more, came meanwhile: left */
	PUBLISH_KEPT_EQUAL, /* another's, holding as much, came meanwhile: left (the first stays) */
};

/* The rounds of look-again-and-decide-again before a write gives up. */
#define PUBLISH_ROUNDS 5

/*
 * Where the server ignores conditional writes, each key written is looked
 * at once more after the others had time to land theirs (2 s after the
 * write), and written again if a weaker object took its place meanwhile.
 * Call once every write is done (before publish_close): waits out what is
 * due, says how many keys were written again, and the first failure;
 * 0, or -EIO when a key could not be looked at or written again.
 */
int publish_settle(struct publish *p);

/*
 * PUT the file's bytes at key, with what it holds (mine, sha included) as
 * metadata, over what was seen there (*exists; there: what it holds, its
 * ETag), and only over that: If-None-Match: * where nothing was, If-Match
 * with its ETag where something was. When another publisher came first
 * (412, 409, or 404 for If-Match), the key is looked at again and decided
 * again: an object there holding as much as mine is kept (*out says so,
 * and there says what it holds), else mine is put over it on the same
 * terms, at most PUBLISH_ROUNDS times (*exists and there then say what
 * it went over). Where the server ignores the
 * conditions (found once per run, publish_notice), the key is read just
 * before the PUT and after it, and the PUT made again if a weaker object
 * took its place. On failure a negative errno and one line in err.
 */
int publish_write(struct publish *p, const char *key, const void *buf, size_t size,
		  const struct existing *mine, bool *exists, struct existing *there,
		  enum publish_outcome *out, char *err, size_t err_size);

/* Once per run, what to say of the server (it ignores conditional writes): true and buf. */
bool publish_notice(struct publish *p, char *buf, size_t size);

#endif
