/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lidia_extract() reads the images it is given and never writes them: not
 * when libdw inflates compressed DWARF (it rewrites section headers in the
 * bytes it reads), not when unread sections are left out. Each program is
 * built here with the exact command printed (cc -O2 -g, its DWARF not
 * compressed, compressed with zlib, and with zstd by objcopy where it can),
 * opened from memory and from its file, and extracted twice: the bytes stay
 * as they were, and the second extraction finds what the first did.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_load.h"
#include "lidia.h"
#include "unit.h"

static const char program[] =
	"#include <stdio.h>\n"
	"static int sq(int x) { return x * x; }\n"
	"__attribute__((noinline)) int f(int x) { return sq(x) + 1; }\n"
	"int main(int argc, char **argv) { printf(\"%d %s\\n\", f(argc), argv[0]); return 0; }\n";

static char dir[] = "/tmp/lidia-test-extract.XXXXXX";

/* Build the program with DWARF compressed as gz says ("none", "zlib", "zstd"). */
static bool build(const char *gz, char *out, size_t size)
{
	char src[512], cmd[4096];
	FILE *f;

	snprintf(src, sizeof(src), "%s/p.c", dir);
	snprintf(out, size, "%s/p-%s", dir, gz);
	if (!(f = fopen(src, "w")) || fputs(program, f) < 0 || fclose(f))
		return false;
	if (!strcmp(gz, "zstd")) /* GCC 12 writes no zstd; binutils 2.40 does */
		snprintf(cmd, sizeof(cmd),
			 "cc -O2 -g -o %s.plain %s && objcopy --compress-debug-sections=zstd %s.plain %s",
			 out, src, out, out);
	else
		snprintf(cmd, sizeof(cmd), "cc -O2 -g -gz=%s -o %s %s", gz, out, src);
	printf("# %s\n", cmd);
	strcat(cmd, " 2>/dev/null");
	return system(cmd) == 0;
}

/* Whether e's .debug_info is compressed (SHF_COMPRESSED). */
static bool compressed(const struct lidia_elf *e)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(e->elf, shstrndx, sh.sh_name)) &&
		    !strcmp(n, ".debug_info"))
			return sh.sh_flags & SHF_COMPRESSED;
	}
	return false;
}

static unsigned char *slurp(const char *path, size_t *size)
{
	struct stat st;
	unsigned char *buf = NULL;
	int fd = open(path, O_RDONLY);

	if (fd >= 0 && !fstat(fd, &st) && (buf = malloc((size_t)st.st_size)) &&
	    read(fd, buf, (size_t)st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	if (fd >= 0)
		close(fd);
	*size = buf ? (size_t)st.st_size : 0;
	return buf;
}

static int extract(struct lidia_elf *e, struct lidia_extract_stats *st)
{
	struct lidia_extract_opts o = LIDIA_EXTRACT_OPTS(.no_debug_search = true);
	struct lidia_builder *b;
	int err;

	if ((err = lidia_builder_new(&b)))
		return err;
	err = lidia_extract(b, &e, 1, &o, st);
	lidia_builder_free(b);
	return err;
}

/* Extract e twice; its bytes at image (size) must stay those of want. */
static void check(const char *what, struct lidia_elf *e, const unsigned char *image,
		  const unsigned char *want, size_t size)
{
	struct lidia_extract_stats a = { 0 }, b = { 0 };
	int err1 = extract(e, &a), err2 = extract(e, &b);

	CHECK(!err1 && a.dwarf_functions > 0 && a.line_rows > 0,
	      "%s: DWARF read (%d; %zu functions, %zu line rows)", what, err1, a.dwarf_functions,
	      a.line_rows);
	CHECK(!memcmp(image, want, size), "%s: the image's bytes are unchanged", what);
	CHECK(!err2 && a.functions == b.functions && a.inline_ranges == b.inline_ranges &&
		      a.line_rows == b.line_rows,
	      "%s: extracted again, the same (%zu/%zu functions, %zu/%zu line rows)", what,
	      a.functions, b.functions, a.line_rows, b.line_rows);
}

static void one(const char *gz)
{
	char path[600], what[64];
	unsigned char *bytes, *mem;
	struct lidia_elf *e;
	size_t size;

	if (!build(gz, path, sizeof(path))) {
		printf("skip - -gz=%s: cc cannot build it here\n", gz);
		return;
	}
	if (!(bytes = slurp(path, &size)) || !(mem = malloc(size))) {
		CHECK(false, "-gz=%s: read %s", gz, path);
		free(bytes);
		return;
	}
	memcpy(mem, bytes, size);
	snprintf(what, sizeof(what), "-gz=%s, from memory", gz);
	if (!lidia_elf_open_mem(&e, mem, size, path)) {
		if (compressed(e) != !!strcmp(gz, "none")) {
			printf("skip - -gz=%s: the toolchain left .debug_info as it was\n", gz);
			lidia_elf_close(e);
			goto out;
		}
		check(what, e, mem, bytes, size);
		lidia_elf_close(e);
	} else {
		CHECK(false, "%s: opened", what);
	}
	snprintf(what, sizeof(what), "-gz=%s, from its file", gz);
	if (!lidia_elf_open(&e, path)) {
		/* Read in (code pages left as zeros): those bytes must stay as read. */
		unsigned char *read_in = NULL;

		CHECK(!e->map && !elf_image_load(e) && e->map && (read_in = malloc(size)),
		      "%s: read in, not mapped", what);
		if (read_in) {
			memcpy(read_in, e->map, size);
			CHECK(!memcmp(read_in, bytes, 64), "%s: the ELF header as in the file", what);
			check(what, e, e->map, read_in, size);
		}
		free(read_in);
		lidia_elf_close(e);
	} else {
		CHECK(false, "%s: opened", what);
	}
out:
	free(mem);
	free(bytes);
	unlink(path);
	strcat(path, ".plain");
	unlink(path);
}

int main(void)
{
	char src[512];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	one("none");
	one("zlib");
	one("zstd");
	snprintf(src, sizeof(src), "%s/p.c", dir);
	unlink(src);
	rmdir(dir);
	return unit_exit();
}
