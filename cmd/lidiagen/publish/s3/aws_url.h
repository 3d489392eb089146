/* SPDX-License-Identifier: Apache-2.0 */
/* s3://BUCKET[/PREFIX], checked by S3's rules. */
#ifndef LIDIAGEN_AWS_URL_H
#define LIDIAGEN_AWS_URL_H

#include "aws_load.h"

/* ld->c->bucket and prefix from url, checked by S3's rules; 0 or aws_fail's code. */
int aws_parse_url(struct load *ld, const char *url);

#endif
