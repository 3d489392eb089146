/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The EC2 instance metadata service (IMDSv2): the temporary credentials of
 * the instance's IAM role, the last place aws_credentials.c looks.
 */
#ifndef LIDIAGEN_IMDS_H
#define LIDIAGEN_IMDS_H

#include <stddef.h>

#include "s3.h"

/*
 * The role's credentials, from AWS_EC2_METADATA_SERVICE_ENDPOINT (default
 * http://169.254.169.254), with AWS_METADATA_SERVICE_TIMEOUT (seconds per
 * request; default 1 to connect, 2 in all) and
 * AWS_METADATA_SERVICE_NUM_ATTEMPTS (default 2). On success, 0, and
 * cr->access_key, secret_key and session_token are the caller's to free,
 * and cr->where names the role and the endpoint (cr->source is left
 * alone); on failure, cr is untouched, and a negative
 * errno and one line in err (never a secret). Prints nothing.
 */
int imds_credentials(struct s3_credentials *cr, char *err, size_t err_size);

#endif
