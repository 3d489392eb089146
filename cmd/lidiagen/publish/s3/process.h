/* SPDX-License-Identifier: Apache-2.0 */
/* A profile's credential_process: run, its JSON read (process.c). */
#ifndef LIDIAGEN_PROCESS_H
#define LIDIAGEN_PROCESS_H

#include <stddef.h>

#include "s3.h"

/*
 * command split into words as the AWS CLI splits it (Python's shlex.split:
 * blanks separate words; '...' keeps all; "..." keeps all but \" and \\;
 * a \ outside quotes keeps the next character), run without a shell,
 * its standard error left the user's, its standard output read as
 * {"Version": 1, "AccessKeyId", "SecretAccessKey"[, "SessionToken"]
 * [, "Expiration"]}; killed after timeout_s seconds. 0 and cr's keys,
 * token and expiry set; else a negative errno and one line in err saying
 * what ran and how it ended (never its output, which could be a secret).
 */
int process_credentials(const char *command, long timeout_s, struct s3_credentials *cr, char *err,
			size_t err_size);

/* For tests: command split into at most max words in argv (pointing into buf): their count or -EINVAL. */
int process_split(const char *command, char *buf, char **argv, int max);

#endif
