/* SPDX-License-Identifier: Apache-2.0 */
/* Identify: separate debug files, dwz supplementary files and MiniDebugInfo. */
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <lzma.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "debug_find.h"
#include "elf_mem.h"
#include "internal.h"

/* At most this much MiniDebugInfo once inflated. */
#define MAX_MINIDEBUG (256u << 20)

/* snprintf that says whether the whole path fit (a cut path must not be opened). */
__attribute__((format(printf, 3, 4))) static bool path_fmt(char *buf, size_t size, const char *fmt,
							   ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < size;
}

static bool build_id_path(char *buf, size_t size, const char *dir, const char *hex)
{
	return path_fmt(buf, size, "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
}

/* Open path as an image with build ID want (hex); 1 when it is one. */
static int open_matching(const char *path, const char *want, struct lidia_elf **out)
{
	struct lidia_elf *e;
	char id[LIDIA_KEY_MAX];

	if (access(path, R_OK) || elf_image_open(&e, path, true))
		return 0;
	if (want && (lidia_elf_build_id(e, id, sizeof(id)) || strcmp(id, want))) {
		lidia_log(LIDIA_LOG_INFO, "%s: build ID differs, not used", path);
		lidia_elf_close(e);
		return 0;
	}
	*out = e;
	return 1;
}

/* The directory part of path, with no trailing slash ("." for none). */
static void dir_of(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(buf, size, ".");
	else if (slash == path)
		snprintf(buf, size, "/");
	else
		snprintf(buf, size, "%.*s", (int)(slash - path), path);
}

static uint32_t file_crc32(const char *path, bool *ok)
{
	uint32_t crc = 0;
	struct stat st;
	void *map;
	int fd;

	*ok = false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!fstat(fd, &st) && st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map != MAP_FAILED) {
			/* zlib's crc32 takes a uInt length: feed it in pieces. */
			const unsigned char *p = map;
			size_t left = (size_t)st.st_size;

			crc = (uint32_t)crc32(0, Z_NULL, 0);
			while (left) {
				uInt n = left > (1u << 30) ? (1u << 30) : (uInt)left;

				crc = (uint32_t)crc32(crc, p, n);
				p += n;
				left -= n;
			}
			munmap(map, (size_t)st.st_size);
			*ok = true;
		}
	}
	close(fd);
	return crc;
}

int debug_find_file(const struct lidia_elf *e, const char *const *dirs, struct lidia_elf **out)
{
	char id[LIDIA_KEY_MAX], path[PATH_MAX], dir[PATH_MAX];
	const char *link;
	GElf_Word crc;

	*out = NULL;
	if (lidia_elf_build_id(e, id, sizeof(id)))
		return 0;
	for (size_t i = 0; dirs && dirs[i]; i++) {
		if (build_id_path(path, sizeof(path), dirs[i], id) && open_matching(path, id, out))
			return 1;
	}
	link = dwelf_elf_gnu_debuglink(e->elf, &crc);
	if (!link || !*link || strchr(link, '/'))
		return 0;
	dir_of(e->name, dir, sizeof(dir));
	for (int k = -2; dirs && (k < 0 || dirs[k]); k++) {
		bool ok, fit;

		if (k == -2)
			fit = path_fmt(path, sizeof(path), "%s/%s", dir, link);
		else if (k == -1)
			fit = path_fmt(path, sizeof(path), "%s/.debug/%s", dir, link);
		else
			fit = path_fmt(path, sizeof(path), "%s/%s/%s", dirs[k], dir, link);
		if (!fit || !strcmp(path, e->name) || access(path, R_OK))
			continue;
		if (file_crc32(path, &ok) != crc || !ok) {
			lidia_log(LIDIA_LOG_INFO, "%s: CRC differs from .gnu_debuglink, not used",
				  path);
			continue;
		}
		if (open_matching(path, id, out))
			return 1;
	}
	return 0;
}

int debug_find_alt(const struct lidia_elf *e, const char *const *dirs, struct lidia_elf **out)
{
	const unsigned char *data, *end;
	char hex[LIDIA_KEY_MAX], path[PATH_MAX], dir[PATH_MAX];
	const char *name, *root;
	uint64_t addr, size;
	size_t idlen;

	*out = NULL;
	if (!elf_section_data(e, ".gnu_debugaltlink", &addr, &data, &size) || !size)
		return 0;
	end = memchr(data, 0, size);
	if (!end || (idlen = size - (size_t)(end - data) - 1) == 0 || idlen > 64)
		return 0;
	name = (const char *)data;
	for (size_t i = 0; i < idlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", end[1 + i]);
	for (size_t i = 0; dirs && dirs[i]; i++) {
		if (build_id_path(path, sizeof(path), dirs[i], hex) &&
		    open_matching(path, hex, out))
			return 1;
	}
	dir_of(e->name, dir, sizeof(dir));
	if (name[0] == '/') {
		if (open_matching(name, hex, out))
			return 1;
		/* An unpacked package: <root>/usr/lib/debug/... names /usr/lib/debug/... */
		root = strstr(e->name, "/usr/lib/debug/");
		if (root &&
		    path_fmt(path, sizeof(path), "%.*s%s", (int)(root - e->name), e->name, name) &&
		    open_matching(path, hex, out))
			return 1;
	} else if (path_fmt(path, sizeof(path), "%s/%s", dir, name) &&
		   open_matching(path, hex, out)) {
		return 1;
	}
	lidia_log(LIDIA_LOG_WARN, "%s: dwz supplementary file '%s' (build ID %s) not found",
		  e->name, name, hex);
	return 0;
}

int debug_minidebuginfo(const struct lidia_elf *e, struct lidia_elf **out)
{
	const unsigned char *data;
	/* The decoder's own memory too: a header may ask for a 1.5 GiB dictionary. */
	uint64_t addr, size, memlimit = MAX_MINIDEBUG;
	size_t in_pos, out_pos, room = 1 << 20, cap = 0;
	unsigned char *buf = NULL;
	lzma_ret r;
	int err;

	*out = NULL;
	if (!elf_section_data(e, ".gnu_debugdata", &addr, &data, &size) || !size)
		return 0;
	for (;;) {
		if (room > MAX_MINIDEBUG || LIDIA_GROW(buf, room, cap)) {
			free(buf);
			return room > MAX_MINIDEBUG ? LIDIA_E_ELF : -ENOMEM;
		}
		in_pos = out_pos = 0;
		r = lzma_stream_buffer_decode(&memlimit, 0, NULL, data, &in_pos, size, buf,
					      &out_pos, room);
		if (r != LZMA_BUF_ERROR)
			break;
		room *= 2; /* the output did not fit: again, with twice the room */
	}
	if (r != LZMA_OK) {
		free(buf);
		lidia_log(LIDIA_LOG_WARN, "%s: .gnu_debugdata: xz stream is corrupt", e->name);
		return 0;
	}
	err = elf_image_open_mem(out, buf, out_pos, e->name, true);
	if (err) {
		free(buf);
		return err == LIDIA_E_NOT_ELF ? 0 : err;
	}
	(*out)->owned = buf;
	return 1;
}
