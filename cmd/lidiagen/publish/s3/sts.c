/* SPDX-License-Identifier: Apache-2.0 */
/*
 * STS's AssumeRoleWithWebIdentity and AssumeRole as the AWS SDKs call
 * them: a form-encoded POST of the Query API (Version 2011-06-15), the
 * answer an XML <...Response> whose Credentials are taken, or an
 * <ErrorResponse> whose Code and Message are said. The web identity token
 * is the call's only proof, so that call is not signed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aws_http.h"
#include "aws_json.h"
#include "s3_xml.h"
#include "sts.h"

#define STS_TIMEOUT_MS 10000
#define FORM_MAX 4096 /* the form but the token: ARNs and session names are short */

/* What the XML walk keeps. */
struct sts_answer {
	char *key, *secret, *token;
	char expiration[64];
	char code[64], message[256];
};

static int keep(char **slot, const char *text)
{
	free(*slot);
	return (*slot = strdup(text)) ? 0 : -ENOMEM;
}

static int on_element(void *ctx, unsigned depth, const char *parent, const char *name,
		      const char *text, bool whole)
{
	struct sts_answer *a = ctx;

	if (!strcmp(parent, "Error")) {
		if (!strcmp(name, "Code"))
			snprintf(a->code, sizeof(a->code), "%s", text);
		else if (!strcmp(name, "Message"))
			snprintf(a->message, sizeof(a->message), "%s", text);
		return 0;
	}
	if (strcmp(parent, "Credentials"))
		return 0;
	if (!whole)
		return -EBADMSG;
	if (!strcmp(name, "AccessKeyId"))
		return keep(&a->key, text);
	if (!strcmp(name, "SecretAccessKey"))
		return keep(&a->secret, text);
	if (!strcmp(name, "SessionToken"))
		return keep(&a->token, text);
	if (!strcmp(name, "Expiration"))
		snprintf(a->expiration, sizeof(a->expiration), "%s", text);
	return 0;
}

static void answer_free(struct sts_answer *a)
{
	char **s[] = { &a->key, &a->secret, &a->token };

	for (size_t i = 0; i < sizeof(s) / sizeof(*s); i++) {
		if (*s[i]) {
			explicit_bzero(*s[i], strlen(*s[i]));
			free(*s[i]);
			*s[i] = NULL;
		}
	}
}

/* "Name=value&" with value encoded as a query's, appended to form. */
static int form_add(char *form, size_t size, const char *name, const char *value)
{
	size_t n = strlen(form);
	int w = snprintf(form + n, size - n, "%s%s=", n ? "&" : "", name);

	if (w < 0 || (size_t)w >= size - n)
		return -ENAMETOOLONG;
	n += (size_t)w;
	return s3_query_value(value, form + n, size - n);
}

static int build_form(const struct sts_call *call, char *form, size_t size)
{
	const char *action = call->web_token ? "AssumeRoleWithWebIdentity" : "AssumeRole";
	int ret;

	form[0] = '\0';
	if ((ret = form_add(form, size, "Action", action)) ||
	    (ret = form_add(form, size, "Version", "2011-06-15")) ||
	    (ret = form_add(form, size, "RoleArn", call->role_arn)) ||
	    (ret = form_add(form, size, "RoleSessionName", call->session_name)))
		return ret;
	return call->web_token ? form_add(form, size, "WebIdentityToken", call->web_token) : 0;
}

/* What STS said, read into a; 0 when it gave the three credentials. */
static int read_answer(const struct sts_call *call, const struct aws_http_ans *ans,
		       struct sts_answer *a, char *err, size_t err_size)
{
	const char *action = call->web_token ? "AssumeRoleWithWebIdentity" : "AssumeRole";
	char root[64], why[160];
	struct s3_xml_sink sink = { on_element, a };
	int ret;

