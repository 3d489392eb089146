/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Publishing a tree written earlier (by convert, or by the CMake and Bazel
 * rules) to a bucket, by the rules convert -o s3:// follows (publish.h):
 * each file's key is its path under the tree; a key the bucket lacks is
 * uploaded, an object holding less, or not written by lidiagen, is
 * replaced, and one holding as much is left: "exists". Nothing
 * byte-identical is ever sent again.
 */
#ifndef LIDIAGEN_UPLOAD_H
#define LIDIAGEN_UPLOAD_H

#include <stdbool.h>

#include "publish.h"

struct upload_opts {
	const char *dir;
	struct publish *bucket;
	bool force;   /* send every file, whatever the bucket holds */
	bool dry_run; /* say what would be sent; send nothing */
	const char *manifest;
	unsigned jobs; /* requests at a time */
};

/* Publish o->dir; returns an exit code (EXIT_OK, EXIT_FAILED). */
int upload_run(const struct upload_opts *o);

#endif
