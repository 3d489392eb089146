// SPDX-License-Identifier: Apache-2.0
/*
 * bench/dwarf_floor FILE [ALT]: the floor issue 26 sets a DWARF conversion
 * against, "one inflate of the compressed sections plus one pass over the
 * DWARF", measured with other people's code: libdeflate inflating every
 * zlib'd debug section a converter must read (those lidiagen reads, by
 * the library's own list: not the location lists, macros, lookup tables
 * or call frames), then libdw visiting every DIE of every unit
 * (dwarf_child, dwarf_siblingof) and decoding every unit's line program
 * (dwarf_getsrclines). ALT is FILE's dwz file, read the same way. Prints
 * the CPU seconds of the inflating, of the DIEs and of the line programs,
 * then the bytes inflated, the DIEs and the line rows. Reading the files
 * and handing libdw the inflated sections are not counted. Built by
 * speed_aims.sh against build/liblidia-internal.a.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libdeflate.h>

#include "debug_sections.h"

struct file {
	int fd;
	Elf *elf;
	Dwarf *dw;
};

static double cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The sections lidiagen reads: the library's own list of those it skips. */
static int wanted(const char *n)
{
	return n && !strncmp(n, ".debug_", 7) && !debug_section_unread(n);
}

/* Inflates every wanted gABI zlib section of f with libdeflate; its CPU seconds. */
static double inflate_all(struct file *f, size_t *bytes)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	double t, spent = 0;

	if (!d || elf_getshdrstrndx(f->elf, &shstrndx))
		exit(1);
	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		Elf_Data *raw;
		void *out;
		size_t hdr, done;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED) ||
		    !wanted(elf_strptr(f->elf, shstrndx, sh.sh_name)) || !(raw = elf_rawdata(scn, NULL)))
			continue;
		if (!gelf_getchdr(scn, &ch) || ch.ch_type != ELFCOMPRESS_ZLIB)
			continue;
		hdr = gelf_getclass(f->elf) == ELFCLASS64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
		if (!(out = malloc(ch.ch_size ? ch.ch_size : 1)))
			exit(1);
		memset(out, 0, ch.ch_size); /* its pages made before the clock starts */
		t = cpu_seconds();
		if (libdeflate_zlib_decompress(d, (const char *)raw->d_buf + hdr, raw->d_size - hdr, out,
					       ch.ch_size, &done) != LIBDEFLATE_SUCCESS ||
		    done != ch.ch_size) {
			fprintf(stderr, "dwarf_floor: cannot inflate a section\n");
			exit(1);
		}
		spent += cpu_seconds() - t;
		*bytes += done;
		free(out);
	}
	libdeflate_free_decompressor(d);
	return spent;
}

static void open_file(struct file *f, const char *path)
{
	if ((f->fd = open(path, O_RDONLY)) < 0 || !(f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL))) {
		fprintf(stderr, "dwarf_floor: cannot read %s\n", path);
		exit(1);
	}
}

/* Hands libdw f's sections inflated (by libelf, not timed). */
static void inflate_for_libdw(struct file *f)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(f->elf, &shstrndx))
		exit(1);
	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
		    wanted(elf_strptr(f->elf, shstrndx, sh.sh_name)))
			elf_compress(scn, 0, 0);
	}
}

/* Every DIE under die, and die: their count. */
static size_t visit(Dwarf_Die *die)
{
	Dwarf_Die child;
	size_t n = 1;

	if (dwarf_child(die, &child) != 0)
		return n;
	do
		n += visit(&child);
	while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

/* One pass over f's units: their DIEs and line programs; the CPU seconds of the lines. */
static double pass(struct file *f, size_t *dies, size_t *rows)
{
	double lines_cpu = 0, t;

	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(f->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t n;
		Dwarf_Attribute a;

		if (dwarf_offdie(f->dw, off + hsize, &cu)) {
			*dies += visit(&cu);
			t = cpu_seconds();
			if (dwarf_attr(&cu, DW_AT_stmt_list, &a) &&
			    dwarf_getsrclines(&cu, &lines, &n) == 0)
				*rows += n;
			lines_cpu += cpu_seconds() - t;
		}
		off = next;
	}
	return lines_cpu;
}

int main(int argc, char **argv)
{
	struct file f[2] = { { 0 } };
	size_t bytes = 0, dies = 0, rows = 0;
	double inflate = 0, lines = 0, t;
	int n = argc - 1;

	if (n < 1 || n > 2) {
		fprintf(stderr, "usage: dwarf_floor FILE [DWZ-FILE]\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	for (int i = 0; i < n; i++) {
		open_file(&f[i], argv[i + 1]);
		inflate += inflate_all(&f[i], &bytes);
	}
	for (int i = 0; i < n; i++) {
		inflate_for_libdw(&f[i]);
		if (!(f[i].dw = dwarf_begin_elf(f[i].elf, DWARF_C_READ, NULL))) {
			fprintf(stderr, "dwarf_floor: no DWARF in %s\n", argv[i + 1]);
			return 1;
		}
	}
	if (n == 2)
		dwarf_setalt(f[0].dw, f[1].dw);
	t = cpu_seconds();
	for (int i = 0; i < n; i++)
		lines += pass(&f[i], &dies, &rows);
	t = cpu_seconds() - t;
	printf("%.4f %.4f %.4f %zu %zu %zu\n", inflate, t - lines, lines, bytes, dies, rows);
	return 0;
}
