/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The instance's role credentials from the EC2 instance metadata service,
 * version 2 (session tokens), as the AWS SDKs fetch them:
 *
 *   PUT /latest/api/token              (X-aws-ec2-metadata-token-ttl-seconds)
 *   GET /latest/meta-data/iam/security-credentials/        the role's name
 *   GET /latest/meta-data/iam/security-credentials/ROLE    JSON credentials
 *
 * the last two with the token in X-aws-ec2-metadata-token. Off EC2 the
 * address answers nothing, so the timeouts are short and a run without
 * credentials fails in seconds. The service is reached directly (a proxy
 * would see the credentials), answers are capped at 64 KiB, and everything
 * it says is checked before use: the JSON by a small scanner that keeps
 * within its buffer whatever it is given.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws_json.h"
#include "curl_load.h"
#include "imds.h"

#define IMDS_ENDPOINT "http://169.254.169.254"
#define IMDS_ENDPOINT_IPV6 "http://[fd00:ec2::254]"
#define IMDS_BASE_MAX 256
#define IMDS_BODY_MAX (64 * 1024)
#define IMDS_TOKEN_TTL "21600" /* seconds: the most the service grants */
#define IMDS_TOKEN_MAX 1024
#define IMDS_ROLE_MAX 64 /* IAM's limit on role names */
#define IMDS_CREDENTIALS_PATH "/latest/meta-data/iam/security-credentials/"
#define DEFAULT_CONNECT_MS 1000
#define DEFAULT_TOTAL_MS 2000
#define DEFAULT_ATTEMPTS 2
#define TIMEOUT_MAX 3600
#define ATTEMPTS_MAX 10

/* One fetch: the handle, the settings, and the last answer. */
struct imds {
	CURL *curl;
	char base[IMDS_BASE_MAX]; /* the endpoint, without trailing '/' */
	long connect_ms, total_ms;
	unsigned attempts;
	char curl_err[CURL_ERROR_SIZE];
	char token_header[IMDS_TOKEN_MAX + 64];
	char role[IMDS_ROLE_MAX + 1];
	size_t len;
	char body[IMDS_BODY_MAX + 1];
};

/* ---- requests ---- */

static void request_setup(struct imds *m, const char *url, struct curl_slist *headers, bool put,
			  struct curl_body *body)
{
	CURL *h = m->curl;

	s3_curl.easy_reset(h);
	s3_curl_small_request(h, url, m->connect_ms, m->total_ms, m->curl_err, headers, body);
	if (put) {
		/* An empty body, sent with its Content-Length: 0. */
		s3_curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
		s3_curl.easy_setopt(h, CURLOPT_POSTFIELDS, "");
		s3_curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
	}
}

/* Failures worth another attempt: no answer, or the service failing. */
static bool retryable(int ret)
{
	return ret == -EAGAIN || ret == -ETIMEDOUT || ret == -ECONNREFUSED || ret == -EIO;
}

static int transport_error(struct imds *m, CURLcode rc, char *err, size_t err_size)
{
	if (rc == CURLE_WRITE_ERROR) {
		snprintf(err, err_size, "%s: an answer larger than 64 KiB", m->base);
		return -EFBIG;
	}
	snprintf(err, err_size, "%s: %s", m->base,
		 m->curl_err[0] ? m->curl_err : s3_curl.easy_strerror(rc));
	if (rc == CURLE_OUT_OF_MEMORY)
		return -ENOMEM;
	if (rc == CURLE_OPERATION_TIMEDOUT)
		return -ETIMEDOUT;
	return rc == CURLE_COULDNT_CONNECT ? -ECONNREFUSED : -EIO;
}

/*
 * One request; its answer in m->body, NUL-terminated. 0 on 200, else a
 * negative errno (retryable() tells which are worth another attempt).
 */
