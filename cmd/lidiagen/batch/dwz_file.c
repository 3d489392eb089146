/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether an ELF image is a dwz supplementary file (dwz -m), for the
 * index's "kind": DWARF (.debug_info), no executable section, no program
 * header. A binary has program headers; a separate debug file keeps them
 * (and its .text, NOBITS, keeps SHF_EXECINSTR); an object file has its
 * .text. dwz writes its file as ET_REL, so the batch passes it over as "not
 * linked" (it has no code to symbolize): the index still says what it is.
 * libelf reads the headers, every offset checked by it.
 */
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "dwz_file.h"
#include "open_regular.h"

static bool elf_is_dwz(Elf *e)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool dwarf = false;

	if (!gelf_getehdr(e, &eh) || eh.e_phnum || elf_getshdrstrndx(e, &shstrndx))
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return false;
		if (sh.sh_flags & SHF_EXECINSTR)
			return false;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		dwarf |= name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"));
	}
	return dwarf;
}

bool dwz_file(const char *path, const void *data, size_t size)
{
	int fd = -1;
	Elf *e;
	bool dwz;

	elf_version(EV_CURRENT);
	if (data)
		e = elf_memory((char *)data, size);
	else if ((fd = open_regular(path)) >= 0)
		e = elf_begin(fd, ELF_C_READ, NULL); /* pread: never a mapping that could fault */
	else
		return false;
	dwz = e && elf_kind(e) == ELF_K_ELF && elf_is_dwz(e);
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return dwz;
}
