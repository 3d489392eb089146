/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DWP_H
#define LIDIA_DWP_H

#include <stdbool.h>
#include <stddef.h>

#include "elf_image.h"

/*
 * Identify: DWARF packages (.dwp) beside the images.
 *
 * A .dwp holds the split units of a program's skeleton units (-gsplit-dwarf,
 * then dwp or llvm-dwp; Bazel's --fission). libdw 0.188 cannot read one, so
 * dwp_unpack.c cuts it into the .dwo files libdw reads; when that fails,
 * the skeletons give their line tables (file and line of the code, not of
 * the calls inlined into it) and the symbols name their functions, and the
 * package is said to be unread.
 */

/*
 * The package beside one of images[0..n), into path: NAME.dwp beside NAME,
 * or STEM.dwp beside STEM.debug. False when there is none (an archive
 * member has nothing beside it).
 */
bool dwp_beside(const struct lidia_elf *const *images, size_t n, char *path, size_t size);

/*
 * When the skeleton units of dwarf_image (the image whose DWARF is read)
 * lack split units that libdw finds, warn once that the package at dwp_path
 * is not read (it could not be unpacked), with how many units and what is
 * kept of them. find_split: whether libdw may look for the .dwo files the
 * skeletons name (split_paths.h); if not, every skeleton lacks its unit.
 */
void dwp_warn_unread(const struct lidia_elf *dwarf_image, const char *dwp_path, bool find_split);

#endif
