/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One small HTTP exchange with a credentials service (STS, a container's
 * agent): not S3's requests (s3_request.c), which stream bodies, retry
 * and share a breaker. The answer is capped, kept whole in memory, and
 * wiped when released: it holds credentials.
 */
#ifndef LIDIAGEN_AWS_HTTP_H
#define LIDIAGEN_AWS_HTTP_H

#include <stddef.h>

#define AWS_HTTP_BODY_MAX (64 * 1024)

/* What to send: headers a NULL-ended list of "Name: value"; body NULL for a GET. */
struct aws_http_req {
	const char *url;
	const char *const *headers;
	const char *body;
	/* SigV4 with these (service "sts", region) when access_key is not NULL */
	const char *access_key, *secret_key, *session_token, *region;
	long timeout_ms;
};

struct aws_http_ans {
	long status; /* 0: no answer */
	size_t len;
	char body[AWS_HTTP_BODY_MAX + 1]; /* NUL-terminated */
};

/*
 * Send req, its answer in *ans (any status). 0; or a negative errno and
 * one line in err when no answer came (never a header's value).
 */
int aws_http(const struct aws_http_req *req, struct aws_http_ans *ans, char *err, size_t err_size);

#endif
