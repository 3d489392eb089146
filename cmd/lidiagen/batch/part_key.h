/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An ELF image's key: its GNU build ID, or what --fallback-key makes of it.
 * Identify computes it once; convert computes it again from the image it is
 * about to read, and writes nothing when the two differ.
 */
#ifndef LIDIAGEN_PART_KEY_H
#define LIDIAGEN_PART_KEY_H

#include <stdbool.h>
#include <stddef.h>

#include "batch.h"
#include "lidia.h"

/* What image_key() found. */
struct image_key {
	char key[LIDIA_KEY_MAX]; /* the key, when has_key */
	bool has_key;
	bool degenerate;	      /* a build ID of all zeros or all 0xff, in build_id: no key */
	char build_id[LIDIA_KEY_MAX]; /* the GNU build ID, "" when none */
};

/*
 * The key of image e (info: lidia_elf_info's, for the Go build ID). The
 * sha256 fallback hashes data[0..size), or, data NULL, the file at path.
 */
void image_key(enum fallback_key fallback, struct lidia_elf *e, const struct lidia_elf_info *info,
	       const void *data, size_t size, const char *path, struct image_key *out);

#endif
