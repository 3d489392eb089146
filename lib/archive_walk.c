/* SPDX-License-Identifier: Apache-2.0 */
/* Walk: ELF members of archives, nested, streamed (see lidia.h). */
#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "internal.h"

#define HEAD 512

/*
 * libarchive is loaded when the first archive is met, not at start-up: it
 * pulls in libxml2 and ICU, 3.6 MB of resident memory that a run over plain
 * ELF files never needs. The functions used are looked up once.
 */
#define ARCHIVE_FNS(X)                                                                       \
	X(struct archive *, archive_read_new, (void))                                        \
	X(int, archive_read_support_filter_all, (struct archive *))                          \
	X(int, archive_read_support_format_all, (struct archive *))                          \
	X(int, archive_read_open,                                                            \
	  (struct archive *, void *, archive_open_callback *, archive_read_callback *,       \
	   archive_close_callback *))                                                        \
	X(int, archive_read_open_fd, (struct archive *, int, size_t))                        \
	X(int, archive_read_open_memory, (struct archive *, const void *, size_t))           \
	X(int, archive_read_next_header, (struct archive *, struct archive_entry **))        \
	X(la_ssize_t, archive_read_data, (struct archive *, void *, size_t))                 \
	X(int, archive_read_data_skip, (struct archive *))                                   \
	X(const char *, archive_error_string, (struct archive *))                            \
	X(int, archive_read_free, (struct archive *))                                        \
	X(const char *, archive_entry_pathname, (struct archive_entry *))                    \
	X(__LA_MODE_T, archive_entry_filetype, (struct archive_entry *))                     \
	X(int, archive_entry_size_is_set, (struct archive_entry *))                          \
	X(la_int64_t, archive_entry_size, (struct archive_entry *))

static struct {
#define X(ret, name, args) ret(*name) args;
	ARCHIVE_FNS(X)
#undef X
} la;
static pthread_once_t la_once = PTHREAD_ONCE_INIT;
static bool la_ok;

