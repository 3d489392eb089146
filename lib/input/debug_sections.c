/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Identify: the debug sections libdw reads, in an image of the extraction's
 * own when the one given is compressed (gABI zstd and zlib inflated here, a
 * section per thread; see the header).
 */
#include <sys/mman.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zstd.h>

#include "debug_sections.h"
#include "huge_pages.h"
#include "inflate_split.h"
#include "internal.h"
#include "run_items.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2 /* gABI; newer than Debian 12's <elf.h> */
#endif

/* An inflated section may be this much larger than its stream (a bomb otherwise). */
#define MAX_RATIO 256
#define MAX_INFLATED (4ull << 30)

/*
 * Never read, so never copied or inflated: location lists and macros, the
 * name lookup tables (pubnames, names: the units are all read anyway) and
 * call frames. .debug_aranges is read: it says which unit's line program
 * describes which code (code_owners.c).
 */
bool debug_section_unread(const char *n)
{
	static const char *const unread[] = { "loc",	 "mac",	  "pubnames", "pubtypes",
					      "gnu_pub", "names", "frame" };

	n += !strncmp(n, ".zdebug_", 8) ? 8 : !strncmp(n, ".debug_", 7) ? 7 : 0;
	for (size_t i = 0; i < ARRAY_SIZE(unread); i++)
		if (!strncmp(n, unread[i], strlen(unread[i])))
			return true;
	return false;
}

