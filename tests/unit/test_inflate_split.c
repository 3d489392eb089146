/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One zlib stream inflated in two parts (lib/input/inflate_split.c,
 * inflate_marked.c), held to libdeflate's own inflating of the same
 * stream: streams libdeflate's compressor made at three levels of data
 * that compresses as DWARF does, with incompressible stretches (stored
 * blocks) and with copies that keep reaching back before the boundary
 * (markers that never end: the split must decline), split at several
 * places, both parts on two threads; then streams with a bit flipped, cut
 * short or lengthened, which the split must refuse unless libdeflate
 * inflates them to the same bytes. Last, the split as debug_sections.c
 * runs it on a section of 40 MiB, against the same image on one thread.
 */
#include <elf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libdeflate.h>

#include "debug_sections.h"
#include "elf_image.h"
#include "elf_load.h"
#include "inflate_split.h"
#include "unit.h"

static uint64_t seed = 0x9e3779b97f4a7c15ull;

/* Words drawn from a small vocabulary, numbers among them: compresses about as DWARF does. */
static void fill_text(unsigned char *p, size_t n)
{
	static const char *const words[] = { "DW_TAG_subprogram ",   "std::vector<int> ",
					     "operator== ",	     "_ZN4llvm5Value",
					     "/usr/include/c++/12/", "basic_string ",
					     "\x01\x13\x00",	     "\x2e\x3a\x0b" };
	size_t i = 0;

	while (i < n) {
		uint64_t r = unit_next_random(&seed);
		const char *w = words[r % 8];
		size_t len = strlen(w) ? strlen(w) : 3;

		if ((r >> 8) % 5 == 0) {
			p[i++] = (unsigned char)(r >> 16);
			continue;
		}
		for (size_t k = 0; k < len && i < n; k++)
			p[i++] = (unsigned char)w[k];
	}
}

/* Text, with stretches of random bytes (libdeflate stores those as they are). */
static void fill_mixed(unsigned char *p, size_t n)
{
	fill_text(p, n);
	for (size_t at = 100000; at + 70000 < n; at += 400000)
		for (size_t k = 0; k < 70000; k++)
			p[at + k] = (unsigned char)unit_next_random(&seed);
}

/* 20 KiB of random bytes over and over: every copy reaches back 20 KiB, markers never end. */
static void fill_echo(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = i < 20480 ? (unsigned char)unit_next_random(&seed) : p[i - 20480];
}

/* A zlib stream of data[0, n), at level; its length in *len. */
static unsigned char *compress(const unsigned char *data, size_t n, int level, size_t *len)
{
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
	size_t bound = libdeflate_zlib_compress_bound(c, n);
	unsigned char *z = malloc(bound);

	*len = libdeflate_zlib_compress(c, data, n, z, bound);
	libdeflate_free_compressor(c);
	return z;
}

static void *run_second(void *s)
{
	inflate_split_second(s);
	return NULL;
}

/*
 * The split of z, from share of it from its end, both parts on two threads:
 * 1 when it inflated to what libdeflate makes of z (which must then
 * succeed), 0 when declined or refused, -1 when it differs.
 */
static int split(unsigned char *z, size_t len, size_t size, double share)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	unsigned char *out = malloc(size), *ref = malloc(size), *before = malloc(len);
	struct inflate_split s;
	pthread_t tid;
	int r = 0;

	memset(out, 0xa5, size);
	memcpy(before, z, len);
	if (inflate_split_plan(&s, z, len, out, size, share)) {
		pthread_create(&tid, NULL, run_second, &s);
		inflate_split_first(&s);
		pthread_join(tid, NULL);
		if (inflate_split_end(&s))
			r = libdeflate_zlib_decompress(d, z, len, ref, size, NULL) ==
						    LIBDEFLATE_SUCCESS &&
					    !memcmp(out, ref, size)
				    ? 1
				    : -1;
		if (memcmp(before, z, len))
			r = -1; /* the bytes written over are not put back */
	}
	libdeflate_free_decompressor(d);
	free(out);
	free(ref);
	free(before);
	return r;
}

static void adler_join(void)
{
	size_t n = 1 << 20, bad = 0;
	unsigned char *p = malloc(n);

	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)unit_next_random(&seed);
	p[7] = 0xff;
	for (int k = 0; k < 200; k++) {
		size_t cut = k < 2 ? (k ? n : 0) : unit_next_random(&seed) % n;
		uint32_t a = libdeflate_adler32(1, p, cut),
			 b = libdeflate_adler32(1, p + cut, n - cut);

		bad += adler32_join(a, b, n - cut) != libdeflate_adler32(1, p, n);
	}
	CHECK(!bad, "adler32_join: the sum of a || b from theirs, 200 cuts (%zu differ)", bad);
	free(p);
}

static void good_streams(void)
{
	static const double shares[] = { 0.1, 0.3, 0.5, 0.9 };
	void (*fills[])(unsigned char *, size_t) = { fill_text, fill_mixed };
	static const char *const names[] = { "text", "text and random" };
	size_t n = 3 << 20;
	unsigned char *data = malloc(n);

	for (int f = 0; f < 2; f++) {
		fills[f](data, n);
		for (int level = 1; level <= 12; level += 5) {
			size_t len, done = 0, wrong = 0;
			unsigned char *z = compress(data, n, level, &len);

			for (size_t k = 0; k < 4; k++) {
				int r = split(z, len, n, shares[k]);

				done += r == 1;
				wrong += r < 0;
			}
			/* From 10% before the end, the boundary may be in the last block: none. */
			CHECK(!wrong && done >= 3,
			      "%s, level %d: split at 4 places, each the same bytes as "
			      "libdeflate's "
			      "(%zu split, %zu differ)",
			      names[f], level, done, wrong);
			free(z);
		}
	}
	free(data);
}

