/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_ELF_LOAD_H
#define LIDIA_ELF_LOAD_H

#include "elf_image.h"

/*
 * Read a lazily opened image's bytes into memory of our own, once (0 for an
 * image in memory already; pages given back are read in again): what the
 * extraction reads. Holes of a sparse file, code and the debug sections no
 * reader looks at are left unread: they cost no memory. LIDIA_E_ELF_CHANGED
 * when the file changed since it was opened, or while it was read.
 */
int elf_image_load(struct lidia_elf *e);

/* elf_image_load(), a big file read on up to threads threads (two halves). */
int elf_image_load_threads(struct lidia_elf *e, unsigned threads);

/*
 * elf_image_open_lazy(), then elf_image_load(): an image of path, with any
 * type when any_type (a dwz supplementary file is ET_REL), read in whole.
 */
int elf_image_open(struct lidia_elf **out, const char *path, bool any_type);

#endif
