/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Container credentials as the AWS SDKs fetch them: a GET of
 * http://169.254.170.2 + AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (ECS), or
 * of AWS_CONTAINER_CREDENTIALS_FULL_URI (EKS Pod Identity's
 * http://169.254.170.23/v1/credentials), with the Authorization header
 * from AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE, else
 * AWS_CONTAINER_AUTHORIZATION_TOKEN. A full URI over plain http must name
 * the agent's own addresses or the loopback, as the SDKs require: the
 * token would otherwise go in clear to whoever the URL names.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "aws_http.h"
#include "aws_json.h"
#include "container.h"

#define ECS_HOST "http://169.254.170.2"
#define URL_MAX 1024
#define TOKEN_MAX 16384
#define TIMEOUT_MS 2000
#define ATTEMPTS 3

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

bool container_configured(void)
{
	return env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") ||
	       env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
}

/* Whether host (an http:// URL's) is one the SDKs send a token to in clear. */
static bool host_allowed(const char *host, size_t n)
{
	static const char *const agents[] = { "169.254.170.2", "169.254.170.23", "[fd00:ec2::23]",
					      "[::1]", "localhost" };
	unsigned a, b, c, d;
	char h[64], end;

	if (n >= sizeof(h))
		return false;
	memcpy(h, host, n);
	h[n] = '\0';
	for (size_t i = 0; i < sizeof(agents) / sizeof(*agents); i++)
		if (!strcasecmp(h, agents[i]))
			return true;
	/* 127.0.0.0/8, the loopback: written as four numbers, nothing after. */
	return sscanf(h, "%u.%u.%u.%u%c", &a, &b, &c, &d, &end) == 4 && a == 127 && b < 256 &&
	       c < 256 && d < 256;
}

/* The URL to GET, checked, into url. */
static int agent_url(char *url, size_t size, char *err, size_t err_size)
{
	const char *rel = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"),
		   *full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI"), *host;
	size_t n;

	if (rel) {
		snprintf(url, size, "%s%s%s", ECS_HOST, *rel == '/' ? "" : "/", rel);
		return 0;
	}
	if (strlen(full) >= size || strpbrk(full, " \t\r\n")) {
		snprintf(err, err_size, "AWS_CONTAINER_CREDENTIALS_FULL_URI: not a URL");
		return -EINVAL;
	}
	snprintf(url, size, "%s", full);
	if (!strncasecmp(full, "https://", 8))
		return 0;
	if (strncasecmp(full, "http://", 7)) {
		snprintf(err, err_size,
			 "AWS_CONTAINER_CREDENTIALS_FULL_URI: http:// or https:// expected");
		return -EINVAL;
	}
	host = full + 7;
	n = *host == '[' ? strcspn(host, "]") + 1 : strcspn(host, ":/");
	if (host_allowed(host, n))
		return 0;
	snprintf(err, err_size,
		 "AWS_CONTAINER_CREDENTIALS_FULL_URI: plain http only to the loopback or the "
		 "container agent (169.254.170.2, 169.254.170.23, fd00:ec2::23), as the AWS SDKs");
	return -EACCES;
}

/* "Authorization: TOKEN" from the token file (read now) or the variable; "" when neither. */
static int auth_header(char *buf, size_t size, char *err, size_t err_size)
{
	const char *file = env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"),
		   *tok = env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
	size_t pre = strlen("Authorization: ");
	ssize_t n = 0;
	int fd;

	buf[0] = '\0';
	if (!file && !tok)
		return 0;
	memcpy(buf, "Authorization: ", pre);
	if (file) {
		fd = open(file, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, buf + pre, size - pre - 1);
		if (fd >= 0)
			close(fd);
		if (n < 0 || (size_t)n >= size - pre - 1) {
			snprintf(err, err_size, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: %s",
				 n < 0 ? strerror(errno) : "larger than 16 KiB");
			return n < 0 ? -errno : -EFBIG;
		}
		buf[pre + (size_t)n] = '\0';
	} else {
		snprintf(buf + pre, size - pre, "%s", tok);
	}
	/* A line end in it would add headers of the file's; a trailing one is the editor's. */
	buf[pre + strcspn(buf + pre, "\r\n")] = '\0';
	return 0;
}

/* The three members and Expiration of the agent's JSON into cr, all or none. */
static int take_json(const struct aws_http_ans *ans, const char *url, struct s3_credentials *cr,
		     char *err, size_t err_size)
{
	static const char *const names[] = { "AccessKeyId", "SecretAccessKey", "Token",
					     "Expiration" };
	char *v[4] = { NULL };
	int ret = 0;

	for (int i = 0; i < 4 && !ret; i++)
		if ((ret = aws_json_string(ans->body, ans->len, names[i], &v[i])))
			snprintf(err, err_size, "%s: an answer without %s", url, names[i]);
	if (!ret && aws_parse_time(v[3], &cr->expires)) {
		snprintf(err, err_size, "%s: Expiration is not a time", url);
		ret = -EBADMSG;
	}
	if (!ret) {
		cr->access_key = v[0];
		cr->secret_key = v[1];
		cr->session_token = v[2];
		snprintf(cr->where, sizeof(cr->where), "(%s)", url);
	}
	for (int i = ret ? 0 : 3; i < 4; i++)
		if (v[i]) {
			explicit_bzero(v[i], strlen(v[i]));
			free(v[i]);
		}
	return ret == -ENOENT ? -EBADMSG : ret;
}

static int fetch(const char *url, const char *auth, struct aws_http_ans *ans,
		 struct s3_credentials *cr, char *err, size_t err_size)
{
	const char *headers[] = { "Accept: application/json", *auth ? auth : NULL, NULL };
	struct aws_http_req req = { .url = url, .headers = headers, .timeout_ms = TIMEOUT_MS };
	char why[200];
	int ret = aws_http(&req, ans, why, sizeof(why));

	if (ret) {
		snprintf(err, err_size, "%s: %s", url, why);
		return -EAGAIN;
	}
	if (ans->status != 200) {
		snprintf(err, err_size, "%s: HTTP %ld%s", url, ans->status,
			 ans->status == 401 || ans->status == 403
				 ? " (the authorization token refused)"
				 : "");
		return ans->status >= 500 || ans->status == 429 ? -EAGAIN : -EACCES;
	}
	return take_json(ans, url, cr, err, err_size);
}

int container_credentials(struct s3_credentials *cr, char *err, size_t err_size)
{
	struct aws_http_ans *ans = malloc(sizeof(*ans));
	char url[URL_MAX + 64], *auth = malloc(TOKEN_MAX + 32);
	int ret = -ENOMEM, tried = 0;

	snprintf(err, err_size, "out of memory");
	if (ans && auth && !(ret = agent_url(url, sizeof(url), err, err_size)) &&
	    !(ret = auth_header(auth, TOKEN_MAX + 32, err, err_size))) {
		do
			ret = fetch(url, auth, ans, cr, err, err_size);
		while (ret == -EAGAIN && ++tried < ATTEMPTS);
	}
	if (auth)
		explicit_bzero(auth, TOKEN_MAX + 32);
	if (ans)
		explicit_bzero(ans, sizeof(*ans));
	free(auth);
	free(ans);
	return ret;
}
