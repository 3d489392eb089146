/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether an ELF image is a dwz supplementary file (dwz -m), for the
 * index's "kind" and for the batch's gathering of them (dwz_pool.c): DWARF
 * (.debug_info), no executable section, no program header. A binary has
 * program headers; a separate debug file keeps them (and its .text,
 * NOBITS, keeps SHF_EXECINSTR); an object file has its .text. dwz writes
 * its file as ET_REL, so the batch passes it over as "not linked" (it has
 * no code to symbolize): the index still says what it is.
 * libelf reads the headers, every offset checked by it.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dwz_file.h"
#include "open_regular.h"

/* The GNU build ID in the notes of scn, in hex, into hex (left "" when none fits). */
static void build_id_of(Elf_Scn *scn, char *hex, size_t hex_size)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;

	while (d && d->d_buf && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((const char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz &&
		    2 * nh.n_descsz < hex_size) {
			const unsigned char *id = (const unsigned char *)d->d_buf + desc_off;

			for (size_t i = 0; i < nh.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", id[i]);
			return;
		}
		off = next;
	}
}

static bool elf_is_dwz(Elf *e, char *hex, size_t hex_size)
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
		if (hex && !hex[0] && sh.sh_type == SHT_NOTE)
			build_id_of(scn, hex, hex_size);
	}
	return dwarf;
}

bool dwz_file_id(const char *path, const void *data, size_t size, char *hex, size_t hex_size)
{
	int fd = -1;
	Elf *e;
	bool dwz;

	if (hex && hex_size)
		hex[0] = '\0';
	elf_version(EV_CURRENT);
	if (data)
		e = elf_memory((char *)data, size);
	else if ((fd = open_regular(path)) >= 0)
		e = elf_begin(fd, ELF_C_READ, NULL); /* pread: never a mapping that could fault */
	else
		return false;
	dwz = e && elf_kind(e) == ELF_K_ELF && elf_is_dwz(e, hex_size ? hex : NULL, hex_size);
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return dwz;
}

bool dwz_file(const char *path, const void *data, size_t size)
{
	return dwz_file_id(path, data, size, NULL, 0);
}
