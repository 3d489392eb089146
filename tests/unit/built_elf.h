/* SPDX-License-Identifier: Apache-2.0 */
/*
 * For unit tests that build programs in a scratch directory and read their
 * DWARF: a command run there (printed first, as the tests print what they
 * do), and a section's bytes as libelf gives them.
 */
#ifndef LIDIA_BUILT_ELF_H
#define LIDIA_BUILT_ELF_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>

/* cmd run in dir, its output dropped; true when it succeeded. */
static inline bool built_run(const char *dir, const char *cmd)
{
	char full[4096];

	printf("# %s\n", cmd);
	snprintf(full, sizeof(full), "cd %s && (%s) >/dev/null 2>&1", dir, cmd);
	return system(full) == 0;
}

/* The data of elf's section name, into *data and *size (left as they are when absent). */
static inline void built_section(Elf *elf, const char *name, const unsigned char **data,
				 size_t *size)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		Elf_Data *d;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(n, name) && (d = elf_getdata(scn, NULL))) {
			*data = d->d_buf;
			*size = d->d_size;
		}
	}
}

#endif
