/* SPDX-License-Identifier: Apache-2.0 */
#ifndef LIDIA_SPILL_H
#define LIDIA_SPILL_H

#include <stddef.h>
#include <stdint.h>

/*
 * An archive member too large to hold on the heap, written to a file that
 * has no name (O_TMPFILE, or made and unlinked at once) and then mapped:
 * its pages are the page cache's, which the kernel may write back and drop,
 * and the file is gone with the last mapping. Pages of zeros are never
 * written: the file keeps holes there, which cost neither disk nor tmpfs
 * memory, so that a sparse member holds only what it really has.
 */
#define SPILL_BUF (64 * 1024)

struct spill {
	int fd;
	uint64_t len;  /* bytes taken so far, buffered ones included */
	uint64_t held; /* bytes written to the file: the pages that are not all zeros */
	size_t fill;   /* bytes in buf, which starts at file offset len - fill */
	unsigned char buf[SPILL_BUF];
};

/* A new spill file in dir (NULL: $TMPDIR, else /tmp); 0 or -errno. */
int spill_open(struct spill **out, const char *dir);

/* Where the next bytes go: up to *room of them at the returned pointer, then spill_took(). */
unsigned char *spill_room(struct spill *s, size_t *room);

/* n bytes were put at spill_room's pointer; 0 or -errno (a full disk). */
int spill_took(struct spill *s, size_t n);

/* Copy n bytes in; 0 or -errno. */
int spill_write(struct spill *s, const void *p, size_t n);

/*
 * The file, written out, mapped private and writable (as elf_image_open
 * maps files: whatever libelf writes stays in this process); the spill is
 * freed either way. *out is then munmap()ed with the length s->len had;
 * *held is the bytes the file holds (its pages that are not all zeros).
 */
int spill_map(struct spill *s, unsigned char **out, uint64_t *held);

/* Give up: the file (never named) is gone. */
void spill_free(struct spill *s);

#endif
