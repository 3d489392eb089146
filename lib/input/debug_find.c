/* SPDX-License-Identifier: Apache-2.0 */
/* Identify: separate debug files, dwz supplementary files and MiniDebugInfo. */
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <lzma.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debug_find.h"
#include "elf_load.h"
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

/* Said once per path: a FIFO, device or socket where owner's debug file may be is never opened. */
static void not_regular(const struct lidia_elf *owner, const char *path)
{
	lidia_log(LIDIA_LOG_WARN, "%s: '%s' is not a regular file, not opened", owner->name, path);
}

/*
 * Open path, named by owner, as an image with build ID want (hex); 1 when
 * it is one. One with another build ID is refused (its path into refused,
 * when that is given and still empty); anything but a regular file is
 * never opened (elf_image_open() does not block on it).
 */
static int open_matching(const struct lidia_elf *owner, const char *path, const char *want,
			 struct lidia_elf **out, char *refused, size_t refused_size)
{
	struct lidia_elf *e;
	char id[LIDIA_KEY_MAX];
	int err;

	if (access(path, R_OK))
		return 0;
	/* Its headers first: the rest is read only once its build ID is the one wanted. */
	if ((err = elf_image_open_lazy(&e, path, true))) {
		if (err == LIDIA_E_NOT_REGULAR)
			not_regular(owner, path);
		return 0;
	}
	if (want && (lidia_elf_build_id(e, id, sizeof(id)) || strcmp(id, want))) {
		lidia_log(LIDIA_LOG_INFO, "%s: build ID differs, not used", path);
		if (refused && !refused[0])
			snprintf(refused, refused_size, "%s", path);
		lidia_elf_close(e);
		return 0;
	}
	if ((err = elf_image_load(e))) {
		lidia_log(LIDIA_LOG_WARN, "%s: %s, not used", path, lidia_strerror(err));
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

/*
 * One search for the debug file of e: the names it may have, and what a
 * candidate that was refused was, to say so when nothing else matched.
 */
struct search {
	const struct lidia_elf *e;
	const char *id; /* e's build ID: a candidate is used only when it has the same */
	struct stat st; /* e's file, when e is one: never its own debug file */
	bool have_st;
	const char *names[2]; /* .gnu_debuglink's name, else e's own name and NAME.debug */
	char debug_name[NAME_MAX + 1];
	char refused[PATH_MAX]; /* the first candidate whose build ID differs */
};

/* 1 (*out set) when path is e's debug file; 0 when it is absent or not, noted in s. */
static int try_path(struct search *s, const char *path, struct lidia_elf **out)
{
	struct lidia_elf_info info;
	struct lidia_elf *d;
	struct stat st;

	if (stat(path, &st))
		return 0;
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		not_regular(s->e, path);
	if (!S_ISREG(st.st_mode) ||
	    (s->have_st && st.st_dev == s->st.st_dev && st.st_ino == s->st.st_ino) ||
	    !open_matching(s->e, path, s->id, &d, s->refused, sizeof(s->refused)))
		return 0;
	/* A copy of the binary (same build ID, nothing more) must not end the search. */
	lidia_elf_info(d, &info);
	if (!info.has_dwarf && !info.has_symtab) {
		lidia_elf_close(d);
		return 0;
	}
	*out = d;
	return 1;
}

/* Each name of s in dir (beside e: dir/NAME, dir/.debug/NAME). */
static int try_beside(struct search *s, const char *dir, struct lidia_elf **out)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(s->names) && s->names[i]; i++) {
		if ((path_fmt(path, sizeof(path), "%s/%s", dir, s->names[i]) &&
		     try_path(s, path, out)) ||
		    (path_fmt(path, sizeof(path), "%s/.debug/%s", dir, s->names[i]) &&
		     try_path(s, path, out)))
			return 1;
	}
	return 0;
}

/*
 * Each name of s under root, below each tail of dir: all of dir first (GDB's
 * rule: <root>/usr/bin/X.debug for /usr/bin/X), then each shorter tail that
 * starts after a '/' (or an archive path's '!'), down to none. A package
 * unpacked anywhere, at /tmp/pkg, has /tmp/pkg/usr/bin/X and its debug file
 * at /tmp/pkg/usr/lib/debug/usr/bin/X: the tail usr/bin finds it under the
 * root /tmp/pkg/usr/lib/debug, as it does for the archive member
 * pkg.deb!data.tar.xz!./usr/bin/X. A tail that is not e's may find a file of
 * another build; the build ID check refuses it.
 */
static int try_tails(struct search *s, const char *root, const char *dir, struct lidia_elf **out)
{
	char path[PATH_MAX];
	const char *tail = dir;

	for (;;) {
		bool up;

		tail += strspn(tail, "/");
		if (!strcmp(tail, "."))
			tail = "";
		/* A relative name's ../ would lead out of root. */
		up = !strncmp(tail, "..", 2) && (tail[2] == '/' || !tail[2]);

		for (size_t i = 0; i < ARRAY_SIZE(s->names) && s->names[i] && !up; i++) {
			if (path_fmt(path, sizeof(path), "%s/%s%s%s", root, tail, *tail ? "/" : "",
				     s->names[i]) &&
			    try_path(s, path, out))
				return 1;
		}
		if (!*tail)
			return 0;
		tail += strcspn(tail, "/!");
		tail += *tail == '!';
	}
}

