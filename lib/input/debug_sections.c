/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Identify: the debug sections libdw reads, in an image of the extraction's
 * own when the one given is compressed (zstd inflated here; see the header).
 */
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "debug_sections.h"
#include "internal.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2 /* gABI; newer than Debian 12's <elf.h> */
#endif

/* An inflated section may be this much larger than its stream (a bomb otherwise). */
#define MAX_RATIO 256
#define MAX_INFLATED (4ull << 30)

/* Location lists and macros: never read, so never copied or inflated. */
static bool is_unread_name(const char *n)
{
	return !strncmp(n, ".debug_loc", 10) || !strncmp(n, ".debug_mac", 10) ||
	       !strncmp(n, ".zdebug_loc", 11) || !strncmp(n, ".zdebug_mac", 11);
}

static bool is_debug_name(const char *n)
{
	if (!n || is_unread_name(n))
		return false;
	return !strncmp(n, ".debug_", 7) || !strncmp(n, ".zdebug_", 8) ||
	       !strcmp(n, ".gnu_debugaltlink");
}

/* A section libdw would inflate when it opens the image (gABI or GNU .zdebug). */
static bool libdw_inflates(const char *n, const GElf_Shdr *sh)
{
	return n && sh->sh_type != SHT_NOBITS &&
	       ((sh->sh_flags & SHF_COMPRESSED) || !strncmp(n, ".zdebug", 7)) &&
	       (!strncmp(n, ".debug_", 7) || !strncmp(n, ".zdebug_", 8));
}

