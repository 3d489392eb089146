/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Identify -> extract: a file's bytes read into memory of our own, once,
 * before libelf, libdw or our own readers look past its headers. Reading
 * with pread(2) is then the one step that can meet a file another process
 * truncates or rewrites: the read comes back short, or the file's dates
 * moved, and that image fails alone. No input is mapped, so no SIGBUS can
 * land inside a library whose state we could not restore.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "debug_sections.h"
#include "elf_load.h"
#include "huge_pages.h"
#include "internal.h"

#define MAX_UNREAD 32

/* [lo, hi) of the file, left unread. */
struct range {
	uint64_t lo, hi;
};

/* Whether section sh's bytes overlap those of any other section that is read. */
static bool shares_bytes(const struct lidia_elf *e, const GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr o;

		if (!gelf_getshdr(scn, &o) || o.sh_type == SHT_NOBITS || !memcmp(&o, sh, sizeof(o)))
			continue;
		if (o.sh_offset < sh->sh_offset + sh->sh_size &&
		    sh->sh_offset < o.sh_offset + o.sh_size)
			return true;
	}
	return false;
}

/*
 * A Go program's: its pclntab is found, and read, through loaded data and
 * their relocations (pclntab_find.c), so all of those are read.
 */
static bool go_image(const struct lidia_elf *e, size_t shstrndx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(e->elf, shstrndx, sh.sh_name)))
			continue;
		if (!strncmp(n, ".go.", 4) || !strncmp(n, ".gosym", 6) ||
		    !strncmp(n, ".note.go.", 9) || !strcmp(n, ".noptrdata") ||
		    strstr(n, "gopclntab"))
			return true;
	}
	return false;
}

/*
 * Loaded data that no reader of a C, C++ or Rust image looks at: constants,
 * variables, relocations, unwind tables, the dynamic linker's hash tables
 * and symbol versions (symbols, notes and the dynamic section are read; so
 * are ppc64's .opd function descriptors; without section headers the hash
 * table counts the symbols, and nothing is left unread). On a stripped
 * library that is most of what is not code.
 */
static bool loaded_data(const GElf_Shdr *sh, const char *name)
{
	if (!(sh->sh_flags & SHF_ALLOC) || (name && !strcmp(name, ".opd")))
		return false;
	switch (sh->sh_type) {
	case SHT_PROGBITS:
	case SHT_RELA:
	case SHT_REL:
	case 19: /* SHT_RELR, newer than Debian 12's <elf.h> */
	case SHT_INIT_ARRAY:
	case SHT_FINI_ARRAY:
	case SHT_PREINIT_ARRAY:
	case SHT_X86_64_UNWIND: /* .eh_frame, where the ABI gives it its own type */
	case SHT_HASH:
	case SHT_GNU_HASH:
	case SHT_GNU_versym:
	case SHT_GNU_verdef:
	case SHT_GNU_verneed:
		return true;
	default:
		return false;
	}
}

/* Code, and the debug sections no reader of ours or libdw's looks at. */
static bool never_read(const GElf_Shdr *sh, const char *name, bool go)
{
	if (sh->sh_flags & SHF_EXECINSTR)
		return true;
	if (!go && loaded_data(sh, name))
		return true;
	return name && (!strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8)) &&
	       debug_section_unread(name);
}

/*
 * The whole pages of the sections never read (never_read()). Left unread,
 * they are pages of zeros that cost no memory. One whose bytes another
 * section shares (a corrupt file) is read.
 */
static size_t unread_ranges(const struct lidia_elf *e, struct range *out, uint64_t page)
{
	Elf_Scn *scn = NULL;
	size_t n = 0, shstrndx;
	bool go;

	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return 0;
	go = go_image(e, shstrndx);
	while (n < MAX_UNREAD && (scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		uint64_t lo, hi;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !never_read(&sh, elf_strptr(e->elf, shstrndx, sh.sh_name), go) ||
		    sh.sh_offset > e->size || sh.sh_size > e->size - sh.sh_offset)
			continue;
		lo = (sh.sh_offset + page - 1) & ~(page - 1);
		hi = (sh.sh_offset + sh.sh_size) & ~(page - 1);
		if (hi > lo && !shares_bytes(e, &sh))
			out[n++] = (struct range){ lo, hi };
	}
	return n;
}

/* All of [lo, hi) into buf at lo; a read that comes back short: the file was cut. */
static int read_all(int fd, unsigned char *buf, uint64_t lo, uint64_t hi)
{
	huge_advise(buf + lo, hi - lo); /* only what is read: sections skipped take no memory */
	while (lo < hi) {
		ssize_t got = pread(fd, buf + lo, (size_t)(hi - lo), (off_t)lo);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return LIDIA_E_ELF_CHANGED;
		lo += (uint64_t)got;
	}
	return 0;
}

