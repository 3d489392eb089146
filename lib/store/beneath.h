/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Paths below an output tree's directory, resolved relative to its fd and
 * never through a symbolic link (beneath.c). The store's writer, its locks
 * and its cleaner go through these; readers through lidia_store_open.
 * Every function returns an fd (O_CLOEXEC) or -errno: -ELOOP for a link
 * on the way.
 */
#ifndef LIDIA_STORE_BENEATH_H
#define LIDIA_STORE_BENEATH_H

#include <stdbool.h>
#include <stddef.h>

#include "internal.h"

/*
 * The tree's directory as the caller named it (a link there is followed:
 * the user chose it); made as mkdir -p would when create.
 */
int open_tree(const char *dir, bool create);

/* rel below dirfd, opened with flags (no O_CREAT); no element of it may be a link. */
int open_beneath(int dirfd, const char *rel, int flags);

/* The directory rel below dirfd ("" for dirfd itself); made as mkdir -p would when create. */
int open_dir_beneath(int dirfd, const char *rel, bool create);

/* key's parent directory into parent ("" for none), and *base its last element. */
int split_key(const char *key, char *parent, size_t parent_size, const char **base);

#endif
