/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --build-id ID..., --build-ids FILE: inputs fetched from the debuginfod
 * servers by build ID alone (the build IDs a profiler saw and could not
 * symbolize): each one's executable and debug file, into libdebuginfod's
 * cache, which the batch then converts as files given, to the same keys.
 */
#ifndef LIDIAGEN_BY_BUILD_ID_H
#define LIDIAGEN_BY_BUILD_ID_H

#include <stddef.h>

#include "batch.h"

struct fetched {
	char **paths;  /* the files fetched, by build ID in the order given, then kind */
	size_t n;      /* of paths */
	size_t failed; /* build IDs the servers gave nothing for (each said, one line) */
};

/*
 * The build IDs of o (--build-id, then --build-ids FILE's), checked: -1 and
 * the reason in err for one that is not a build ID or a file that cannot be
 * read (a usage error). Then each fetched, on up to o->jobs threads: 0, or
 * -2 and the reason in err when the servers cannot be used at all.
 */
int fetch_build_ids(const struct batch_opts *o, struct fetched *out, char *err, size_t err_size);

void fetched_free(struct fetched *f);

#endif