static bool is_debug_name(const char *n)
{
	if (!n || debug_section_unread(n))
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

/* How a section's bytes reach the copy. */
enum how {
	AS_IS, /* copied (libdw inflates a GNU .zdebug section there) */
	ZSTD,  /* inflated here, or the image refused */
	ZLIB,  /* inflated here; copied as it is when that fails (libdw then decides) */
};

/*
 * A gABI compressed section's payload (native byte order only: libdw reads
 * no other): its inflated size and stream; AS_IS when it is none.
 */
static enum how payload(const struct lidia_elf *e, const GElf_Shdr *sh, const unsigned char *raw,
			uint64_t *size, const unsigned char **src, uint64_t *src_len)
{
	bool is64 = e->ehdr.e_ident[EI_CLASS] == ELFCLASS64;
	size_t hdr = is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
	uint32_t type;

	if (e->ehdr.e_ident[EI_DATA] !=
	    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
		return AS_IS;
	if (!(sh->sh_flags & SHF_COMPRESSED) || sh->sh_size < hdr)
		return AS_IS;
	memcpy(&type, raw, 4);
	if (type != ELFCOMPRESS_ZSTD && type != ELFCOMPRESS_ZLIB)
		return AS_IS;
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
	return type == ELFCOMPRESS_ZSTD ? ZSTD : ZLIB;
}

void debug_sections_drop_pages(const struct lidia_elf *e, uint64_t off, uint64_t size)
{
	uintptr_t base = (uintptr_t)e->map, page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (base + off + page - 1) & ~(page - 1);
	uintptr_t hi = (base + off + size) & ~(page - 1);

	if (!e->map || off > e->size || size > e->size - off || hi <= lo)
		return;
	/* Before the pages go: a file's bytes are then read in again (elf_image_load()). */
	if (e->loaded)
		__atomic_store_n((bool *)&e->map_dropped, true, __ATOMIC_RELAXED);
	madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* One section's bytes into the copy, on whichever thread takes it. */
struct job {
	size_t i;	  /* its index */
	const char *name; /* NULL when it has none */
	GElf_Shdr sh;	  /* its header in e */
	enum how how;
	uint64_t size;		  /* inflated (ZSTD, ZLIB) */
	const unsigned char *src; /* the stream (ZSTD, ZLIB) */
	uint64_t src_len;
	uint64_t off, room; /* where it goes in the copy, and how much it may take */
	bool done;	    /* inflated (ZSTD, ZLIB) */
	const char *why;    /* why a ZSTD one was not */
};

/* The copy being made of an image's debug sections. */
struct copy {
	const struct lidia_elf *e;
	const unsigned char *file; /* e's bytes */
	bool is64, be;
	size_t shnum, shstrndx, shdr_size;
	uint64_t total; /* the copy's size: header, sections, section headers */
	unsigned char *buf;
	struct job *jobs; /* the sections that go in, in index order */
	size_t njobs;
	struct job **order; /* the same, largest first: the order threads take them */
	bool prefault;	    /* order[0]'s pages made ready by another thread (prefault()) */
	bool split;	    /* order[0] inflated in two parts at once (inflate_split.h) */
	struct inflate_split parts;
	int (*guard)(void (*fn)(void *arg), void *arg);
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
 * The sections that go in (c->jobs), the copy's size, and whether one is
 * needed: 1 when it is, 0 when not, or LIDIA_E_ELF for a zstd bomb or
 * sections that overlap. A zlib section past the bounds is left to libdw.
 */
static int measure(struct copy *c, bool borrowed)
{
	const struct lidia_elf *e = c->e;
	uint64_t inflated = 0, bytes = 0;
	bool here = false, compressed = false;

	c->total = e->ehdr.e_ehsize;
	for (size_t i = 1; i < c->shnum; i++) {
		struct job *j = &c->jobs[c->njobs];

		if (!section(c, i, &j->sh, &j->name))
			return 0;
		compressed |= libdw_inflates(j->name, &j->sh);
		if (!copied(c, i, &j->sh, j->name))
			continue;
		j->i = i;
		j->how = payload(e, &j->sh, c->file + j->sh.sh_offset, &j->size, &j->src,
				 &j->src_len);
		/*
		 * Per section and over the file: sections may share one stream
		 * (in a corrupt file), and each would be inflated on its own.
		 */
		if (j->how != AS_IS &&
		    (j->size > MAX_INFLATED || j->size / MAX_RATIO > j->src_len ||
		     inflated + j->size > MAX_INFLATED ||
		     (inflated + j->size) / MAX_RATIO > e->size)) {
			if (j->how == ZSTD)
				return LIDIA_E_ELF;
			j->how = AS_IS;
		}
		if (j->how != AS_IS) {
			inflated += j->size;
			here = true;
		}
		if (j->how != ZSTD)
			bytes += j->sh.sh_size;
		/* A zlib section has room for its stream too: copied there if it fails. */
		j->room = j->how == AS_IS  ? j->sh.sh_size
			  : j->how == ZSTD ? j->size
					   : (j->size > j->sh.sh_size ? j->size : j->sh.sh_size);
		c->total += 8 + j->room;
		c->njobs++;
	}
	if (!here && !(borrowed && compressed))
		return 0;
	if (bytes > e->size)
		return LIDIA_E_ELF; /* sections that overlap (corrupt): copies without end */
	c->total += 8 + c->shnum * c->shdr_size;
	return 1;
}

/*
 * A zlib stream src inflated to exactly size bytes at dst. libdeflate, not
 * zlib: the inflated size is known (the compression header's), and a whole
 * buffer at once is what libdeflate is made for; it inflates DWARF 2.7
 * times as fast (a 270 MB .debug_info: 0.57 s against zlib's 1.55 s), and
 * this is a third of a conversion's time on zlib-compressed debug files.
 * It checks the Adler-32 as zlib does.
 */
static bool inflate_zlib(unsigned char *dst, uint64_t size, const unsigned char *src,
			 uint64_t src_len)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	enum libdeflate_result r;

	if (!d)
		return false;
	r = libdeflate_zlib_decompress(d, src, src_len, dst, size, NULL);
	libdeflate_free_decompressor(d);
	return r == LIBDEFLATE_SUCCESS;
}

/* Job j's bytes into the copy; e's pages of a compressed section are given back. */
static void run_job(struct copy *c, struct job *j)
{
	const struct lidia_elf *e = c->e;
	unsigned char *dst = c->buf + j->off;

	if (j->how == ZSTD) {
		size_t got = ZSTD_decompress(dst, j->size, j->src, j->src_len);

		j->done = !ZSTD_isError(got) && got == j->size;
		j->why = ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short stream";
	} else if (j->how == ZLIB) {
		j->done = inflate_zlib(dst, j->size, j->src, j->src_len);
		if (!j->done)
			memcpy(dst, c->file + j->sh.sh_offset, j->sh.sh_size);
	} else {
		memcpy(dst, c->file + j->sh.sh_offset, j->sh.sh_size);
	}
	if (j->how != AS_IS || libdw_inflates(j->name, &j->sh))
		debug_sections_drop_pages(e, j->sh.sh_offset, j->sh.sh_size);
}

/* The k-th job, largest first, on whichever thread took it. */
/* From this size, with a second thread, an inflated section's pages are made ready beside it. */
#define PREFAULT_MIN (32u << 20)
#define PREFAULT_STEP (4u << 20)

/*
 * The pages [start, start + size) an inflating job writes, made (zeroed,
 * mapped) from the end back,
 * while another thread inflates into them from its start: the fault and
 * the zeroing of each 4 KiB page were a fifth of that inflating, which is
 * the one long job no thread can share (a single zlib stream). Where the
 * two meet, the pages are there already, and this is a walk of the page
 * tables. Only ever page tables: no byte is written.
 */
static void prefault(unsigned char *start, uint64_t size)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)start + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)start + size) & ~(page - 1);

	while (hi > lo) {
		uintptr_t from = hi - lo > PREFAULT_STEP ? hi - PREFAULT_STEP : lo;

		if (madvise((void *)from, hi - from, MADV_POPULATE_WRITE))
			return; /* an older kernel: the inflating thread faults them in */
		hi = from;
	}
}