/* [lo, hi) into buf, but for the code ranges (in any order, may overlap). */
static int read_span(int fd, unsigned char *buf, uint64_t lo, uint64_t hi, const struct range *code,
		     size_t ncode)
{
	while (lo < hi) {
		uint64_t end = hi, skip_to = lo;
		int err;

		for (size_t i = 0; i < ncode; i++) {
			if (code[i].lo <= lo && lo < code[i].hi && code[i].hi > skip_to)
				skip_to = code[i].hi; /* lo is in one: past it */
			else if (code[i].lo > lo && code[i].lo < end)
				end = code[i].lo; /* read up to the next */
		}
		if (skip_to > lo) {
			lo = skip_to;
			continue;
		}
		if ((err = read_all(fd, buf, lo, end)))
			return err;
		lo = end;
	}
	return 0;
}

/* The file's data in [from, to), hole by hole (a sparse file's holes stay pages of zeros, never touched). */
static int read_range(const struct lidia_elf *e, unsigned char *buf, uint64_t from, uint64_t to,
		      const struct range *code, size_t ncode)
{
	uint64_t pos = from;

	while (pos < to) {
		off_t data = lseek(e->fd, (off_t)pos, SEEK_DATA), hole;
		int err;

		if (data < 0 && errno == ENXIO)
			return 0; /* a hole to the end (or the file was cut: checked after) */
		if (data < 0)
			data = (off_t)pos; /* no SEEK_DATA here: all of it is data */
		hole = lseek(e->fd, data, SEEK_HOLE);
		if (hole < 0 || (uint64_t)hole > to)
			hole = (off_t)to;
		if ((uint64_t)data >= to)
			return 0;
		if ((err = read_span(e->fd, buf, (uint64_t)data, (uint64_t)hole, code, ncode)))
			return err;
		pos = (uint64_t)hole;
	}
	return 0;
}

static int read_data(const struct lidia_elf *e, unsigned char *buf, const struct range *code,
		     size_t ncode)
{
	return read_range(e, buf, 0, e->size, code, ncode);
}

/* From this size, with a second thread, the file is read in two halves side by side. */
#define HALVES_MIN (64u << 20)

struct half_read {
	const struct lidia_elf *e;
	unsigned char *buf;
	uint64_t from, to;
	const struct range *code;
	size_t ncode;
	int err;
};

static void *read_half(void *arg)
{
	struct half_read *h = arg;

	h->err = read_range(h->e, h->buf, h->from, h->to, h->code, h->ncode);
	return NULL;
}

/*
 * read_data(), the second half on a thread of its own: copying the bytes
 * and making the pages they go to is most of a big file's reading, and the
 * other thread has nothing to do yet (pread and SEEK_DATA leave the shared
 * descriptor's offset alone).
 */
static int read_data_threads(const struct lidia_elf *e, unsigned char *buf,
			     const struct range *code, size_t ncode, unsigned threads)
{
	uint64_t mid = (e->size / 2) & ~(uint64_t)0xfff;
	struct half_read second = { e, buf, mid, e->size, code, ncode, 0 };
	pthread_t tid;
	int err;

	if (threads < 2 || e->size < HALVES_MIN || pthread_create(&tid, NULL, read_half, &second))
		return read_data(e, buf, code, ncode);
	err = read_range(e, buf, 0, mid, code, ncode);
	pthread_join(tid, NULL);
	return err ? err : second.err;
}

/* Again, the bytes of pages given back: the file must not have changed since. */
static int read_again(struct lidia_elf *e)
{
	struct range unread[MAX_UNREAD];
	size_t n = unread_ranges(e, unread, (uint64_t)sysconf(_SC_PAGESIZE));
	int err = read_data(e, e->map, unread, n);

	if (!err)
		err = lidia_elf_check(e);
	if (!err)
		e->map_dropped = false;
	return err;
}

int elf_image_load_threads(struct lidia_elf *e, unsigned threads)
{
	struct range unread[MAX_UNREAD];
	unsigned char *buf;
	size_t n;
	Elf *elf;
	int err;

	if (e->loaded && e->map_dropped)
		return read_again(e);
	if (!e->lazy)
		return 0;
	n = unread_ranges(e, unread, (uint64_t)sysconf(_SC_PAGESIZE));
	buf = huge_map(e->size, MAP_NORESERVE, false); /* read_all() advises what it reads */
	if (buf == MAP_FAILED)
		return -ENOMEM;
	err = read_data_threads(e, buf, unread, n, threads);
	if (!err)
		err = lidia_elf_check(e); /* a file rewritten in place reads whole, but mixed */
	if (!err && !(elf = elf_memory((char *)buf, e->size)))
		err = LIDIA_E_ELF;
	if (err) {
		munmap(buf, e->size);
		return err;
	}
	/* The descriptor stays: pages given back are read from it again. */
	elf_end(e->elf);
	e->elf = elf;
	e->lazy = false;
	e->map = buf;
	e->loaded = true;
	/* The same bytes as the headers checked when opened: checked again, cheaply. */
	return elf_image_check(e, true);
}

int elf_image_load(struct lidia_elf *e)
{
	return elf_image_load_threads(e, 1);
}

int elf_image_open(struct lidia_elf **out, const char *path, bool any_type)
{
	int err = elf_image_open_lazy(out, path, any_type);

	if (!err && (err = elf_image_load(*out))) {
		lidia_elf_close(*out);
		*out = NULL;
	}
	return err;
}