/* The names e's debug file may have: .gnu_debuglink's, else e's own and NAME.debug. */
static bool search_names(struct search *s)
{
	const char *link, *base;
	GElf_Word crc;

	link = dwelf_elf_gnu_debuglink(s->e->elf, &crc);
	if (link && *link) {
		if (strchr(link, '/'))
			return false; /* a name, never a path: not one to look for */
		s->names[0] = link;
		return true;
	}
	base = strrchr(s->e->name, '/');
	base = base ? base + 1 : s->e->name;
	if (!*base || strchr(base, '!'))
		return false;
	s->names[0] = base;
	if (snprintf(s->debug_name, sizeof(s->debug_name), "%s.debug", base) <
	    (int)sizeof(s->debug_name))
		s->names[1] = s->debug_name;
	return true;
}

/* Every place of debug_find_file's after the build-ID paths, in its order. */
static int find_by_name(struct search *s, const char *const *dirs, struct lidia_elf **out)
{
	char dir[PATH_MAX], real[PATH_MAX], real_dir[PATH_MAX];
	bool have_real;

	dir_of(s->e->name, dir, sizeof(dir));
	if (try_beside(s, dir, out))
		return 1;
	/* Under a root: by the real directory (GDB's), then by the name's (a link in a package). */
	have_real = realpath(s->e->name, real) != NULL;
	if (have_real)
		dir_of(real, real_dir, sizeof(real_dir));
	for (size_t i = 0; dirs && dirs[i]; i++) {
		if ((have_real && try_tails(s, dirs[i], real_dir, out)) ||
		    ((!have_real || strcmp(real_dir, dir)) && try_tails(s, dirs[i], dir, out)))
			return 1;
	}
	return 0;
}

int debug_find_file(const struct lidia_elf *e, const char *const *dirs, struct lidia_elf **out)
{
	char id[LIDIA_KEY_MAX], path[PATH_MAX];
	struct search *s;
	int found = 0;

	*out = NULL;
	if (lidia_elf_build_id(e, id, sizeof(id)))
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->e = e;
	s->id = id;
	s->have_st = !stat(e->name, &s->st);
	for (size_t i = 0; dirs && dirs[i] && !found; i++)
		found = build_id_path(path, sizeof(path), dirs[i], id) && try_path(s, path, out);
	if (!found && search_names(s))
		found = find_by_name(s, dirs, out);
	if (!found && s->refused[0])
		lidia_log(LIDIA_LOG_WARN,
			  "%s: '%s' has another build ID, not used: give the debug file of this "
			  "build",
			  e->name, s->refused);
	free(s);
	return found;
}

int debug_find_alt(const struct lidia_elf *e, const char *gathered, const char *const *dirs,
		   struct lidia_elf **out, bool *named)
{
	const unsigned char *data, *end;
	char hex[LIDIA_KEY_MAX], path[PATH_MAX], dir[PATH_MAX];
	const char *name, *root;
	uint64_t addr, size;
	size_t idlen;

	*out = NULL;
	*named = elf_section_data(e, ".gnu_debugaltlink", &addr, &data, &size) && size;
	if (!*named)
		return 0;
	end = memchr(data, 0, size);
	if (!end || (idlen = size - (size_t)(end - data) - 1) == 0 || idlen > 64)
		return 0;
	name = (const char *)data;
	for (size_t i = 0; i < idlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", end[1 + i]);
	if (gathered && build_id_path(path, sizeof(path), gathered, hex) &&
	    open_matching(e, path, hex, out, NULL, 0))
		return 1;
	if (!dirs) {
		lidia_log(
			LIDIA_LOG_WARN,
			"%s: dwz supplementary file '%s' (build ID %s) not among the images given",
			e->name, name, hex);
		return 0; /* no search */
	}
	for (size_t i = 0; dirs[i]; i++) {
		if (build_id_path(path, sizeof(path), dirs[i], hex) &&
		    open_matching(e, path, hex, out, NULL, 0))
			return 1;
	}
	dir_of(e->name, dir, sizeof(dir));
	if (name[0] == '/') {
		if (open_matching(e, name, hex, out, NULL, 0))
			return 1;
		/* An unpacked package: <root>/usr/lib/debug/... names /usr/lib/debug/... */
		root = strstr(e->name, "/usr/lib/debug/");
		if (root &&
		    path_fmt(path, sizeof(path), "%.*s%s", (int)(root - e->name), e->name, name) &&
		    open_matching(e, path, hex, out, NULL, 0))
			return 1;
	} else if (path_fmt(path, sizeof(path), "%s/%s", dir, name) &&
		   open_matching(e, path, hex, out, NULL, 0)) {
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
