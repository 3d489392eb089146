/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_ELF_IMAGE_H
#define LIDIA_ELF_IMAGE_H

#include <gelf.h>

#include "lidia.h"

#include <sys/stat.h>

/*
 * An opened ELF image: libelf's handle over bytes in memory (given, or read
 * in by elf_image_load()), or, until loaded, over a file libelf reads its
 * headers from with pread(2) (ELF_C_READ). No input file is ever mapped: a
 * file another process truncates while it is read makes a read come back
 * short, never a SIGBUS inside libelf or libdw.
 */
struct lidia_elf {
	Elf *elf;
	GElf_Ehdr ehdr;
	void *map;   /* our mapping (a file's bytes read in, a copy), or NULL for caller memory */
	void *owned; /* a heap copy we made (inflated sections), or NULL */
	bool loaded; /* map holds the bytes of the file fd, read in */
	/*
	 * Pages of map given back (debug_sections_drop_pages()): read in again
	 * before the next extraction. Set from extraction threads, atomically.
	 */
	bool map_dropped;
	int fd;			      /* the file, or -1 */
	bool lazy;		      /* only its headers read yet, by libelf */
	struct timespec mtime, ctime; /* the file's, when opened: changed, it is read no more */
	size_t size;
	char *name;
	/*
	 * The directory libdw looks for .dwo files in first: dwp_unpack.c's
	 * private one, for the copy it makes; NULL for images begun from memory.
	 */
	const char *debugdir;
};

/*
 * As lidia_elf_open_mem(), and with any_type also relocatable files: a dwz
 * supplementary file is ET_REL.
 */
int elf_image_open_mem(struct lidia_elf **out, void *buf, size_t size, const char *name,
		       bool any_type);

/* Read e->ehdr, and check e's type (any_type: any) and that its headers and sections fit in it. */
int elf_image_check(struct lidia_elf *e, bool any_type);

/*
 * As lidia_elf_open(), and with any_type also relocatable files: only the
 * headers are read (pread(2)), for its build ID and lidia_elf_info();
 * elf_image_load() (elf_load.h) reads the rest before anything else is.
 */
int elf_image_open_lazy(struct lidia_elf **out, const char *path, bool any_type);

/*
 * lidia_elf_close(e), its mapping's pages given back a few MiB at a time
 * first: munmap() holds the process's mappings locked while it frees them
 * all, and a thread that maps memory meanwhile (a big malloc) waits for the
 * whole of it; madvise(MADV_DONTNEED) holds them for a step at a time.
 */
void elf_image_close_stepwise(struct lidia_elf *e);

#endif
