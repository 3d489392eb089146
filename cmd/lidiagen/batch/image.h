/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Container images as deployed (image.c): a docker save tarball or an OCI
 * image layout's tar is read as the file systems its images show, not as
 * loose nested archives. A first walk reads its JSON and the names in its
 * layers; then what a later layer deletes (.wh.NAME), hides (an opaque
 * directory, .wh..wh..opq) or replaces is never identified, and a layer
 * no chosen platform uses is not opened.
 */
#ifndef LIDIAGEN_BATCH_IMAGE_H
#define LIDIAGEN_BATCH_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lidia.h"

struct strset;

/* A layer (a top-level member) some chosen image applies. */
struct image_layer {
	uint32_t at;  /* its position at the top */
	char *member; /* its name there */
	char *label;  /* "IMAGE@REF!LAYER" for messages: the first image that applies it */
};

/* What the identify walk of an image input looks at, and how its members are named. */
struct image_view {
	struct image_layer *layers;
	size_t nlayers;
	struct strset *visible; /* "AT\tPATH": an entry some chosen image shows */
};

/* Whether the file at fd looks like an image's tar (by its first file's name). */
bool image_candidate(int fd);

/*
 * Read the image at fd (walked with the limits of limits) into *v, its
 * images those of platform ("os/arch"; NULL: all). Returns 0 (no layer
 * when no image is of that platform), 1 when it is no image (v empty), or
 * -ENOMEM.
 */
int image_view_read(struct image_view *v, int fd, const char *path,
		    const struct lidia_archive_opts *limits, const char *platform);
void image_view_release(struct image_view *v);

/* Whether the identify walk looks at member m (a layer, or an entry of one, visible). */
bool image_view_wants(struct image_view *v, const struct lidia_archive_member *m);

/*
 * m's path for messages: "SHOWN@IMAGE!LAYER!PATH" into buf (input: the path
 * m->path starts with; shown: what names it), or m->path as it is.
 */
const char *image_view_name(const struct image_view *v, const char *input, const char *shown,
			    const struct lidia_archive_member *m, char *buf, size_t size);

#endif
