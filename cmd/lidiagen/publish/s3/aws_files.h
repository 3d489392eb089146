/* SPDX-License-Identifier: Apache-2.0 */
/* The profile, and the two AWS files found, read and parsed for it. */
#ifndef LIDIAGEN_AWS_FILES_H
#define LIDIAGEN_AWS_FILES_H

#include "aws_load.h"

/*
 * ld->profile (the overrides', AWS_PROFILE or "default"), and ld->files
 * located, read and parsed for it; ld->in_config for messages. 0 or
 * aws_fail's code; either way, aws_files_release afterwards.
 */
int aws_profile_load(struct load *ld);

/* The files' buffers wiped and freed. */
void aws_files_release(struct load *ld);

/* A setting of the profile in the config file (where the AWS tools read settings from). */
const char *aws_profile_setting(const struct load *ld, enum setting s);

#endif
