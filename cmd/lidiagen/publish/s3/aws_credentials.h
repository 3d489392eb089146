/* SPDX-License-Identifier: Apache-2.0 */
/* The credentials chain, in the AWS CLI's order (aws_credentials.c). */
#ifndef LIDIAGEN_AWS_CREDENTIALS_H
#define LIDIAGEN_AWS_CREDENTIALS_H

#include "aws_load.h"

/* ld->c->creds from the first source of the chain that is set: 0, or aws_fail's code. */
int aws_find_credentials(struct load *ld);

#endif