static int imds_request(struct imds *m, bool put, const char *path, const char *header, char *err,
			size_t err_size)
{
	struct curl_body body = { m->body, 0, IMDS_BODY_MAX };
	struct curl_slist *headers = NULL, *more;
	char url[IMDS_BASE_MAX + 128];
	long status = 0;
	CURLcode rc;

	snprintf(url, sizeof(url), "%s%s", m->base, path);
	headers = s3_curl.slist_append(NULL, header);
	/* No Content-Type for the empty PUT; ours are the only headers that matter. */
	if (headers && put && (more = s3_curl.slist_append(headers, "Content-Type:")))
		headers = more;
	if (!headers) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	m->curl_err[0] = '\0';
	request_setup(m, url, headers, put, &body);
	rc = s3_curl.easy_perform(m->curl);
	s3_curl.slist_free_all(headers);
	m->len = body.len;
	m->body[m->len] = '\0';
	if (rc != CURLE_OK)
		return transport_error(m, rc, err, err_size);
	s3_curl.easy_getinfo(m->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status == 200)
		return 0;
	snprintf(err, err_size, "%s: HTTP %ld for %s %s", m->base, status, put ? "PUT" : "GET",
		 path);
	return status >= 500 ? -EAGAIN : status == 404 ? -ENOENT : -EACCES;
}

/* ---- the three steps ---- */

/* Visible ASCII, no space: safe in a header or a path. */
static bool visible(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return false;
	return n > 0;
}

/* The session token, whole answer of the PUT, into the header the GETs send. */
static int take_token(struct imds *m, char *err, size_t err_size)
{
	size_t n = m->len;

	while (n && (m->body[n - 1] == '\n' || m->body[n - 1] == '\r'))
		n--;
	/* It goes into a header: a CR or LF in it would add headers of the service's. */
	if (n > IMDS_TOKEN_MAX || !visible(m->body, n)) {
		snprintf(err, err_size, "%s: not a session token", m->base);
		return -EBADMSG;
	}
	snprintf(m->token_header, sizeof(m->token_header), "X-aws-ec2-metadata-token: %.*s", (int)n,
		 m->body);
	return 0;
}

/* The role's name, the answer's first line: IAM's characters only, as it goes into a path. */
static int take_role(struct imds *m, char *err, size_t err_size)
{
	size_t n = strcspn(m->body, "\r\n");

	if (!n) {
		snprintf(err, err_size, "%s: no IAM role attached to the instance", m->base);
		return -ENOENT;
	}
	if (n > IMDS_ROLE_MAX ||
	    strspn(m->body,
		   "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+=,.@_-") < n) {
		snprintf(err, err_size, "%s: not an IAM role name", m->base);
		return -EBADMSG;
	}
	memcpy(m->role, m->body, n);
	m->role[n] = '\0';
	return 0;
}

/* Code, when there, must be "Success"; what it says otherwise is no secret. */
static int check_code(struct imds *m, char *err, size_t err_size)
{
	char *code = NULL;
	int ret = aws_json_string(m->body, m->len, "Code", &code);

	if (ret == -ENOENT || (!ret && !strcmp(code, "Success"))) {
		free(code);
		return 0;
	}
	if (ret)
		snprintf(err, err_size, "%s: role '%s': the credentials are not JSON", m->base,
			 m->role);
	else
		snprintf(err, err_size, "%s: role '%s': Code '%.64s'", m->base, m->role,
			 visible(code, strlen(code)) ? code : "?");
	free(code);
	return ret ? ret : -EACCES;
}

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

/* Expiration, when the answer has one that reads: the credentials are then refreshed. */
static void take_expiration(struct imds *m, struct s3_credentials *cr)
{
	char *when = NULL;

	cr->expires = 0;
	if (!aws_json_string(m->body, m->len, "Expiration", &when) &&
	    aws_parse_time(when, &cr->expires))
		cr->expires = 0;
	free(when);
}

/* AccessKeyId, SecretAccessKey and Token of the role's JSON into cr, all or none. */
static int take_credentials(struct imds *m, struct s3_credentials *cr, char *err, size_t err_size)
{
	static const char *const names[3] = { "AccessKeyId", "SecretAccessKey", "Token" };
	char *v[3] = { NULL, NULL, NULL };
	int ret = check_code(m, err, err_size);

	for (int i = 0; i < 3 && !ret; i++) {
		ret = aws_json_string(m->body, m->len, names[i], &v[i]);
		if (ret)
			snprintf(err, err_size, "%s: role '%s': %s %s", m->base, m->role,
				 ret == -ENOENT ? "no" : "no string", names[i]);
	}
	if (ret) {
		for (int i = 0; i < 3; i++)
			wipe_free(v[i]);
		return ret == -ENOENT ? -EBADMSG : ret;
	}
	cr->access_key = v[0];
	cr->secret_key = v[1];
	cr->session_token = v[2];
	take_expiration(m, cr);
	snprintf(cr->where, sizeof(cr->where), "(role %s at %s)", m->role, m->base);
	return 0;
}

