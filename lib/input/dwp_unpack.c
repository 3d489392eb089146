/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Identify: a DWARF package cut into .dwo files for libdw (see the header).
 *
 * The package's unit index (.debug_cu_index: DWARF 5's, or GNU's version
 * 2 for DWARF 4) gives, for a split unit's dwo_id, the offset and size of
 * its piece of each section. A unit's .dwo holds those pieces under the
 * section names a .dwo has, and the package's whole string table.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dwarf_begin.h"
#include "dwp_unpack.h"
#include "elf_load.h"
#include "elf_mem.h"
#include "internal.h"
#include "split_paths.h"

#define MAX_PIECES 48

/* A section of a file to write. */
struct piece {
	const char *name;
	const unsigned char *data;
	size_t size;
};

struct made {
	char *path;
	bool is_dir;
};

struct dwp_unpacked {
	char dir[1024];	   /* a path below it fits PATH_MAX: place() sees to it */
	struct made *made; /* what was created below dir, in order */
	size_t nmade, cap_made;
	struct lidia_elf *image;
	int fd;
	bool has_dir; /* dir was made */
};

/* A package's unit index: the hash table, then the offset and size tables. */
struct cu_index {
	uint32_t version, ncols, nunits, nslots;
	const unsigned char *sigs, *rows, *ids, *offsets, *sizes;
};

/* The sections of a package's pieces, by index column id and version; NULL: not copied. */
static const char *column_section(uint32_t version, uint32_t id)
{
	static const char *const v5[] = {
		NULL, ".debug_info.dwo",	NULL, ".debug_abbrev.dwo",  ".debug_line.dwo",
		NULL, ".debug_str_offsets.dwo", NULL, ".debug_rnglists.dwo"
	};
	static const char *const v2[] = { NULL,
					  ".debug_info.dwo",
					  NULL,
					  ".debug_abbrev.dwo",
					  ".debug_line.dwo",
					  NULL,
					  ".debug_str_offsets.dwo",
					  NULL,
					  NULL };

	if (id >= ARRAY_SIZE(v5))
		return NULL;
	return version == 5 ? v5[id] : v2[id];
}

static bool read_index(const unsigned char *p, uint64_t size, struct cu_index *ix)
{
	uint64_t need;

	if (size < 16)
		return false;
	ix->version = le16(p) == 5 ? 5 : le32(p);
	ix->ncols = le32(p + 4);
	ix->nunits = le32(p + 8);
	ix->nslots = le32(p + 12);
	if ((ix->version != 5 && ix->version != 2) || !ix->ncols || ix->ncols > 16 || !ix->nslots ||
	    (ix->nslots & (ix->nslots - 1)))
		return false;
	need = 16 + (uint64_t)ix->nslots * 12 + (uint64_t)ix->ncols * 4 +
	       (uint64_t)ix->nunits * ix->ncols * 8;
	if (need > size)
		return false;
	ix->sigs = p + 16;
	ix->rows = ix->sigs + (size_t)ix->nslots * 8;
	ix->ids = ix->rows + (size_t)ix->nslots * 4;
	ix->offsets = ix->ids + (size_t)ix->ncols * 4;
	ix->sizes = ix->offsets + (size_t)ix->nunits * ix->ncols * 4;
	return true;
}

/* The row (from 1) of the unit whose dwo_id is sig; 0: none. At most nslots probes. */
static uint32_t find_row(const struct cu_index *ix, uint64_t sig)
{
	uint32_t mask = ix->nslots - 1, h = (uint32_t)sig & mask;
	uint32_t step = ((uint32_t)(sig >> 32) & mask) | 1;

	for (uint32_t i = 0; i < ix->nslots; i++, h = (h + step) & mask) {
		uint32_t row = le32(ix->rows + (size_t)h * 4);

		if (!row)
			return 0;
		if (le64(ix->sigs + (size_t)h * 8) == sig)
			return row <= ix->nunits ? row : 0;
	}
	return 0;
}

/* ---- Files ----------------------------------------------------------------------- */

