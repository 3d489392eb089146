/* SPDX-License-Identifier: Apache-2.0 */
/* The INI dialect of the AWS files (Python's configparser, as the AWS CLI reads them). */
#ifndef LIDIAGEN_AWS_INI_H
#define LIDIAGEN_AWS_INI_H

#include <stdbool.h>

#include "aws_load.h"

/* The settings of ld->profile in f (its buffer cut into lines); is_config: the config file. */
int aws_ini_parse(struct load *ld, struct aws_file *f, bool is_config);

#endif
