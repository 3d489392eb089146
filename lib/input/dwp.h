/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DWP_H
#define LIDIA_DWP_H

#include <stdbool.h>
#include <stddef.h>

#include "elf_image.h"

/*
 * Identify: DWARF packages (.dwp), which are not read.
 *
 * A .dwp holds the split units of a program's skeleton units (-gsplit-dwarf,
 * then dwp or llvm-dwp; Bazel's --fission). libdw finds a split unit only as
 * a .dwo file, by the name the skeleton gives, and reads packages only from
 * elfutils 0.191 on, and then only beside an image it opened from a file
 * descriptor; every image here is read from memory. Without its split unit a
 * skeleton gives its line table (file and line of the code, not of the
 * calls inlined into it) and the symbols name its functions: what a package
 * held is lost, so a package found beside the images is said to be unread.
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
 * is not read, with how many units and what is kept of them.
 */
void dwp_warn_unread(const struct lidia_elf *dwarf_image, const char *dwp_path);

#endif
