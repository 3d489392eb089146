/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One exchange with a credentials service, through libcurl: reached
 * directly (a proxy would see the credentials), no redirect followed (it
 * could take a token elsewhere), the answer capped at 64 KiB.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "aws_http.h"
#include "curl_load.h"

/* The list libcurl sends, and the signature's "x-amz-security-token". */
static struct curl_slist *header_list(const struct aws_http_req *req)
{
	struct curl_slist *l = NULL, *more;
	char tok[4200];

	for (const char *const *h = req->headers; h && *h; h++) {
		if (!(more = s3_curl.slist_append(l, *h)))
			goto fail;
		l = more;
	}
	if (req->access_key && req->session_token) {
		/* A longer token is no AWS token; it fails the signature rather than overflow. */
		snprintf(tok, sizeof(tok), "x-amz-security-token: %s", req->session_token);
		more = s3_curl.slist_append(l, tok);
		explicit_bzero(tok, sizeof(tok));
		if (!more)
			goto fail;
		l = more;
	}
	/*
	 * libcurl would add "Expect: 100-continue" to a large body (a web
	 * token); STS needs no such round trip. Not when signing: libcurl 7.88
	 * signs the emptied header, which the server never sees.
	 */
	if (!req->access_key) {
		if (!(more = s3_curl.slist_append(l, "Expect:")))
			goto fail;
		l = more;
	}
	return l;
fail:
	s3_curl.slist_free_all(l);
	return NULL;
}

static void setup(CURL *h, const struct aws_http_req *req, struct curl_slist *hl,
		  struct curl_body *body, char *curl_err, char *sigv4)
{
	s3_curl_small_request(h, req->url, req->timeout_ms, req->timeout_ms, curl_err, hl, body);
	if (req->body)
		s3_curl.easy_setopt(h, CURLOPT_POSTFIELDS, req->body);
	if (req->access_key) {
		snprintf(sigv4, 128, "aws:amz:%s:sts", req->region);
		s3_curl.easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4);
		s3_curl.easy_setopt(h, CURLOPT_USERNAME, req->access_key);
		s3_curl.easy_setopt(h, CURLOPT_PASSWORD, req->secret_key);
	}
}

int aws_http(const struct aws_http_req *req, struct aws_http_ans *ans, char *err, size_t err_size)
{
	char curl_err[CURL_ERROR_SIZE] = "", sigv4[128];
	struct curl_body body = { ans->body, 0, AWS_HTTP_BODY_MAX };
	struct curl_slist *hl;
	CURLcode rc;
	CURL *h;
	int ret;

	ans->status = 0;
	ans->len = 0;
	ans->body[0] = '\0';
	if ((ret = s3_curl_load(err, err_size)))
		return ret;
	if (!(h = s3_curl.easy_init()) || !(hl = header_list(req))) {
		if (h)
			s3_curl.easy_cleanup(h);
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	setup(h, req, hl, &body, curl_err, sigv4);
	rc = s3_curl.easy_perform(h);
	ans->len = body.len;
	ans->body[ans->len] = '\0';
	if (rc == CURLE_OK)
		s3_curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &ans->status);
	s3_curl.easy_cleanup(h);
	s3_curl.slist_free_all(hl);
	if (rc == CURLE_OK)
		return 0;
	if (rc == CURLE_WRITE_ERROR)
		snprintf(err, err_size, "an answer larger than 64 KiB");
	else
		snprintf(err, err_size, "%s", curl_err[0] ? curl_err : s3_curl.easy_strerror(rc));
	return rc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO;
}
