/* SPDX-License-Identifier: Apache-2.0 */
/* Identify: open ELF images, read their GNU build ID and what kind of file they are. */
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_image.h"
#include "elf_machine.h"
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

int elf_image_check(struct lidia_elf *e, bool any_type)
{
	if (elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &e->ehdr))
		return LIDIA_E_ELF;
	if (!any_type && e->ehdr.e_type != ET_EXEC && e->ehdr.e_type != ET_DYN)
		return LIDIA_E_ELF_TYPE;
	if (!any_type && !elf_machine_supported(&e->ehdr))
		return LIDIA_E_ELF_MACHINE;
	return whole(e) ? 0 : LIDIA_E_ELF_TRUNCATED;
}

static struct lidia_elf *new_image(const char *name, size_t size)
{
	struct lidia_elf *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->fd = -1;
	e->size = size;
	if (!(e->name = strdup(name))) {
		free(e);
		return NULL;
	}
	return e;
}

int elf_image_open_mem(struct lidia_elf **out, void *buf, size_t size, const char *name,
		       bool any_type)
{
	struct lidia_elf *e;
	int err;

	*out = NULL;
	if (!lidia_is_elf(buf, size))
		return LIDIA_E_NOT_ELF;
	pthread_once(&elf_once, elf_init);
	if (!(e = new_image(name ? name : "(memory)", size)))
		return -ENOMEM;
	e->elf = elf_memory(buf, size);
	err = e->elf ? elf_image_check(e, any_type) : LIDIA_E_ELF;
	if (err)
		lidia_elf_close(e);
	else
		*out = e;
	return err;
}

/* A regular file of path, opened without blocking (a FIFO an input names must not hang the run). */
static int open_file(const char *path, struct stat *st)
{
	char magic[SELFMAG];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st)) {
		err = -errno;
	} else if (!S_ISREG(st->st_mode)) {
		err = S_ISDIR(st->st_mode) ? -EISDIR : LIDIA_E_NOT_REGULAR;
	} else if (st->st_size < EI_NIDENT || pread(fd, magic, SELFMAG, 0) != SELFMAG ||
		   memcmp(magic, ELFMAG, SELFMAG)) {
		err = LIDIA_E_NOT_ELF;
	} else {
		return fd;
	}
	close(fd);
	return err;
}

int elf_image_open_lazy(struct lidia_elf **out, const char *path, bool any_type)
{
	struct lidia_elf *e;
	struct stat st;
	int fd, err;

	*out = NULL;
	if ((fd = open_file(path, &st)) < 0)
		return fd;
	pthread_once(&elf_once, elf_init);
	if (!(e = new_image(path, (size_t)st.st_size))) {
		close(fd);
		return -ENOMEM;
	}
	e->fd = fd;
	e->lazy = true;
	e->mtime = st.st_mtim;
	e->ctime = st.st_ctim;
	/* libelf reads what is asked of it with pread(2): never a mapping that could fault. */
	e->elf = elf_begin(fd, ELF_C_READ, NULL);
	err = e->elf ? elf_image_check(e, any_type) : LIDIA_E_ELF;
	if (lidia_elf_check(e))
		err = LIDIA_E_ELF_CHANGED; /* whatever the headers said, they were cut or mixed */
	if (err)
		lidia_elf_close(e);
	else
		*out = e;
	return err;
}

int lidia_elf_open(struct lidia_elf **out, const char *path)
{
	return elf_image_open_lazy(out, path, false);
}

int lidia_elf_check(const struct lidia_elf *e)
{
	struct stat st;

	if (e->fd < 0)
		return 0;
	if (fstat(e->fd, &st) || (uint64_t)st.st_size != e->size ||
	    st.st_mtim.tv_sec != e->mtime.tv_sec || st.st_mtim.tv_nsec != e->mtime.tv_nsec ||
	    st.st_ctim.tv_sec != e->ctime.tv_sec || st.st_ctim.tv_nsec != e->ctime.tv_nsec)
		return LIDIA_E_ELF_CHANGED;
	return 0;
}

void lidia_elf_close(struct lidia_elf *e)
{
	if (!e)
		return;
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	if (e->map)
		munmap(e->map, e->size);
	free(e->owned);
	free(e->name);
	free(e);
}

/* Pages given back at a time: short holds of the process's mappings (see the header). */
#define CLOSE_STEP (8u << 20)

void elf_image_close_stepwise(struct lidia_elf *e)
{
	if (e && e->map)
		for (size_t off = 0; off < e->size; off += CLOSE_STEP)
			madvise((char *)e->map + off,
				e->size - off < CLOSE_STEP ? e->size - off : CLOSE_STEP,
				MADV_DONTNEED);
	lidia_elf_close(e);
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
			 (!strcmp(n, ".debug_info") || !strcmp(n, ".zdebug_info") ||
			  !strcmp(n, ".debug_line") || !strcmp(n, ".zdebug_line")))
			out->has_dwarf =
				true; /* line programs alone are read too (line_orphans.c) */
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
