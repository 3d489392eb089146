/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Temporary credentials kept fresh for the whole run (aws_refresh.c): a
 * config whose credentials expire has a keeper, which every request asks
 * for the credentials to sign with.
 */
#ifndef LIDIAGEN_AWS_REFRESH_H
#define LIDIAGEN_AWS_REFRESH_H

#include <stdbool.h>
#include <stddef.h>

#include "s3.h"

/* The credentials of one attempt: copies, so that a refresh never pulls them from under it. */
struct s3_creds_copy {
	char access_key[128], secret_key[256], session_token[4096];
	unsigned generation; /* of the keeper's credentials copied */
};

/*
 * c->keeper for c->creds when they expire (with the profile to find their
 * source again); nothing when they do not. 0, or -ENOMEM.
 */
int aws_keeper_new(struct s3_config *c, const char *profile);
void aws_keeper_free(struct s3_keeper *k);

/*
 * The credentials to sign with now, into out: c->creds when they do not
 * expire; else the keeper's, found again first (the whole chain, under
 * its lock) when less than min(5 minutes, half their lifetime) is left,
 * or when stale and the copy of generation stale is still the current
 * one (S3 answered ExpiredToken to it; 0: not stale). 0; or a negative
 * errno and one line in err, when they are expired and could not be had
 * again.
 */
int aws_creds_now(const struct s3_config *c, unsigned stale, struct s3_creds_copy *out, char *err,
		  size_t err_size);

#endif