/*
 * From this size, with a second thread, one zlib stream is inflated in two
 * parts at once (inflate_split.h), the second by inflate_marked.c, which
 * takes this many times as long as libdeflate for the same bytes.
 */
#define SPLIT_MIN (32u << 20)
#define MARKED_SLOWER 1.5

/*
 * Whether the largest job is inflated in two parts: a big zlib stream in
 * bytes of ours (e's mapping, made by elf_load.c, spill.c or a copy of
 * ours, all writable: the split writes over three of its bytes while it
 * runs, and no other thread reads them meanwhile), without a guard (an item
 * run again would have to start over). The second part is as long as keeps
 * its thread, which also takes its share of the other jobs, as busy as the
 * first's.
 */
static bool plan_split(struct copy *c, unsigned threads)
{
	struct job *j = c->order[0];
	double others = 0, share;

	if (threads < 2 || c->guard || j->how != ZLIB || j->size < SPLIT_MIN ||
	    c->file != (const unsigned char *)c->e->map)
		return false;
	for (size_t k = 1; k < c->njobs; k++)
		if (c->order[k]->how != AS_IS)
			others += (double)c->order[k]->size;
	share = ((double)j->size - others / (threads - 1)) /
		((double)j->size * (1 + MARKED_SLOWER));
	if (share < 0.02)
		return false;
	/* Our own mapping of e: writable (see above). */
	return inflate_split_plan(&c->parts, (unsigned char *)j->src, j->src_len, c->buf + j->off,
				  j->size, share);
}

/* The pages of the largest job's stream given back: it is inflated, or copied. */
static void drop_stream(struct copy *c)
{
	debug_sections_drop_pages(c->e, c->order[0]->sh.sh_offset, c->order[0]->sh.sh_size);
}

/*
 * The largest job after its two parts: whole with libdeflate when the split
 * could not (the stream's pages were given back by the part that ended
 * second, when it could).
 */
static void end_split(struct copy *c)
{
	struct job *j = c->order[0];
	unsigned char *dst = c->buf + j->off;

	if ((j->done = inflate_split_end(&c->parts)))
		return;
	j->done = inflate_zlib(dst, j->size, j->src, j->src_len);
	if (!j->done)
		memcpy(dst, c->file + j->sh.sh_offset, j->sh.sh_size);
	drop_stream(c);
}

/*
 * Item k when the largest job is split: its first part, the pages of its
 * first part made ready, its second part (both on another thread than the
 * first part's, with two), then the rest.
 */
static void run_split_item(struct copy *c, size_t k)
{
	if (k == 0 || k == 2) {
		if (k ? inflate_split_second(&c->parts) : inflate_split_first(&c->parts))
			drop_stream(c);
	} else if (k == 1) {
		prefault(c->buf + c->order[0]->off, inflate_split_first_size(&c->parts));
	} else {
		run_job(c, c->order[k - 2]);
	}
}

/* Item k: the largest job first, then (with threads) its pages made ready, then the rest. */
static void run_ordered(void *ctx, unsigned slot, size_t k)
{
	struct copy *c = ctx;

	if (c->split)
		run_split_item(c, k);
	else if (c->prefault && k == 1)
		prefault(c->buf + c->order[0]->off, c->order[0]->size);
	else
		run_job(c, c->order[c->prefault && k > 1 ? k - 1 : k]);
}