/* Copies that reach before the boundary for ever: the second part's wide output overflows. */
static void endless_markers(void)
{
	size_t n = 24 << 20, len;
	unsigned char *data = malloc(n), *z;
	int r;

	fill_echo(data, n);
	z = compress(data, n, 6, &len);
	r = split(z, len, n, 0.9);
	CHECK(r == 0, "markers that never end: the split declines (got %d)", r);
	free(z);
	free(data);
}

/* Bit flips, a stream cut short or made longer: refused, unless libdeflate agrees. */
static void bad_streams(void)
{
	size_t n = 1 << 20, len, wrong = 0, refused = 0;
	unsigned char *data = malloc(n), *z;

	fill_text(data, n);
	z = compress(data, n, 6, &len);
	for (int k = 0; k < 60; k++) {
		size_t at = 2 + unit_next_random(&seed) % (len - 2);
		unsigned char bit = (unsigned char)(1u << (unit_next_random(&seed) % 8));
		int r;

		z[at] ^= bit;
		r = split(z, len, n, 0.5);
		wrong += r < 0;
		refused += r == 0;
		z[at] ^= bit;
	}
	CHECK(!wrong && refused > 50,
	      "60 bit flips: never other bytes than libdeflate's (%zu "
	      "refused, %zu differ)",
	      refused, wrong);
	CHECK(split(z, len - 5, n, 0.5) == 0, "a stream cut short: refused");
	CHECK(split(z, len, n + 1, 0.5) == 0 && split(z, len, n - 1, 0.5) == 0,
	      "a stream one byte longer or shorter than its size says: refused");
	z[1] ^= 0x20; /* FDICT: a preset dictionary, which libdeflate refuses */
	CHECK(split(z, len, n, 0.5) == 0, "a zlib header with a dictionary: refused");
	free(z);
	free(data);
}

/* A 64-bit little-endian ELF of one section, .debug_info, of n bytes zlib'd. */
static unsigned char *elf_with(const unsigned char *z, size_t zlen, size_t n, size_t *size)
{
	static const char names[] = "\0.debug_info\0.shstrtab";
	size_t info = 64, strs = (info + sizeof(Elf64_Chdr) + zlen + 7) & ~(size_t)7;
	size_t shoff = (strs + sizeof(names) + 7) & ~(size_t)7;
	unsigned char *p;
	Elf64_Ehdr eh = { .e_type = ET_REL,
			  .e_machine = EM_X86_64,
			  .e_version = EV_CURRENT,
			  .e_shoff = shoff,
			  .e_ehsize = 64,
			  .e_shentsize = sizeof(Elf64_Shdr),
			  .e_shnum = 3,
			  .e_shstrndx = 2 };
	Elf64_Shdr sh[3] = { { 0 },
			     { .sh_name = 1,
			       .sh_type = SHT_PROGBITS,
			       .sh_flags = SHF_COMPRESSED,
			       .sh_offset = info,
			       .sh_size = sizeof(Elf64_Chdr) + zlen,
			       .sh_addralign = 8 },
			     { .sh_name = 13,
			       .sh_type = SHT_STRTAB,
			       .sh_offset = strs,
			       .sh_size = sizeof(names),
			       .sh_addralign = 1 } };
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = n, .ch_addralign = 1 };

	*size = shoff + sizeof(sh);
	p = calloc(1, *size);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(p, &eh, sizeof(eh));
	memcpy(p + info, &ch, sizeof(ch));
	memcpy(p + info + sizeof(ch), z, zlen);
	memcpy(p + strs, names, sizeof(names));
	memcpy(p + shoff, sh, sizeof(sh));
	return p;
}

/*
 * .debug_info's bytes in the image debug_sections_inflate() made on threads
 * threads of the file path, read in as lidiagen reads a file.
 */
static bool inflated_same(const char *path, unsigned threads, const unsigned char *data, size_t n)
{
	struct lidia_elf *e = NULL, *out = NULL;
	bool same = false;
	Elf_Scn *scn = NULL;

	if (elf_image_open(&e, path, true) ||
	    debug_sections_inflate(e, true, threads, NULL, &out) || !out)
		goto done;
	while ((scn = elf_nextscn(out->elf, scn))) {
		Elf_Data *d = elf_rawdata(scn, NULL);
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_name == 1 && d)
			same = d->d_size == n && !(sh.sh_flags & SHF_COMPRESSED) &&
			       !memcmp(d->d_buf, data, n);
	}
done:
	lidia_elf_close(out);
	lidia_elf_close(e);
	return same;
}

static void in_debug_sections(void)
{
	char path[] = "/tmp/lidia-test-inflate.XXXXXX";
	size_t n = 40 << 20, zlen, size;
	unsigned char *data = malloc(n), *z, *image;
	int fd = mkstemp(path);
	bool written;

	/* Random stretches: the second part's markers end (in text alone they go on, as in echo). */
	fill_mixed(data, n);
	z = compress(data, n, 6, &zlen);
	image = elf_with(z, zlen, n, &size);
	written = fd >= 0 && write(fd, image, size) == (ssize_t)size;
	CHECK(written, "the test's ELF file written");
	CHECK(inflated_same(path, 2, data, n),
	      "a 40 MiB .debug_info inflated on two threads (split): its bytes");
	CHECK(inflated_same(path, 1, data, n), "the same on one thread");
	if (fd >= 0)
		close(fd);
	unlink(path);
	free(image);
	free(z);
	free(data);
}

int main(void)
{
	elf_version(EV_CURRENT);
	adler_join();
	good_streams();
	endless_markers();
	bad_streams();
	in_debug_sections();
	return unit_exit();
}
