/* SPDX-License-Identifier: Apache-2.0 */
/* Identify: open ELF images, read their GNU build ID and what kind of file they are. */
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_image.h"
#include "internal.h"

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;

static void elf_init(void)
{
	elf_version(EV_CURRENT);
}

bool lidia_is_elf(const void *buf, size_t size)
{
	return size >= EI_NIDENT && !memcmp(buf, ELFMAG, SELFMAG);
}

/*
 * A file cut short (a copy interrupted, a bad download) still parses as ELF,
 * with fewer symbols than it should: its headers, and every section with
 * contents, must lie within it.
 */
static bool whole(const struct lidia_elf *e)
{
	Elf_Scn *scn = NULL;
	size_t shnum;

	/* From the header itself: libelf counts no sections it cannot read. */
	shnum = e->ehdr.e_shnum;
	if ((shnum || e->ehdr.e_shoff) &&
	    (e->ehdr.e_shoff > e->size ||
	     (uint64_t)(shnum ? shnum : 1) * e->ehdr.e_shentsize > e->size - e->ehdr.e_shoff))
		return false;
	if (e->ehdr.e_phoff > e->size ||
	    (uint64_t)e->ehdr.e_phnum * e->ehdr.e_phentsize > e->size - e->ehdr.e_phoff)
		return false;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return false;
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > e->size || sh.sh_size > e->size - sh.sh_offset))
			return false;
	}
	return true;
}

int lidia_elf_open_mem(struct lidia_elf **out, void *buf, size_t size, const char *name)
{
	return elf_image_open_mem(out, buf, size, name, false);
}

int elf_image_open_mem(struct lidia_elf **out, void *buf, size_t size, const char *name,
		       bool any_type)
{
	struct lidia_elf *e;
	int err = 0;

	*out = NULL;
	if (!lidia_is_elf(buf, size))
		return LIDIA_E_NOT_ELF;
	pthread_once(&elf_once, elf_init);
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->size = size;
	e->name = strdup(name ? name : "(memory)");
	e->elf = elf_memory(buf, size);
	if (!e->name || !e->elf) {
		err = e->name ? LIDIA_E_ELF : -ENOMEM;
		goto out;
	}
	if (elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &e->ehdr)) {
		err = LIDIA_E_ELF;
		goto out;
	}
	if (!any_type && e->ehdr.e_type != ET_EXEC && e->ehdr.e_type != ET_DYN)
		err = LIDIA_E_ELF_TYPE;
	else if (!whole(e))
		err = LIDIA_E_ELF_TRUNCATED;
out:
	if (err)
		lidia_elf_close(e);
	else
		*out = e;
	return err;
}

int lidia_elf_open(struct lidia_elf **out, const char *path)
{
	return elf_image_open(out, path, false);
}

int elf_image_open(struct lidia_elf **out, const char *path, bool any_type)
{
	struct stat st;
	void *map;
	int fd, err;

	*out = NULL;
	/* Not blocking: a FIFO an input names (a debug link, say) must not hang the run. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < EI_NIDENT) {
		close(fd);
		return S_ISDIR(st.st_mode)   ? -EISDIR
		       : S_ISREG(st.st_mode) ? LIDIA_E_NOT_ELF
					     : LIDIA_E_NOT_REGULAR;
	}
	/* Private and writable, so that nothing libelf might do reaches the file. */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	err = map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (err)
		return err;
	err = elf_image_open_mem(out, map, (size_t)st.st_size, path, any_type);
	if (err) {
		munmap(map, (size_t)st.st_size);
		return err;
	}
	(*out)->map = map;
	return 0;
}

void lidia_elf_close(struct lidia_elf *e)
{
	if (!e)
		return;
	if (e->elf)
		elf_end(e->elf);
	if (e->map)
		munmap(e->map, e->size);
	free(e->owned);
	free(e->name);
	free(e);
}

int lidia_elf_build_id(const struct lidia_elf *e, char *hex, size_t hex_size)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *id;
	ssize_t len = dwelf_elf_gnu_build_id(e->elf, (const void **)&id);

	if (len <= 0)
		return LIDIA_E_NO_BUILD_ID;
	if (hex_size < 2 * (size_t)len + 1)
		return -ENOSPC;
	for (ssize_t i = 0; i < len; i++) {
		hex[2 * i] = digits[id[i] >> 4];
		hex[2 * i + 1] = digits[id[i] & 15];
	}
	hex[2 * len] = '\0';
	return 0;
}

bool lidia_build_id_degenerate(const char *hex)
{
	size_t n = strlen(hex);

	if (!n)
		return false;
	for (size_t i = 1; i < n; i++)
		if (hex[i] != hex[0])
			return false;
	return hex[0] == '0' || hex[0] == 'f' || hex[0] == 'F';
}

/* .text is NOBITS: a separate debug file. */
static bool is_debug_file(const struct lidia_elf *e)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".text"))
			return sh.sh_type == SHT_NOBITS;
	}
	return false;
}

void lidia_elf_info(const struct lidia_elf *e, struct lidia_elf_info *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	memset(out, 0, sizeof(*out));
	out->debug_file = is_debug_file(e);
	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (!n)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			out->has_symtab = true;
		else if (sh.sh_type != SHT_NOBITS && sh.sh_size &&
			 (!strcmp(n, ".debug_info") || !strcmp(n, ".zdebug_info")))
			out->has_dwarf = true;
		else if (!strcmp(n, ".gopclntab") || !strcmp(n, ".data.rel.ro.gopclntab") ||
			 !strcmp(n, ".note.go.buildid"))
			out->has_go = true;
		if (sh.sh_type == SHT_NOTE && !strcmp(n, ".note.go.buildid")) {
			Elf_Data *d = elf_getdata(scn, NULL);
			size_t off = 0, name_off, desc_off;
			GElf_Nhdr nh;

			/* Go's linker writes one note, owner "Go", type 4, the ID as text. */
			if (d && gelf_getnote(d, off, &nh, &name_off, &desc_off) &&
			    nh.n_type == 4 && nh.n_descsz < sizeof(out->go_build_id)) {
				memcpy(out->go_build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
				out->go_build_id[nh.n_descsz] = '\0';
			}
		}
	}
}
