/* SPDX-License-Identifier: Apache-2.0 */
/* Identify: Dwarfs that never open a dwz file by themselves (dwarf_begin.h). */
#include <elfutils/libdwelf.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf_begin.h"

/*
 * The stand-in: an ELF64 relocatable file of three sections (none, a
 * .debug_line of one byte, the section names), the least libdw begins a
 * Dwarf over. Its bytes mark it, so that dwarf_end_image() knows it.
 */
#define STUB_NAMES "\0.debug_line\0.shstrtab\0"
#define STUB_DATA_OFF (64 + 3 * 64)
#define STUB_SIZE (STUB_DATA_OFF + 1 + sizeof(STUB_NAMES))

static void put16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, unsigned v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

/* A section header: name offset, type, file offset, size (64-bit, little-endian). */
static void put_shdr(unsigned char *sh, unsigned name, unsigned type, unsigned off, unsigned size)
{
	put32(sh, name);
	put32(sh + 4, type);
	put32(sh + 24, off); /* sh_offset, the high half 0 */
	put32(sh + 32, size);
	put32(sh + 48, 1); /* sh_addralign */
}

static void make_stub(unsigned char *b)
{
	memset(b, 0, STUB_SIZE);
	memcpy(b,
	       "\x7f"
	       "ELF\x02\x01\x01",
	       7);
	put16(b + 16, 1);  /* ET_REL */
	put16(b + 18, 62); /* EM_X86_64: any will do */
	put32(b + 20, 1);  /* EV_CURRENT */
	put32(b + 40, 64); /* e_shoff */
	put16(b + 52, 64); /* e_ehsize */
	put16(b + 58, 64); /* e_shentsize */
	put16(b + 60, 3);  /* e_shnum */
	put16(b + 62, 2);  /* e_shstrndx */
	put_shdr(b + 128, 1, 1 /* SHT_PROGBITS */, STUB_DATA_OFF, 1);
	put_shdr(b + 192, 13, 3 /* SHT_STRTAB */, STUB_DATA_OFF + 1, sizeof(STUB_NAMES));
	memcpy(b + STUB_DATA_OFF + 1, STUB_NAMES, sizeof(STUB_NAMES));
}

static Dwarf *stub_begin(void)
{
	unsigned char *b = malloc(STUB_SIZE);
	Elf *elf;
	Dwarf *dw;

	if (!b)
		return NULL;
	make_stub(b);
	if (!(elf = elf_memory((char *)b, STUB_SIZE))) {
		free(b);
		return NULL;
	}
	if (!(dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL))) {
		elf_end(elf);
		free(b);
	}
	return dw;
}

static bool is_stub(Dwarf *dw)
{
	unsigned char want[STUB_SIZE];
	size_t n = 0;
	char *raw = elf_rawfile(dwarf_getelf(dw), &n);

	make_stub(want);
	return raw && n == STUB_SIZE && !memcmp(raw, want, STUB_SIZE);
}

static void stub_end(Dwarf *dw)
{
	Elf *elf = dwarf_getelf(dw);
	size_t n;
	char *raw = elf_rawfile(elf, &n);

	dwarf_end(dw);
	elf_end(elf);
	free(raw);
}

/* Whether elf's Dwarf names a dwz file (reads the section; opens nothing). */
static bool names_alt(Dwarf *dw)
{
	const char *name;
	const void *id;

	return dwelf_dwarf_gnu_debugaltlink(dw, &name, &id) > 0;
}

Dwarf *dwarf_begin_image(Elf *elf, Dwarf *alt)
{
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);

	if (!dw)
		return NULL;
	if (!alt && names_alt(dw) && !(alt = stub_begin())) {
		dwarf_end(dw); /* no stand-in (no memory): libdw would look for the file */
		return NULL;
	}
	if (alt)
		dwarf_setalt(dw, alt);
	return dw;
}

void dwarf_end_image(Dwarf *dw)
{
	Dwarf *alt;

	if (!dw)
		return;
	/* Set whenever the file names one, so asking never makes libdw look. */
	alt = names_alt(dw) ? dwarf_getalt(dw) : NULL;
	dwarf_end(dw);
	if (alt && is_stub(alt))
		stub_end(alt);
}
