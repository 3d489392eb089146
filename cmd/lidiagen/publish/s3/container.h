/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Container credentials (ECS tasks, EKS Pod Identity): the agent's URL and
 * token from the environment, the JSON credentials it answers.
 */
#ifndef LIDIAGEN_CONTAINER_H
#define LIDIAGEN_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

#include "s3.h"

/* Whether the environment names an agent (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI). */
bool container_configured(void);

/*
 * The credentials the agent gives, into cr (access_key, secret_key,
 * session_token, expires, and where: the URL): 0. Else a negative errno
 * and one line in err, never a secret. The token file is read again on
 * each call: the agent's tokens are rotated under a running process.
 */
int container_credentials(struct s3_credentials *cr, char *err, size_t err_size);

#endif
