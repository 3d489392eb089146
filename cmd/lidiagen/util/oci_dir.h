/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An OCI image layout directory given as an input (oci-layout and
 * index.json in it): the batch reads an image as one tar (batch/image.h),
 * so its files are first written as a tar to an unnamed file in $TMPDIR,
 * which stands for it as /dev/fd/N (opened again by path, as often as
 * needed); oci_dir_name() gives the directory back for messages.
 */
#ifndef LIDIAGEN_OCI_DIR_H
#define LIDIAGEN_OCI_DIR_H

#include <stddef.h>

/*
 * Each of paths[0..n) that is an OCI image layout directory replaced by the
 * /dev/fd/N path of its tar. 0, or -1 with the reason in err (the copy
 * failed).
 */
int oci_dir_inputs(char **paths, size_t n, char *err, size_t err_size);

/* The directory a path oci_dir_inputs() put stands for; else path itself. */
const char *oci_dir_name(const char *path);

/* path (or a member's, PATH!MEMBER) with the directory for the /dev/fd/N it starts with. */
const char *oci_dir_shown(const char *path, char *buf, size_t size);

#endif
