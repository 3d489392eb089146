/* SPDX-License-Identifier: Apache-2.0 */
/* The credentials chain: environment, profile, instance metadata. */
#ifndef LIDIAGEN_AWS_CREDENTIALS_H
#define LIDIAGEN_AWS_CREDENTIALS_H

#include "aws_load.h"

/* ld->c->creds from the environment, else the profile, else the instance's role. */
int aws_find_credentials(struct load *ld);

#endif