static int larger_first(const void *a, const void *b)
{
	const struct job *x = *(const struct job *const *)a, *y = *(const struct job *const *)b;

	if (x->room != y->room)
		return x->room < y->room ? 1 : -1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * Every job run, on up to threads threads (the calling one among them),
 * largest first; fewer when threads cannot be started.
 */
static int run_jobs(struct copy *c, unsigned threads)
{
	int err;

	c->order = malloc((c->njobs ? c->njobs : 1) * sizeof(*c->order));
	if (!c->order)
		return -ENOMEM;
	for (size_t k = 0; k < c->njobs; k++)
		c->order[k] = &c->jobs[k];
	qsort(c->order, c->njobs, sizeof(*c->order), larger_first);
	c->split = c->njobs && plan_split(c, threads);
	c->prefault = !c->split && threads > 1 && c->njobs && c->order[0]->how != AS_IS &&
		      c->order[0]->size >= PREFAULT_MIN;
	err = run_items(c->njobs + c->prefault + 2 * c->split, threads, c->guard, run_ordered, c);
	if (c->split && !err)
		end_split(c);
	else if (c->split)
		inflate_split_end(&c->parts); /* nothing ran: released */
	free(c->order);
	c->order = NULL;
	return err;
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
static int fill(struct copy *c, unsigned threads)
{
	const struct lidia_elf *e = c->e;
	uint64_t off = e->ehdr.e_ehsize, shoff = c->total - c->shnum * c->shdr_size;
	struct job *j = c->jobs;
	int err;

	memcpy(c->buf, c->file, e->ehdr.e_ehsize);
	for (size_t k = 0; k < c->njobs; k++) {
		off = (off + 7) & ~7ull;
		c->jobs[k].off = off;
		off += c->jobs[k].room;
	}
	if ((err = run_jobs(c, threads)))
		return err;
	for (size_t i = 0; i < c->shnum; i++) {
		const char *n = NULL;
		GElf_Shdr sh = { 0 };

		if (j < c->jobs + c->njobs && j->i == i) {
			sh = j->sh;
			if (j->how == ZSTD && !j->done) {
				lidia_log(LIDIA_LOG_WARN, "%s: section '%s': zstd: %s", e->name,
					  j->name, j->why);
				return LIDIA_E_ELF;
			}
			if (j->done) {
				sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
				sh.sh_size = j->size;
			}
			sh.sh_offset = j->off;
			j++;
		} else if (section(c, i, &sh, &n) && i != 0) {
			/* Not for libdw: keep the header, drop the bytes. */
			if (sh.sh_type != SHT_NULL)
				sh.sh_type = SHT_NOBITS;
			sh.sh_offset = 0;
		}
		/* Section 0 holds the counts of extended numbering: kept. */
		put_shdr(c->buf + shoff + i * c->shdr_size, &sh, c->is64, c->be);
	}
	/* e_phoff, e_shoff and e_phnum. */
	put(c->buf + (c->is64 ? 0x20 : 0x1c), 0, c->is64 ? 8 : 4, c->be);
	put(c->buf + (c->is64 ? 0x28 : 0x20), shoff, c->is64 ? 8 : 4, c->be);
	put(c->buf + (c->is64 ? 0x38 : 0x2c), 0, 2, c->be);
	return 0;
}

int debug_sections_inflate(const struct lidia_elf *e, bool borrowed, unsigned threads,
			   int (*guard)(void (*fn)(void *arg), void *arg), struct lidia_elf **out)
{
	struct copy c = {
		.e = e,
		.file = (const unsigned char *)elf_rawfile(e->elf, NULL),
		.is64 = e->ehdr.e_ident[EI_CLASS] == ELFCLASS64,
		.be = e->ehdr.e_ident[EI_DATA] == ELFDATA2MSB,
		.guard = guard,
	};
	int err;

	*out = NULL;
	c.shdr_size = c.is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	if (!c.file || elf_getshdrnum(e->elf, &c.shnum) || elf_getshdrstrndx(e->elf, &c.shstrndx))
		return 0;
	if (!(c.jobs = calloc(c.shnum ? c.shnum : 1, sizeof(*c.jobs))))
		return -ENOMEM;
	if ((err = measure(&c, borrowed)) <= 0)
		goto out;
	/* The copy starts with e's header, whose fields it then sets. */
	err = LIDIA_E_ELF;
	if (e->ehdr.e_ehsize < (c.is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)) ||
	    e->ehdr.e_ehsize > e->size)
		goto out;
	/* A mapping of its own: its pages can be given back once libdw has read them. */
	c.buf = huge_map(c.total, 0, true); /* every byte of it is written */
	if (c.buf == MAP_FAILED) {
		err = -ENOMEM;
		goto out;
	}
	if (!(err = fill(&c, threads)) &&
	    !(err = elf_image_open_mem(out, c.buf, c.total, e->name, true)))
		(*out)->map = c.buf;
	else
		munmap(c.buf, c.total);
out:
	free(c.jobs);
	return err;
}
