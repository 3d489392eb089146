/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DWP_UNPACK_H
#define LIDIA_DWP_UNPACK_H

#include "elf_image.h"

/*
 * Identify: a DWARF package (.dwp) cut into the .dwo files libdw reads.
 *
 * libdw 0.188 reads split units only from .dwo files (packages from 0.191
 * on), and looks for a skeleton's .dwo first at its DW_AT_dwo_name below
 * the directory of the file it read the skeleton from. So the package's
 * units are written, each with its pieces of the package's sections, as
 * .dwo files at the names their skeletons give, below a private temporary
 * directory, beside a copy of the image's debug sections, which libdw then
 * reads from there. The directory is removed by dwp_unpacked_close().
 */
struct dwp_unpacked;

/*
 * The package at dwp_path cut for the skeleton units of image (the image
 * whose DWARF is read): 1 and *out, whose dwp_unpacked_image() is what to
 * read instead; 0 when it holds none of them (or cannot be read: the
 * skeletons then keep what they have); <0 on an error of this machine's
 * (no memory, no temporary directory). find_split: whether libdw may look
 * for the .dwo files the skeletons name first (split_paths.h); if not, each
 * skeleton's unit comes from the package.
 */
int dwp_unpack(const struct lidia_elf *image, const char *dwp_path, bool find_split,
	       struct dwp_unpacked **out);

/* The copy of the image's debug sections that libdw finds the .dwo files beside. */
const struct lidia_elf *dwp_unpacked_image(const struct dwp_unpacked *u);

/* Remove the directory and what is in it (after libdw is done reading: dwarf_end). */
void dwp_unpacked_close(struct dwp_unpacked *u);

#endif
