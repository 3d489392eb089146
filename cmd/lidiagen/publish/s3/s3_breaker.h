/* SPDX-License-Identifier: Apache-2.0 */
/* The run's circuit breaker (s3_breaker.c): the side the requests see. */
#ifndef LIDIAGEN_S3_BREAKER_H
#define LIDIAGEN_S3_BREAKER_H

#include <stdbool.h>

struct s3_breaker;

int s3_breaker_new(struct s3_breaker **out);
void s3_breaker_free(struct s3_breaker *b);

/* Whether a request may go; when not, and count_refusal, it is counted as a key not sent. */
bool s3_breaker_admit(struct s3_breaker *b, bool count_refusal);

/* After an attempt: whether it reached a server (any answer); if not, endpoint and why. */
void s3_breaker_note(struct s3_breaker *b, bool reached, const char *endpoint, const char *why);

/* A key's request that found no server: true when the breaker is open, and it is counted. */
bool s3_breaker_fold(struct s3_breaker *b);

/* Open it now: why is the line to say (the endpoint, the request, the reason). */
void s3_breaker_open(struct s3_breaker *b, const char *why);

#endif
