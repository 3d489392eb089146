/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Temporary credentials (a role's, a container's, the instance's, a
 * process's with an Expiration) end while a long run still has keys to
 * send: they are found again, by the same chain from the same profile,
 * some minutes before they end, as the AWS SDKs do. Many threads sign
 * requests: one refreshes, under the keeper's lock, while the others
 * wait for its result rather than all asking STS at once. A refresh that
 * fails while the old credentials still hold is tried again later
 * (not before RETRY_SECONDS), and says nothing until they are gone.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aws_credentials.h"
#include "aws_files.h"
#include "aws_refresh.h"
#include "aws_util.h"

#define MARGIN_MAX 300	 /* seconds before the end: the SDKs' 5 minutes at most */
#define RETRY_SECONDS 10 /* between failed refreshes while the old ones hold */

struct s3_keeper {
	pthread_mutex_t lock;
	char *profile; /* the overrides' profile, or NULL: AWS_PROFILE or default again */
	struct s3_credentials creds;
	time_t got;	     /* when creds were had: their lifetime is creds.expires - got */
	time_t last_try;     /* of a failed refresh */
	unsigned generation; /* one more each refresh */
};

static void creds_wipe(struct s3_credentials *cr)
{
	aws_free_secret(cr->access_key);
	aws_free_secret(cr->secret_key);
	aws_free_secret(cr->session_token);
	cr->access_key = cr->secret_key = cr->session_token = NULL;
}

static int creds_copy(struct s3_credentials *to, const struct s3_credentials *from)
{
	*to = *from;
	to->access_key = strdup(from->access_key);
	to->secret_key = strdup(from->secret_key);
	to->session_token = from->session_token ? strdup(from->session_token) : NULL;
	if (to->access_key && to->secret_key && (to->session_token || !from->session_token))
		return 0;
	creds_wipe(to);
	return -ENOMEM;
}

int aws_keeper_new(struct s3_config *c, const char *profile)
{
	struct s3_keeper *k;

	if (!c->creds.expires)
		return 0;
	if (!(k = calloc(1, sizeof(*k))))
		return -ENOMEM;
	pthread_mutex_init(&k->lock, NULL);
	k->got = time(NULL);
	k->generation = 1;
	if ((profile && !(k->profile = strdup(profile))) || creds_copy(&k->creds, &c->creds)) {
		aws_keeper_free(k);
		return -ENOMEM;
	}
	c->keeper = k;
	return 0;
}

void aws_keeper_free(struct s3_keeper *k)
{
	if (!k)
		return;
	creds_wipe(&k->creds);
	pthread_mutex_destroy(&k->lock);
	free(k->profile);
	free(k);
}

/* The chain again, from the profile's files read anew, into fresh. */
static int find_again(const struct s3_config *c, struct s3_keeper *k, struct s3_credentials *fresh,
		      char *err, size_t err_size)
{
	const struct s3_overrides ov = { .profile = k->profile };
	struct s3_config tmp = { .region = c->region, .sts_endpoint = c->sts_endpoint };
	struct load *ld = calloc(1, sizeof(*ld));
	int ret;

	if (!ld)
		return -ENOMEM;
	*ld = (struct load){ .c = &tmp, .ov = &ov, .err = err, .err_size = err_size };
	ret = aws_profile_load(ld);
	if (!ret)
		ret = aws_find_credentials(ld);
	aws_files_release(ld);
	free(ld);
	if (ret)
		creds_wipe(&tmp.creds);
	else
		*fresh = tmp.creds;
	return ret;
}

/* Whether k's credentials are near enough their end to be found again. */
static bool due(const struct s3_keeper *k, time_t now)
{
	time_t life = k->creds.expires - k->got, margin = life / 2;

	if (margin > MARGIN_MAX)
		margin = MARGIN_MAX;
	return k->creds.expires - now <= margin;
}

/* Under k's lock: refresh when due or stale, keeping the old ones while they hold. */
static int refresh(const struct s3_config *c, struct s3_keeper *k, unsigned stale, char *err,
		   size_t err_size)
{
	struct s3_credentials fresh = { 0 };
	time_t now = time(NULL);
	bool forced = stale && stale == k->generation;
	char why[512];
	int ret;

	if (!forced && (!due(k, now) || (k->last_try && now - k->last_try < RETRY_SECONDS &&
					 now < k->creds.expires)))
		return 0;
	if ((ret = find_again(c, k, &fresh, why, sizeof(why)))) {
		k->last_try = now;
		if (!forced && now < k->creds.expires)
			return 0;
		snprintf(err, err_size, "credentials expired, and finding them again failed: %s",
			 why);
		return ret;
	}
	creds_wipe(&k->creds);
	k->creds = fresh;
	k->got = now;
	k->last_try = 0;
	k->generation++;
	return 0;
}

static int copy_out(const struct s3_credentials *cr, unsigned gen, struct s3_creds_copy *out,
		    char *err, size_t err_size)
{
	const char *tok = cr->session_token ? cr->session_token : "";

	if (strlen(cr->access_key) >= sizeof(out->access_key) ||
	    strlen(cr->secret_key) >= sizeof(out->secret_key) ||
	    strlen(tok) >= sizeof(out->session_token)) {
		snprintf(err, err_size,
			 "credentials longer than this client takes (a 4 KiB token)");
		return -E2BIG;
	}
	strcpy(out->access_key, cr->access_key);
	strcpy(out->secret_key, cr->secret_key);
	strcpy(out->session_token, tok);
	out->generation = gen;
	return 0;
}

int aws_creds_now(const struct s3_config *c, unsigned stale, struct s3_creds_copy *out, char *err,
		  size_t err_size)
{
	struct s3_keeper *k = c->keeper;
	int ret;

	if (!k)
		return copy_out(&c->creds, 0, out, err, err_size);
	pthread_mutex_lock(&k->lock);
	ret = refresh(c, k, stale, err, err_size);
	if (!ret)
		ret = copy_out(&k->creds, k->generation, out, err, err_size);
	pthread_mutex_unlock(&k->lock);
	return ret;
}
