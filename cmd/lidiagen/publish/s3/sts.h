/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AWS STS, for the credentials chain (aws_credentials.c):
 * AssumeRoleWithWebIdentity (unsigned: the token is the proof) and
 * AssumeRole (signed with the source's credentials), their XML answers
 * read by libexpat (s3_xml.c).
 */
#ifndef LIDIAGEN_STS_H
#define LIDIAGEN_STS_H

#include <stddef.h>

#include "s3.h"

struct sts_call {
	const char *endpoint; /* scheme://host[:port][/path], no trailing '/' */
	const char *region;   /* for AssumeRole's signature */
	const char *role_arn, *session_name;
	const char *web_token;		     /* AssumeRoleWithWebIdentity's token, else NULL */
	const struct s3_credentials *source; /* AssumeRole's signer, else NULL */
};

/*
 * The role's temporary credentials into out (access_key, secret_key,
 * session_token, expires): 0. Else a negative errno and one line in err
 * naming the action and STS's answer ("AssumeRoleWithWebIdentity returned
 * AccessDenied: ..."), never a secret.
 */
int sts_assume(const struct sts_call *call, struct s3_credentials *out, char *err, size_t err_size);

#endif