static bool remember(struct dwp_unpacked *u, const char *path, bool is_dir)
{
	char *copy;

	if (LIDIA_GROW(u->made, u->nmade + 1, u->cap_made) || !(copy = strdup(path)))
		return false;
	u->made[u->nmade++] = (struct made){ copy, is_dir };
	return true;
}

/*
 * path = dir/name, its directories made, for a name of plain components
 * (a skeleton's DW_AT_dwo_name: nothing it says may lead out of dir).
 */
static bool place(struct dwp_unpacked *u, const char *name, char *path, size_t size)
{
	size_t base = strlen(u->dir) + 1;
	const char *c = name;

	if (!*name || *name == '/' || base + strlen(name) >= size)
		return false;
	while (*c) {
		size_t len = strcspn(c, "/");

		if (!len || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += len + (c[len] == '/');
	}
	memcpy(path, u->dir, base - 1);
	path[base - 1] = '/';
	memcpy(path + base, name, strlen(name) + 1);
	for (char *s = path + base; (s = strchr(s, '/')); *s++ = '/') {
		*s = '\0';
		if (!mkdir(path, 0700) ? !remember(u, path, true) : errno != EEXIST) {
			*s = '/';
			return false;
		}
	}
	return true;
}

/* pieces[0..n) written as the sections of an ELF file like like (class, byte order, machine). */
static int write_elf(int fd, const GElf_Ehdr *like, GElf_Half type, const struct piece *pieces,
		     size_t n)
{
	Elf *elf = elf_begin(fd, ELF_C_WRITE, NULL);
	char names[MAX_PIECES * 32 + 16];
	size_t used = 1;
	GElf_Ehdr eh;
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Shdr sh;
	int err = LIDIA_E_ELF;

	names[0] = '\0';
	if (!elf || !gelf_newehdr(elf, like->e_ident[EI_CLASS]) || !gelf_getehdr(elf, &eh))
		goto out;
	eh.e_ident[EI_DATA] = like->e_ident[EI_DATA];
	eh.e_type = type;
	eh.e_machine = like->e_machine;
	eh.e_version = EV_CURRENT;
	for (size_t i = 0; i <= n; i++) {
		const char *name = i < n ? pieces[i].name : ".shstrtab";
		size_t len = strlen(name) + 1;

		if (used + len > sizeof(names) || !(scn = elf_newscn(elf)) ||
		    !(d = elf_newdata(scn)) || !gelf_getshdr(scn, &sh))
			goto out;
		memcpy(names + used, name, len);
		sh.sh_name = used;
		sh.sh_type = i < n ? SHT_PROGBITS : SHT_STRTAB;
		sh.sh_addralign = 1;
		used += len;
		d->d_buf = i < n ? (void *)pieces[i].data : names;
		d->d_size = i < n ? pieces[i].size : 0; /* the names' size: once all are in */
		d->d_type = ELF_T_BYTE;
		d->d_align = 1;
		if (!gelf_update_shdr(scn, &sh))
			goto out;
		eh.e_shstrndx = elf_ndxscn(scn);
	}
	d->d_size = used;
	if (gelf_update_ehdr(elf, &eh) && elf_update(elf, ELF_C_WRITE) >= 0)
		err = 0;
out:
	elf_end(elf);
	return err;
}

/* A new file at path (never one that is there), written from pieces. */
static int write_elf_file(struct dwp_unpacked *u, const char *path, const GElf_Ehdr *like,
			  GElf_Half type, const struct piece *pieces, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int err;

	if (fd < 0)
		return -errno;
	if (!remember(u, path, false)) {
		close(fd);
		unlink(path);
		return -ENOMEM;
	}
	err = write_elf(fd, like, type, pieces, n);
	close(fd);
	return err;
}

/* ---- The package ------------------------------------------------------------------ */

struct package {
	const struct lidia_elf *e;
	struct cu_index ix;
	struct piece sections[8]; /* those copied, as the package has them */
	const unsigned char *str;
	uint64_t str_size;
};

/* The .dwo of the unit at index row (from 1) of p, written at path. */
static int write_dwo(struct dwp_unpacked *u, const struct package *p, uint32_t row,
		     const char *path)
{
	struct piece pieces[MAX_PIECES];
	size_t n = 0;

	for (uint32_t c = 0; c < p->ix.ncols; c++) {
		size_t at = ((size_t)(row - 1) * p->ix.ncols + c) * 4;
		uint32_t id = le32(p->ix.ids + (size_t)c * 4);
		uint32_t off = le32(p->ix.offsets + at), size = le32(p->ix.sizes + at);
		const char *name = column_section(p->ix.version, id);
		const struct piece *all = NULL;

		for (size_t k = 0; name && k < ARRAY_SIZE(p->sections) && p->sections[k].name; k++)
			if (!strcmp(p->sections[k].name, name))
				all = &p->sections[k];
		if (!all || off > all->size || size > all->size - off)
			continue; /* a piece not copied, or out of its section */
		pieces[n++] = (struct piece){ name, all->data + off, size };
	}
	if (p->str)
		pieces[n++] = (struct piece){ ".debug_str.dwo", p->str, p->str_size };
	return write_elf_file(u, path, &p->e->ehdr, ET_REL, pieces, n);
}

static bool open_package(struct package *p, const struct lidia_elf *e)
{
	static const char *const names[] = { ".debug_info.dwo", ".debug_abbrev.dwo",
					     ".debug_line.dwo", ".debug_str_offsets.dwo",
					     ".debug_rnglists.dwo" };
	const unsigned char *data;
	uint64_t addr, size;
	size_t n = 0;

	memset(p, 0, sizeof(*p));
	p->e = e;
	if (!elf_section_data(e, ".debug_cu_index", &addr, &data, &size) ||
	    !read_index(data, size, &p->ix))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (elf_section_data(e, names[i], &addr, &data, &size))
			p->sections[n++] = (struct piece){ names[i], data, size };
	elf_section_data(e, ".debug_str.dwo", &addr, &p->str, &p->str_size);
	return n > 0;
}

/* ---- The skeletons ---------------------------------------------------------------- */

/* The debug sections of image as a file in u's directory, opened for libdw to read. */
static int write_image(struct dwp_unpacked *u, const struct lidia_elf *image)
{
	struct piece pieces[MAX_PIECES];
	Elf_Scn *scn = NULL;
	size_t shstrndx, n = 0;
	char path[PATH_MAX];
	struct stat st;
	int err;

	if (elf_getshdrstrndx(image->elf, &shstrndx))
		return LIDIA_E_ELF;
	while ((scn = elf_nextscn(image->elf, scn)) && n < MAX_PIECES) {
		const char *name;
		uint64_t addr, size;
		const unsigned char *data;
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    (name = elf_strptr(image->elf, shstrndx, sh.sh_name)) &&
		    !strncmp(name, ".debug_", 7) &&
		    elf_section_data(image, name, &addr, &data, &size))
			pieces[n++] = (struct piece){ name, data, size };
	}
	memcpy(path, u->dir, strlen(u->dir));
	memcpy(path + strlen(u->dir), "/image", sizeof("/image"));
	if ((err = write_elf_file(u, path, &image->ehdr, image->ehdr.e_type, pieces, n)))
		return err;
	if ((u->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(u->fd, &st))
		return -errno;
	if (!(u->image = calloc(1, sizeof(*u->image))))
		return -ENOMEM;
	u->image->fd = -1;
	if (!(u->image->name = strdup(image->name)))
		return -ENOMEM;
	/* From the descriptor: libdw looks for the .dwo files beside the file it names. */
	u->image->elf = elf_begin(u->fd, ELF_C_READ_MMAP, NULL);
	u->image->debugdir = u->dir;
	u->image->size = (size_t)st.st_size;
	if (!u->image->elf || !gelf_getehdr(u->image->elf, &u->image->ehdr))
		return LIDIA_E_ELF;
	return 0;
}

/*
 * A skeleton unit whose split unit libdw did not find (subdie NULL: was not
 * asked to look): its dwo_id, and the name it gives.
 */
static bool lost_skeleton(Dwarf_CU *cu, uint8_t type, Dwarf_Die *cudie, Dwarf_Die *subdie,
			  uint64_t *id, const char **name)
{
	Dwarf_Attribute attr;

	if (type != DW_UT_skeleton || (subdie && dwarf_tag(subdie) == DW_TAG_compile_unit) ||
	    dwarf_cu_info(cu, NULL, NULL, NULL, NULL, id, NULL, NULL))
		return false;
	*name = NULL;
	if (dwarf_attr(cudie, DW_AT_dwo_name, &attr) ||
	    dwarf_attr(cudie, DW_AT_GNU_dwo_name, &attr))
		*name = dwarf_formstring(&attr);
	return *name != NULL;
}

/*
 * A .dwo for each skeleton of image that lacks its split unit and that the
 * package has: how many were written in *written, of *skeletons.
 */
static int write_dwos(struct dwp_unpacked *u, const struct package *p,
		      const struct lidia_elf *image, bool find_split, size_t *written,
		      size_t *skeletons)
{
	Dwarf *dw = dwarf_begin_image(image->elf, NULL);
	Dwarf_Die *found = NULL;
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t type;
	int err = 0;

	*written = *skeletons = 0;
	if (dw && find_split && split_paths_safe(dw, image->name, NULL))
		found = &subdie;
	while (dw && !err && dwarf_get_units(dw, cu, &next, &version, &type, &cudie, found) == 0) {
		char path[PATH_MAX];
		const char *name;
		uint32_t row;
		uint64_t id;

		cu = next;
		if (!lost_skeleton(cu, type, &cudie, found, &id, &name))
			continue;
		(*skeletons)++;
		if (!(row = find_row(&p->ix, id)) || !place(u, name, path, sizeof(path)))
			continue;
		err = write_dwo(u, p, row, path);
		if (err == -EEXIST) /* two skeletons name one file: the first has it */
			err = 0;
		else if (!err)
			(*written)++;
	}
	dwarf_end_image(dw);
	return err;
}

static int unpack(struct dwp_unpacked *u, const struct lidia_elf *image,
		  const struct lidia_elf *dwp, const char *dwp_path, bool find_split)
{
	size_t written, skeletons;
	struct package p;
	int err;

	if (!open_package(&p, dwp))
		return 0;
	if ((err = write_dwos(u, &p, image, find_split, &written, &skeletons)) || !written)
		return err;
	if (written < skeletons)
		lidia_log(LIDIA_LOG_WARN,
			  "%s: DWARF package '%s' holds %zu of its %zu split units: the others "
			  "have symbols and line tables, no inline frames",
			  image->name, dwp_path, written, skeletons);
	return (err = write_image(u, image)) ? err : 1;
}

int dwp_unpack(const struct lidia_elf *image, const char *dwp_path, bool find_split,
	       struct dwp_unpacked **out)
{
	const char *tmp = getenv("TMPDIR");
	struct lidia_elf *dwp;
	struct dwp_unpacked *u;
	int r;

	*out = NULL;
	if (elf_image_open(&dwp, dwp_path, true))
		return 0; /* not a package: the skeletons keep what they have */
	if (!(u = calloc(1, sizeof(*u)))) {
		lidia_elf_close(dwp);
		return -ENOMEM;
	}
	u->fd = -1;
	r = snprintf(u->dir, sizeof(u->dir), "%s/lidiagen-dwp.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (r < 0 || (size_t)r >= sizeof(u->dir))
		r = -ENAMETOOLONG;
	else
		r = (u->has_dir = mkdtemp(u->dir)) ? unpack(u, image, dwp, dwp_path, find_split)
						   : -errno;
	lidia_elf_close(dwp);
	if (r <= 0) {
		dwp_unpacked_close(u);
		return r;
	}
	*out = u;
	return 1;
}

const struct lidia_elf *dwp_unpacked_image(const struct dwp_unpacked *u)
{
	return u->image;
}

void dwp_unpacked_close(struct dwp_unpacked *u)
{
	if (!u)
		return;
	lidia_elf_close(u->image);
	if (u->fd >= 0)
		close(u->fd);
	for (size_t i = u->nmade; i-- > 0;) {
		if (u->made[i].is_dir)
			rmdir(u->made[i].path);
		else
			unlink(u->made[i].path);
		free(u->made[i].path);
	}
	free(u->made);
	if (u->has_dir)
		rmdir(u->dir);
	free(u);
}
