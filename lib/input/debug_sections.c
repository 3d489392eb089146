/* SPDX-License-Identifier: Apache-2.0 */
/* Identify: debug sections compressed with zstd, inflated for libdw (see the header). */
#include <zstd.h>

#include "debug_sections.h"
#include "internal.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2 /* gABI; newer than Debian 12's <elf.h> */
#endif

/* An inflated section may be this much larger than its stream (a bomb otherwise). */
#define MAX_RATIO 256
#define MAX_INFLATED (4ull << 30)

static bool is_debug_name(const char *n)
{
	/* Location lists and macros are never read: left out of the copy. */
	if (n && (!strncmp(n, ".debug_loc", 10) || !strncmp(n, ".debug_mac", 10)))
		return false;
	return n && (!strncmp(n, ".debug_", 7) || !strncmp(n, ".zdebug_", 8) ||
		     !strcmp(n, ".gnu_debugaltlink"));
}

/* The zstd payload of a compressed section: its inflated size and stream. */
static bool zstd_payload(const struct lidia_elf *e, const GElf_Shdr *sh, const unsigned char *raw,
			 uint64_t *size, const unsigned char **src, uint64_t *src_len)
{
	bool is64 = e->ehdr.e_ident[EI_CLASS] == ELFCLASS64;
	size_t hdr = is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
	uint32_t type;

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

int debug_sections_inflate(const struct lidia_elf *e, struct lidia_elf **out)
{
	const unsigned char *file = (const unsigned char *)elf_rawfile(e->elf, NULL);
	bool is64 = e->ehdr.e_ident[EI_CLASS] == ELFCLASS64;
	size_t shnum, shstrndx, shdr_size = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	uint64_t total, off, inflated = 0, copied = 0;
	unsigned char *buf = NULL;
	bool any = false;
	int err = 0;

	*out = NULL;
	/* Native byte order only: the copy's headers are written as host structs. */
	if (!file || e->ehdr.e_ident[EI_DATA] !=
			     (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
		return 0;
	if (elf_getshdrnum(e->elf, &shnum) || elf_getshdrstrndx(e->elf, &shstrndx))
		return 0;

	/* First: is there anything to inflate, and how big is the copy? */
	total = e->ehdr.e_ehsize;
	for (size_t i = 1; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(e->elf, i);
		const unsigned char *src;
		uint64_t size, src_len;
		GElf_Shdr sh;
		const char *n;

		if (!scn || !gelf_getshdr(scn, &sh))
			return 0;
		n = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_NOBITS || sh.sh_offset > e->size ||
		    sh.sh_size > e->size - sh.sh_offset || (!is_debug_name(n) && i != shstrndx))
			continue;
		if (zstd_payload(e, &sh, file + sh.sh_offset, &size, &src, &src_len)) {
			/*
			 * Per section and over the file: sections may share one stream
			 * (in a corrupt file), and each would be inflated on its own.
			 */
			if (size > MAX_INFLATED || size / MAX_RATIO > src_len ||
			    (inflated += size) > MAX_INFLATED || inflated / MAX_RATIO > e->size)
				return LIDIA_E_ELF;
			any = true;
		} else {
			size = sh.sh_size;
			copied += size;
		}
		total += 8 + size;
	}
	if (!any)
		return 0;
	if (copied > e->size)
		return LIDIA_E_ELF; /* sections that overlap (corrupt): copies without end */
	total += 8 + shnum * shdr_size;
	buf = calloc(1, total);
	if (!buf)
		return -ENOMEM;

	memcpy(buf, file, e->ehdr.e_ehsize);
	off = e->ehdr.e_ehsize;
	for (size_t i = 0; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(e->elf, i);
		const unsigned char *src;
		uint64_t size, src_len;
		GElf_Shdr sh;
		const char *n;

		gelf_getshdr(scn, &sh);
		n = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (i == 0) {
			/* Section 0 holds the counts of extended numbering: keep it. */
		} else if (sh.sh_type == SHT_NOBITS || sh.sh_offset > e->size ||
			   sh.sh_size > e->size - sh.sh_offset || (!is_debug_name(n) && i != shstrndx)) {
			/* Not for libdw: keep the header, drop the bytes. */
			if (sh.sh_type != SHT_NULL)
				sh.sh_type = SHT_NOBITS;
			sh.sh_offset = 0;
		} else {
			off = (off + 7) & ~7ull;
			if (zstd_payload(e, &sh, file + sh.sh_offset, &size, &src, &src_len)) {
				size_t got = ZSTD_decompress(buf + off, size, src, src_len);

				if (ZSTD_isError(got) || got != size) {
					lidia_log(LIDIA_LOG_WARN, "%s: section '%s': zstd: %s", e->name, n,
						  ZSTD_isError(got) ? ZSTD_getErrorName(got)
								    : "short stream");
					err = LIDIA_E_ELF;
					goto fail;
				}
				sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
				sh.sh_size = size;
			} else {
				memcpy(buf + off, file + sh.sh_offset, sh.sh_size);
				size = sh.sh_size;
			}
			sh.sh_offset = off;
			off += size;
		}
		if (is64) {
			Elf64_Shdr s = { sh.sh_name, sh.sh_type,   sh.sh_flags, sh.sh_addr, sh.sh_offset,
					 sh.sh_size, sh.sh_link,   sh.sh_info,	sh.sh_addralign,
					 sh.sh_entsize };

			memcpy(buf + total - shnum * shdr_size + i * shdr_size, &s, sizeof(s));
		} else {
			Elf32_Shdr s = { sh.sh_name,	       sh.sh_type,	      (Elf32_Word)sh.sh_flags,
					 (Elf32_Addr)sh.sh_addr, (Elf32_Off)sh.sh_offset, (Elf32_Word)sh.sh_size,
					 sh.sh_link,	       sh.sh_info,	      (Elf32_Word)sh.sh_addralign,
					 (Elf32_Word)sh.sh_entsize };

			memcpy(buf + total - shnum * shdr_size + i * shdr_size, &s, sizeof(s));
		}
	}
	/* The section headers go last; no program headers. */
	if (is64) {
		Elf64_Ehdr *h = (Elf64_Ehdr *)buf;

		h->e_shoff = total - shnum * shdr_size;
		h->e_phoff = 0;
		h->e_phnum = 0;
	} else {
		Elf32_Ehdr *h = (Elf32_Ehdr *)buf;

		h->e_shoff = (Elf32_Off)(total - shnum * shdr_size);
		h->e_phoff = 0;
		h->e_phnum = 0;
	}
	err = elf_image_open_mem(out, buf, total, e->name, true);
	if (err)
		goto fail;
	(*out)->owned = buf;
	return 0;
fail:
	free(buf);
	return err;
}
