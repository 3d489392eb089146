/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIAGEN_CONFIG_H
#define LIDIAGEN_CONFIG_H

#include <stddef.h>

#include "batch.h"

/*
 * Apply a YAML config file (a mapping of option names to values; lists as
 * sequences) to o, before the command line. On an error, returns -1 with
 * "FILE:LINE:COLUMN: what" in err. The strings the options keep are owned
 * by the config and live until the process ends.
 */
int config_load(struct batch_opts *o, const char *path, char *err, size_t err_size);

/* The same from memory (for the fuzz target); name is used in messages. */
int config_parse(struct batch_opts *o, const char *name, const unsigned char *buf, size_t size,
		 char *err, size_t err_size);

#endif
