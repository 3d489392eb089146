/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_DEBUG_SECTIONS_H
#define LIDIA_DEBUG_SECTIONS_H

#include <stdbool.h>

#include "elf_image.h"

/*
 * The image libdw is to read for e's debug sections. libdw inflates
 * compressed sections in the image it reads, rewriting their headers in its
 * bytes, one after the other; and in Debian 12 (elfutils 0.188) it inflates
 * zlib but not zstd (ELFCOMPRESS_ZSTD, which binutils 2.40 and LLVM 16 write).
 *
 * When e has gABI compressed sections (zstd or zlib), or borrowed is set (e
 * is the caller's, never to be written) and e has GNU .zdebug sections,
 * *out is a new image of e's debug sections only (location lists and macros
 * left out: never read), the gABI compressed ones inflated here on up to
 * threads threads (0 or 1: the calling one; the others run their work
 * through guard when set, lidia_extract_opts.thread_guard), largest first, the others as
 * they are for libdw to inflate there (a zlib section too large to inflate
 * here within the bounds, or that fails to, as well: libdw decides on it as
 * before); the pages of e's compressed sections are given back once read.
 * The copy's bytes do not
 * depend on threads. Otherwise *out is NULL and libdw reads e. Close *out
 * with lidia_elf_close(). LIDIA_E_ELF when a zstd section is corrupt or
 * would inflate past bounds.
 */
int debug_sections_inflate(const struct lidia_elf *e, bool borrowed, unsigned threads,
			   int (*guard)(void (*fn)(void *arg), void *arg), struct lidia_elf **out);

/*
 * Whether section n (a .debug_ or .zdebug_ one, or another) is one no reader
 * of ours or libdw's reads: location lists, macros, name lookup tables
 * (pubnames, names: the units are all read anyway) and call frames.
 */
bool debug_section_unread(const char *n);

/*
 * Give back the whole pages of [off, off + size) of e's mapping, when e has
 * one: bytes that will be read no more, zeros if touched again. A file's
 * bytes read in (e->loaded) are read in again before e is extracted again
 * (elf_image_load()).
 */
void debug_sections_drop_pages(const struct lidia_elf *e, uint64_t off, uint64_t size);

#endif