static void la_load(void)
{
	void *h = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
#define X(ret, name, args)                                    \
	if (!(*(void **)&la.name = dlsym(h, #name)))           \
		return;
	ARCHIVE_FNS(X)
#undef X
	la_ok = true;
}

static bool la_loaded(void)
{
	pthread_once(&la_once, la_load);
	return la_ok;
}

bool lidia_archive_magic(const unsigned char *h, size_t n)
{
	static const struct {
		size_t off, len;
		const char *bytes;
	} magics[] = {
		{ 0, 2, "\x1f\x8b" },			/* gzip */
		{ 0, 3, "BZh" },			/* bzip2 */
		{ 0, 6, "\xfd" "7zXZ\x00" },		/* xz */
		{ 0, 4, "\x28\xb5\x2f\xfd" },		/* zstd */
		{ 0, 4, "\x04\x22\x4d\x18" },		/* lz4 */
		{ 0, 2, "\x5d\x00" },			/* lzma */
		{ 257, 5, "ustar" },			/* tar */
		{ 0, 4, "PK\x03\x04" },			/* zip */
		{ 0, 4, "PK\x05\x06" },			/* empty zip */
		{ 0, 8, "!<arch>\n" },			/* ar: .deb, .ddeb, .a */
		{ 0, 4, "\xed\xab\xee\xdb" },		/* rpm */
		{ 0, 6, "070701" },			/* cpio (newc) */
		{ 0, 6, "070702" },			/* cpio (crc) */
		{ 0, 6, "070707" },			/* cpio (odc) */
		{ 0, 2, "\xc7\x71" },			/* cpio (binary, little-endian) */
		{ 0, 2, "\x71\xc7" },			/* cpio (binary, big-endian) */
		{ 0, 6, "7z\xbc\xaf\x27\x1c" },		/* 7-zip */
	};

	for (size_t i = 0; i < ARRAY_SIZE(magics); i++)
		if (n >= magics[i].off + magics[i].len &&
		    !memcmp(h + magics[i].off, magics[i].bytes, magics[i].len))
			return true;
	return false;
}

struct walk {
	const struct lidia_archive_limits *lim;
	const struct lidia_archive_cb *cb;
	uint64_t total; /* bytes read so far, all levels */
	unsigned problems;
	bool stop;
};

/* A nested archive reads its bytes from the member of its parent: first the head we peeked. */
struct nested_src {
	struct archive *parent;
	const unsigned char *head;
	size_t head_len;
	bool head_done;
	struct walk *w;
	bool over; /* the expansion limit was reached */
	char buf[65536];
};

static la_ssize_t nested_read(struct archive *a, void *ctx, const void **out)
{
	struct nested_src *s = ctx;
	la_ssize_t n;

	(void)a;
	if (!s->head_done) {
		s->head_done = true;
		if (s->head_len) {
			*out = s->head;
			return (la_ssize_t)s->head_len;
		}
	}
	n = la.archive_read_data(s->parent, s->buf, sizeof(s->buf));
	if (n > 0) {
		s->w->total += (uint64_t)n;
		if (s->w->total > s->w->lim->max_total) {
			s->over = true;
			return -1;
		}
	}
	*out = s->buf;
	return n;
}

static void problem(struct walk *w, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct walk *w, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->problems++;
	if (w->cb->problem)
		w->cb->problem(w->cb->ctx, path, msg);
}

/* A member name for messages: control characters shown as '?'. */
static void clean_name(char *dst, size_t size, const char *src)
{
	size_t i = 0;

	for (; src && *src && i + 1 < size; src++)
		dst[i++] = (unsigned char)*src < 0x20 || *src == 0x7f ? '?' : *src;
	dst[i] = '\0';
}

static struct archive *new_reader(void)
{
	struct archive *a = la.archive_read_new();

	if (a) {
		la.archive_read_support_filter_all(a);
		la.archive_read_support_format_all(a);
	}
	return a;
}

static int walk_entries(struct walk *w, struct archive *a, const char *path, unsigned depth);

/* Read the rest of an ELF member after its head. */
static void read_elf(struct walk *w, struct archive *a, const char *path, const char *member,
		     const unsigned char *head, size_t head_len, int64_t size)
{
	/* The declared size is a hint: the data may run past it (a lying header). */
	size_t cap = size >= 0 && (size_t)size >= head_len ? (size_t)size : head_len * 2 + 65536;
	size_t len = head_len;
	unsigned char *data = malloc(cap ? cap : 1);

	if (!data) {
		problem(w, path, "out of memory reading a member of %lld bytes", (long long)size);
		la.archive_read_data_skip(a);
		return;
	}
	memcpy(data, head, head_len);
	for (;;) {
		la_ssize_t n;

		if (len >= cap) {
			void *p;

			if (cap >= w->lim->max_member) {
				problem(w, path, "member larger than %llu bytes, refused",
					(unsigned long long)w->lim->max_member);
				free(data);
				la.archive_read_data_skip(a);
				return;
			}
			cap = cap * 2 > w->lim->max_member ? (size_t)w->lim->max_member : cap * 2;
			if (!(p = realloc(data, cap))) {
				problem(w, path, "out of memory");
				free(data);
				return;
			}
			data = p;
		}
		n = la.archive_read_data(a, data + len, cap - len);
		if (n < 0) {
			problem(w, path, "cannot read: %s", la.archive_error_string(a));
			free(data);
			return;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		w->total += (uint64_t)n;
		if (w->total > w->lim->max_total) {
			free(data);
			return; /* said once, by the caller */
		}
	}
	if (w->cb->elf(w->cb->ctx, path, member, data, len))
		w->stop = true;
}

/*
 * Read past a member that is neither ELF nor an archive, counting what it
 * inflates to: a compressed member of zeros is a bomb too, and must stop
 * at the limit rather than be inflated whole by libarchive's own skip.
 */
static void skip_member(struct walk *w, struct archive *a)
{
	char buf[65536];
	la_ssize_t n;

	while (w->total <= w->lim->max_total && (n = la.archive_read_data(a, buf, sizeof(buf))) > 0)
		w->total += (uint64_t)n;
}

static void walk_nested(struct walk *w, struct archive *parent, const char *path,
			const unsigned char *head, size_t head_len, unsigned depth)
{
	struct nested_src *src = calloc(1, sizeof(*src));
	struct archive *a = new_reader();

	if (!src || !a) {
		problem(w, path, "out of memory");
		goto out;
	}
	src->parent = parent;
	src->head = head;
	src->head_len = head_len;
	src->w = w;
	if (la.archive_read_open(a, src, NULL, nested_read, NULL) != ARCHIVE_OK) {
		/* Compressed-looking data that is no archive: nothing to walk. */
		goto out;
	}
	walk_entries(w, a, path, depth);
out:
	if (a)
		la.archive_read_free(a);
	free(src);
}

static int walk_entries(struct walk *w, struct archive *a, const char *path, unsigned depth)
{
	struct archive_entry *entry;
	bool first = true;
	int r;

	while (!w->stop && (r = la.archive_read_next_header(a, &entry)) != ARCHIVE_EOF) {
		unsigned char head[HEAD];
		char member[1024], full[4096];
		int64_t size;
		la_ssize_t n;

		if (r == ARCHIVE_FATAL || r == ARCHIVE_RETRY) {
			if (first && depth > 0)
				return 0; /* a member that only looked like an archive */
			problem(w, path, "truncated or corrupt archive: %s", la.archive_error_string(a));
			return -1;
		}
		first = false;
		clean_name(member, sizeof(member), la.archive_entry_pathname(entry));
		snprintf(full, sizeof(full), "%s!%s", path, member);
		if (la.archive_entry_filetype(entry) != AE_IFREG ||
		    (w->cb->want && !w->cb->want(w->cb->ctx, member)))
			continue;
		size = la.archive_entry_size_is_set(entry) ? la.archive_entry_size(entry) : -1;
		n = la.archive_read_data(a, head, sizeof(head));
		if (n < 0) {
			problem(w, full, "cannot read: %s", la.archive_error_string(a));
			if (r == ARCHIVE_FATAL)
				return -1;
			continue;
		}
		w->total += (uint64_t)n;
		if (n >= 4 && !memcmp(head, "\x7f" "ELF", 4)) {
			if (size >= 0 && (uint64_t)size > w->lim->max_member) {
				problem(w, full, "member of %lld bytes is larger than the limit of %llu, refused",
					(long long)size, (unsigned long long)w->lim->max_member);
				continue;
			}
			read_elf(w, a, full, member, head, (size_t)n, size);
		} else if (lidia_archive_magic(head, (size_t)n)) {
			if (depth + 1 > w->lim->max_depth) {
				problem(w, full, "archives nested deeper than %u, not opened",
					w->lim->max_depth);
				continue;
			}
			walk_nested(w, a, full, head, (size_t)n, depth + 1);
		} else {
			skip_member(w, a);
		}
		if (w->total > w->lim->max_total) {
			if (!w->stop) /* said once, by the level that saw it */
				problem(w, path, "expands past %llu bytes (an archive bomb?), stopped there",
					(unsigned long long)w->lim->max_total);
			w->stop = true;
			return -1;
		}
	}
	return 0;
}

static int walk_top(struct archive *a, const char *path, const struct lidia_archive_limits *lim,
		    const struct lidia_archive_cb *cb, unsigned *problems, int open_result)
{
	struct walk w = { .lim = lim, .cb = cb };
	int err = 0;

	if (open_result != ARCHIVE_OK) {
		/* It looked like an archive (its magic): cut short or damaged. */
		problem(&w, path, "truncated or corrupt archive: %s",
			la.archive_error_string(a) ? la.archive_error_string(a) : "cannot open");
		err = LIDIA_E_ARCHIVE;
		goto out;
	}
	if (walk_entries(&w, a, path, 0) < 0 && !w.problems)
		err = LIDIA_E_ARCHIVE;
out:
	la.archive_read_free(a);
	if (problems)
		*problems = w.problems;
	return err;
}

/* A reader with every filter and format, once libarchive is loaded. */
static int open_reader(struct archive **out)
{
	if (!la_loaded())
		return LIDIA_E_NO_LIBARCHIVE;
	*out = new_reader();
	return *out ? 0 : -ENOMEM;
}

int lidia_archive_walk_fd(int fd, const char *path, const struct lidia_archive_limits *lim,
		    const struct lidia_archive_cb *cb, unsigned *problems)
{
	struct archive *a;
	int err = open_reader(&a);

	if (err)
		return err;
	return walk_top(a, path, lim, cb, problems, la.archive_read_open_fd(a, fd, 65536));
}

int lidia_archive_walk_mem(const void *buf, size_t size, const char *path,
		     const struct lidia_archive_limits *lim, const struct lidia_archive_cb *cb,
		     unsigned *problems)
{
	struct archive *a;
	int err = open_reader(&a);

	if (err)
		return err;
	return walk_top(a, path, lim, cb, problems, la.archive_read_open_memory(a, buf, size));
}