static int imds_once(struct imds *m, struct s3_credentials *cr, char *err, size_t err_size)
{
	char path[sizeof(IMDS_CREDENTIALS_PATH) + IMDS_ROLE_MAX];
	int ret;

	if ((ret = imds_request(m, true, "/latest/api/token",
				"X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL, err,
				err_size)) ||
	    (ret = take_token(m, err, err_size)))
		return ret;
	ret = imds_request(m, false, IMDS_CREDENTIALS_PATH, m->token_header, err, err_size);
	if (ret == -ENOENT)
		snprintf(err, err_size, "%s: no IAM role attached to the instance", m->base);
	if (ret || (ret = take_role(m, err, err_size)))
		return ret;
	snprintf(path, sizeof(path), "%s%s", IMDS_CREDENTIALS_PATH, m->role);
	if ((ret = imds_request(m, false, path, m->token_header, err, err_size)))
		return ret;
	return take_credentials(m, cr, err, err_size);
}

/* ---- settings ---- */

/* A decimal number in [lo, hi] from the variable, or dflt when it is unset or empty. */
static int env_number(const char *var, unsigned long lo, unsigned long hi, unsigned long dflt,
		      unsigned long *out, char *err, size_t err_size)
{
	const char *s = getenv(var);
	unsigned long v = 0;

	*out = dflt;
	if (!s || !*s)
		return 0;
	/* hi is small: v * 10 + 9 cannot overflow while v <= hi. */
	for (const char *p = s; *p && v <= hi; p++)
		v = *p >= '0' && *p <= '9' ? v * 10 + (unsigned long)(*p - '0') : hi + 1;
	if (v < lo || v > hi) {
		snprintf(err, err_size, "%s: %lu to %lu expected", var, lo, hi);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int imds_endpoint(struct imds *m, char *err, size_t err_size)
{
	const char *e = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	const char *mode = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
	size_t n;

	if (!e || !*e)
		e = mode && !strcasecmp(mode, "IPv6") ? IMDS_ENDPOINT_IPV6 : IMDS_ENDPOINT;
	n = strlen(e);
	while (n && e[n - 1] == '/')
		n--;
	if ((strncasecmp(e, "http://", 7) && strncasecmp(e, "https://", 8)) ||
	    n >= sizeof(m->base) || !visible(e, n)) {
		snprintf(err, err_size,
			 "AWS_EC2_METADATA_SERVICE_ENDPOINT: an http:// or https:// URL expected");
		return -EINVAL;
	}
	memcpy(m->base, e, n);
	m->base[n] = '\0';
	return 0;
}

static int imds_setup(struct imds *m, char *err, size_t err_size)
{
	unsigned long timeout, attempts;
	int ret;

	if ((ret = imds_endpoint(m, err, err_size)) ||
	    (ret = env_number("AWS_METADATA_SERVICE_TIMEOUT", 1, TIMEOUT_MAX, 0, &timeout, err,
			      err_size)) ||
	    (ret = env_number("AWS_METADATA_SERVICE_NUM_ATTEMPTS", 1, ATTEMPTS_MAX,
			      DEFAULT_ATTEMPTS, &attempts, err, err_size)))
		return ret;
	m->connect_ms = timeout ? (long)timeout * 1000 : DEFAULT_CONNECT_MS;
	m->total_ms = timeout ? (long)timeout * 1000 : DEFAULT_TOTAL_MS;
	m->attempts = (unsigned)attempts;
	if ((ret = s3_curl_load(err, err_size)))
		return ret;
	if (!(m->curl = s3_curl.easy_init())) {
		snprintf(err, err_size, "cannot start libcurl");
		return -ENOMEM;
	}
	return 0;
}

int imds_credentials(struct s3_credentials *cr, char *err, size_t err_size)
{
	struct imds *m = calloc(1, sizeof(*m)); /* 64 KiB of answer: not for the stack */
	int ret;

	if (!m) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	if (!(ret = imds_setup(m, err, err_size))) {
		unsigned tried = 0;

		do
			ret = imds_once(m, cr, err, err_size);
		while (ret && retryable(ret) && ++tried < m->attempts);
	}
	if (!ret && err_size)
		err[0] = '\0'; /* not an earlier attempt's failure */
	if (m->curl)
		s3_curl.easy_cleanup(m->curl);
	/* The answers held the credentials, and the token the role's. */
	explicit_bzero(m, sizeof(*m));
	free(m);
	return ret;
}
