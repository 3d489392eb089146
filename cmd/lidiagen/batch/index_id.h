/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What identifies a run of the index (index_id.c): the inputs given and the
 * options that change what is found. Slices merge, and convert --index
 * reads an index, only when theirs agree.
 */
#ifndef LIDIAGEN_INDEX_ID_H
#define LIDIAGEN_INDEX_ID_H

#include <stddef.h>

#include "batch.h"
#include "index.h"

/* The header of a run of o over paths[0..n): 0 or -ENOMEM (h->options then to free). */
int index_run_header(struct index_header *h, const struct batch_opts *o, char **paths, size_t n);

/* How the run of a differs from that of b, in buf ("--fallback-key go, not none"); NULL: alike. */
const char *index_run_differs(const struct index_header *a, const struct index_header *b, char *buf,
			      size_t size);

#endif