/* The zstd payload of a compressed section: its inflated size and stream. */
static bool zstd_payload(const struct lidia_elf *e, const GElf_Shdr *sh, const unsigned char *raw,
			 uint64_t *size, const unsigned char **src, uint64_t *src_len)
{
	bool is64 = e->ehdr.e_ident[EI_CLASS] == ELFCLASS64;
	size_t hdr = is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
	uint32_t type;

	/* Native byte order only (libdw reads no zstd either way). */
	if (e->ehdr.e_ident[EI_DATA] !=
	    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
		return false;
	if (!(sh->sh_flags & SHF_COMPRESSED) || sh->sh_size < hdr)
		return false;
	memcpy(&type, raw, 4);
	if (type != ELFCOMPRESS_ZSTD)
		return false;
	if (is64) {
		Elf64_Chdr c;

		memcpy(&c, raw, sizeof(c));
		*size = c.ch_size;
	} else {
		Elf32_Chdr c;

		memcpy(&c, raw, sizeof(c));
		*size = c.ch_size;
	}
	*src = raw + hdr;
	*src_len = sh->sh_size - hdr;
	return true;
}

void debug_sections_drop_pages(const struct lidia_elf *e, uint64_t off, uint64_t size)
{
	uintptr_t base = (uintptr_t)e->map, page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (base + off + page - 1) & ~(page - 1);
	uintptr_t hi = (base + off + size) & ~(page - 1);

	if (e->map && off <= e->size && size <= e->size - off && hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* The copy being made of an image's debug sections. */
struct copy {
	const struct lidia_elf *e;
	const unsigned char *file; /* e's bytes */
	bool is64, be;
	size_t shnum, shstrndx, shdr_size;
	uint64_t total; /* the copy's size: header, sections, section headers */
	unsigned char *buf;
};

/* Section i's header and name (NULL when it has none); false when unreadable. */
static bool section(const struct copy *c, size_t i, GElf_Shdr *sh, const char **name)
{
	Elf_Scn *scn = elf_getscn(c->e->elf, i);

	if (!scn || !gelf_getshdr(scn, sh))
		return false;
	*name = elf_strptr(c->e->elf, c->shstrndx, sh->sh_name);
	return true;
}

/* Whether section i's bytes go into the copy: a debug section with contents, or the names. */
static bool copied(const struct copy *c, size_t i, const GElf_Shdr *sh, const char *name)
{
	const struct lidia_elf *e = c->e;

	return i != 0 && sh->sh_type != SHT_NOBITS && sh->sh_offset <= e->size &&
	       sh->sh_size <= e->size - sh->sh_offset && (is_debug_name(name) || i == c->shstrndx);
}

/*
 * The copy's size, and whether one is needed: 1 when it is, 0 when not, or
 * LIDIA_E_ELF for a zstd bomb or sections that overlap.
 */
static int measure(struct copy *c, bool borrowed)
{
	const struct lidia_elf *e = c->e;
	uint64_t inflated = 0, bytes = 0;
	bool zstd = false, compressed = false;

	c->total = e->ehdr.e_ehsize;
	for (size_t i = 1; i < c->shnum; i++) {
		const unsigned char *src;
		uint64_t size, src_len;
		const char *n;
		GElf_Shdr sh;

		if (!section(c, i, &sh, &n))
			return 0;
		compressed |= libdw_inflates(n, &sh);
		if (!copied(c, i, &sh, n))
			continue;
		if (zstd_payload(e, &sh, c->file + sh.sh_offset, &size, &src, &src_len)) {
			/*
			 * Per section and over the file: sections may share one stream
			 * (in a corrupt file), and each would be inflated on its own.
			 */
			if (size > MAX_INFLATED || size / MAX_RATIO > src_len ||
			    (inflated += size) > MAX_INFLATED || inflated / MAX_RATIO > e->size)
				return LIDIA_E_ELF;
			zstd = true;
		} else {
			size = sh.sh_size;
			bytes += size;
		}
		c->total += 8 + size;
	}
	if (!zstd && !(borrowed && compressed))
		return 0;
	if (bytes > e->size)
		return LIDIA_E_ELF; /* sections that overlap (corrupt): copies without end */
	c->total += 8 + c->shnum * c->shdr_size;
	return 1;
}

/* Copy (or inflate) a section's bytes to off in the copy; sh becomes the copy's header. */
static int copy_section(struct copy *c, GElf_Shdr *sh, const char *name, uint64_t off)
{
	const struct lidia_elf *e = c->e;
	const unsigned char *src;
	uint64_t size, src_len;

	if (zstd_payload(e, sh, c->file + sh->sh_offset, &size, &src, &src_len)) {
		size_t got = ZSTD_decompress(c->buf + off, size, src, src_len);

		if (ZSTD_isError(got) || got != size) {
			lidia_log(LIDIA_LOG_WARN, "%s: section '%s': zstd: %s", e->name, name,
				  ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short stream");
			return LIDIA_E_ELF;
		}
		debug_sections_drop_pages(e, sh->sh_offset, sh->sh_size);
		sh->sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
		sh->sh_size = size;
	} else {
		memcpy(c->buf + off, c->file + sh->sh_offset, sh->sh_size);
		if (libdw_inflates(name, sh))
			debug_sections_drop_pages(e, sh->sh_offset, sh->sh_size);
	}
	sh->sh_offset = off;
	return 0;
}

/* n bytes of v at p, in the image's byte order. */
static void put(unsigned char *p, uint64_t v, unsigned n, bool be)
{
	for (unsigned i = 0; i < n; i++, v >>= 8)
		p[be ? n - 1 - i : i] = (unsigned char)v;
}

/* An Elf32_Shdr or Elf64_Shdr at p, in the image's byte order. */
static void put_shdr(unsigned char *p, const GElf_Shdr *sh, bool is64, bool be)
{
	unsigned w = is64 ? 8 : 4; /* flags, addr, offset, size, addralign, entsize */

	put(p, sh->sh_name, 4, be);
	put(p + 4, sh->sh_type, 4, be);
	put(p + 8, sh->sh_flags, w, be);
	put(p + 8 + w, sh->sh_addr, w, be);
	put(p + 8 + 2 * w, sh->sh_offset, w, be);
	put(p + 8 + 3 * w, sh->sh_size, w, be);
	put(p + 8 + 4 * w, sh->sh_link, 4, be);
	put(p + 12 + 4 * w, sh->sh_info, 4, be);
	put(p + 16 + 4 * w, sh->sh_addralign, w, be);
	put(p + 16 + 5 * w, sh->sh_entsize, w, be);
}

/*
 * The copy: e's file header, the sections that go in (8-aligned), then
 * every section header, those left out as NOBITS; no program headers.
 */
static int fill(struct copy *c)
{
	const struct lidia_elf *e = c->e;
	uint64_t off = e->ehdr.e_ehsize, shoff = c->total - c->shnum * c->shdr_size;
	int err;

	memcpy(c->buf, c->file, e->ehdr.e_ehsize);
	for (size_t i = 0; i < c->shnum; i++) {
		const char *n = NULL;
		GElf_Shdr sh;

		section(c, i, &sh, &n);
		if (i == 0) {
			/* Section 0 holds the counts of extended numbering: keep it. */
		} else if (!copied(c, i, &sh, n)) {
			/* Not for libdw: keep the header, drop the bytes. */
			if (sh.sh_type != SHT_NULL)
				sh.sh_type = SHT_NOBITS;
			sh.sh_offset = 0;
		} else {
			off = (off + 7) & ~7ull;
			if ((err = copy_section(c, &sh, n, off)))
				return err;
			off += sh.sh_size;
		}
		put_shdr(c->buf + shoff + i * c->shdr_size, &sh, c->is64, c->be);
	}
	/* e_phoff, e_shoff and e_phnum. */
	put(c->buf + (c->is64 ? 0x20 : 0x1c), 0, c->is64 ? 8 : 4, c->be);
	put(c->buf + (c->is64 ? 0x28 : 0x20), shoff, c->is64 ? 8 : 4, c->be);
	put(c->buf + (c->is64 ? 0x38 : 0x2c), 0, 2, c->be);
	return 0;
}

int debug_sections_inflate(const struct lidia_elf *e, bool borrowed, struct lidia_elf **out)
{
	struct copy c = {
		.e = e,
		.file = (const unsigned char *)elf_rawfile(e->elf, NULL),
		.is64 = e->ehdr.e_ident[EI_CLASS] == ELFCLASS64,
		.be = e->ehdr.e_ident[EI_DATA] == ELFDATA2MSB,
	};
	int err;

	*out = NULL;
	c.shdr_size = c.is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	if (!c.file || elf_getshdrnum(e->elf, &c.shnum) || elf_getshdrstrndx(e->elf, &c.shstrndx))
		return 0;
	if ((err = measure(&c, borrowed)) <= 0)
		return err;
	/* The copy starts with e's header, whose fields it then sets. */
	if (e->ehdr.e_ehsize < (c.is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)) ||
	    e->ehdr.e_ehsize > e->size)
		return LIDIA_E_ELF;
	/* A mapping of its own: its pages can be given back once libdw has read them. */
	c.buf = mmap(NULL, c.total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c.buf == MAP_FAILED)
		return -ENOMEM;
	if (!(err = fill(&c)) && !(err = elf_image_open_mem(out, c.buf, c.total, e->name, true))) {
		(*out)->map = c.buf;
		return 0;
	}
	munmap(c.buf, c.total);
	return err;
}