	snprintf(root, sizeof(root), "%sResponse", action);
	if (ans->status != 200) {
		s3_xml_parse(ans->body, ans->len, "ErrorResponse", &sink, why, sizeof(why));
		s3_xml_one_line(a->code);
		s3_xml_one_line(a->message);
		snprintf(err, err_size, "%s returned %s%s%s (HTTP %ld from %s)", action,
			 *a->code ? a->code : "an error", *a->message ? ": " : "", a->message,
			 ans->status, call->endpoint);
		return ans->status >= 500 ? -EAGAIN : -EACCES;
	}
	ret = s3_xml_parse(ans->body, ans->len, root, &sink, why, sizeof(why));
	if (ret == -ENOMEM)
		snprintf(err, err_size, "out of memory");
	else if (ret)
		snprintf(err, err_size, "%s at %s: %s", action, call->endpoint,
			 ret == -EPROTO ? why : "credentials too long");
	else if (!a->key || !a->secret || !a->token)
		snprintf(err, err_size, "%s at %s: an answer without its Credentials", action,
			 call->endpoint);
	return ret ? ret : !a->key || !a->secret || !a->token ? -EBADMSG : 0;
}

/* The answer's credentials moved into out; the expiry too when it has one. */
static int take(const struct sts_call *call, struct sts_answer *a, struct s3_credentials *out,
		char *err, size_t err_size)
{
	time_t when = 0;

	if (*a->expiration && aws_parse_time(a->expiration, &when)) {
		snprintf(err, err_size, "%s at %s: Expiration '%.40s' is not a time",
			 call->web_token ? "AssumeRoleWithWebIdentity" : "AssumeRole",
			 call->endpoint, a->expiration);
		return -EBADMSG;
	}
	out->access_key = a->key;
	out->secret_key = a->secret;
	out->session_token = a->token;
	out->expires = when;
	a->key = a->secret = a->token = NULL;
	return 0;
}

static int sts_once(const struct sts_call *call, const char *form, struct aws_http_ans *ans,
		    struct s3_credentials *out, char *err, size_t err_size)
{
	static const char *const headers[] = {
		"Content-Type: application/x-www-form-urlencoded; charset=utf-8", NULL
	};
	const struct s3_credentials *src = call->source;
	struct aws_http_req req = { .url = call->endpoint,
				    .headers = headers,
				    .body = form,
				    .access_key = src ? src->access_key : NULL,
				    .secret_key = src ? src->secret_key : NULL,
				    .session_token = src ? src->session_token : NULL,
				    .region = call->region,
				    .timeout_ms = STS_TIMEOUT_MS };
	struct sts_answer a = { 0 };
	char why[200];
	int ret = aws_http(&req, ans, why, sizeof(why));

	if (ret) {
		snprintf(err, err_size, "%s at %s: %s",
			 call->web_token ? "AssumeRoleWithWebIdentity" : "AssumeRole",
			 call->endpoint, why);
		return ret == -ETIMEDOUT ? ret : -EAGAIN;
	}
	if (!(ret = read_answer(call, ans, &a, err, err_size)))
		ret = take(call, &a, out, err, err_size);
	answer_free(&a);
	return ret;
}

int sts_assume(const struct sts_call *call, struct s3_credentials *out, char *err, size_t err_size)
{
	struct aws_http_ans *ans = malloc(sizeof(*ans));
	size_t size = FORM_MAX + (call->web_token ? 3 * strlen(call->web_token) : 0);
	char *form = malloc(size);
	int ret = -ENOMEM, tried = 0;

	snprintf(err, err_size, "out of memory");
	if (ans && form && !(ret = build_form(call, form, size))) {
		/* Twice at most: STS's 5xx and a lost connection are passing troubles. */
		do
			ret = sts_once(call, form, ans, out, err, err_size);
		while (ret == -EAGAIN && ++tried < 2);
	} else if (ans && form) {
		snprintf(err, err_size, "a role ARN or session name too long");
	}
	if (form)
		explicit_bzero(form, size);
	if (ans)
		explicit_bzero(ans, sizeof(*ans));
	free(form);
	free(ans);
	return ret;
}
