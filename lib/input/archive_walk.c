/* SPDX-License-Identifier: Apache-2.0 */
/* Walk: ELF members of archives, nested, streamed (see lidia.h). */
#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "spill.h"

#define HEAD 512

/*
 * libarchive is loaded when the first archive is met, not at start-up: it
 * pulls in libxml2 and ICU, 3.6 MB of resident memory that a run over plain
 * ELF files never needs. The functions used are looked up once.
 */
#define ARCHIVE_FNS(X)                                                                             \
	X(struct archive *, archive_read_new, (void))                                              \
	X(int, archive_read_support_filter_all, (struct archive *))                                \
	X(int, archive_read_support_format_all, (struct archive *))                                \
	X(int, archive_read_support_format_raw, (struct archive *))                                \
	X(int, archive_read_open,                                                                  \
	  (struct archive *, void *, archive_open_callback *, archive_read_callback *,             \
	   archive_close_callback *))                                                              \
	X(int, archive_read_open_fd, (struct archive *, int, size_t))                              \
	X(int, archive_read_open_memory, (struct archive *, const void *, size_t))                 \
	X(int, archive_read_set_seek_callback, (struct archive *, archive_seek_callback *))        \
	X(int, archive_read_next_header, (struct archive *, struct archive_entry **))              \
	X(la_ssize_t, archive_read_data, (struct archive *, void *, size_t))                       \
	X(int, archive_read_data_skip, (struct archive *))                                         \
	X(const char *, archive_error_string, (struct archive *))                                  \
	X(void, archive_set_error, (struct archive *, int, const char *, ...))                     \
	X(int, archive_filter_count, (struct archive *))                                           \
	X(int, archive_format, (struct archive *))                                                 \
	X(int, archive_read_free, (struct archive *))                                              \
	X(const char *, archive_entry_pathname, (struct archive_entry *))                          \
	X(__LA_MODE_T, archive_entry_filetype, (struct archive_entry *))                           \
	X(int, archive_entry_size_is_set, (struct archive_entry *))                                \
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
#define X(ret, name, args)                                                                         \
	if (!(*(void **)&la.name = dlsym(h, #name)))                                               \
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
		{ 0, 2, "\x1f\x8b" }, /* gzip */
		{ 0, 3, "BZh" },      /* bzip2 */
		{ 0, 6,
		  "\xfd"
		  "7zXZ\x00" },			/* xz */
		{ 0, 4, "\x28\xb5\x2f\xfd" },	/* zstd */
		{ 0, 4, "\x04\x22\x4d\x18" },	/* lz4 */
		{ 0, 2, "\x5d\x00" },		/* lzma */
		{ 257, 5, "ustar" },		/* tar */
		{ 0, 4, "PK\x03\x04" },		/* zip */
		{ 0, 4, "PK\x05\x06" },		/* empty zip */
		{ 0, 8, "!<arch>\n" },		/* ar: .deb, .ddeb, .a */
		{ 0, 4, "\xed\xab\xee\xdb" },	/* rpm */
		{ 0, 6, "070701" },		/* cpio (newc) */
		{ 0, 6, "070702" },		/* cpio (crc) */
		{ 0, 6, "070707" },		/* cpio (odc) */
		{ 0, 2, "\xc7\x71" },		/* cpio (binary, little-endian) */
		{ 0, 2, "\x71\xc7" },		/* cpio (binary, big-endian) */
		{ 0, 6, "7z\xbc\xaf\x27\x1c" }, /* 7-zip */
	};

	for (size_t i = 0; i < ARRAY_SIZE(magics); i++)
		if (n >= magics[i].off + magics[i].len &&
		    !memcmp(h + magics[i].off, magics[i].bytes, magics[i].len))
			return true;
	return false;
}

/*
 * Two bytes that one file in 32768 starts with by chance (binary cpio, lzma
 * alone): a member found by them alone that libarchive cannot read is not
 * called corrupt.
 */
static bool weak_magic(const unsigned char *h, size_t n)
{
	return n >= 2 && (!memcmp(h, "\xc7\x71", 2) || !memcmp(h, "\x71\xc7", 2) ||
			  !memcmp(h, "\x5d\x00", 2));
}

struct walk {
	/* The caller's limits, defaults filled in, and its callbacks. */
	uint64_t max_member, max_total;
	unsigned max_depth;
	uint64_t spill_over;   /* members larger go to a spill file; 0: none (spill.h) */
	const char *spill_dir; /* NULL: $TMPDIR, else /tmp */
	const struct lidia_archive_opts *opts; /* NULL: no callback */
	uint64_t total;			       /* bytes inflated or declared so far, all levels */
	unsigned problems;
	bool stop;   /* the callback asked to stop, or the archive is a bomb */
	bool bombed; /* the bomb was said (by the level that saw it) */
	/* The reader whose failure was said last: a level above that fails
	 * with it is not said again, until one of its headers reads well. */
	struct archive *said;
	/* The entry ordinals of the levels open, outermost first (at[depth]: the current one's). */
	uint32_t *at;
	unsigned at_cap;
};

/* A nested archive reads its bytes from the member of its parent: first the head we peeked. */
struct nested_src {
	struct archive *parent;
	struct nested_src *up; /* the parent's own source, NULL at the top */
	const unsigned char *head;
	size_t head_len;
	bool head_done;
	bool parent_failed; /* the parent's reader failed: its reason is the one to give */
	struct walk *w;
	uint64_t consumed; /* bytes of the member read so far, head included */
	char buf[65536];
};

/* One archive being walked. */
struct level {
	struct archive *a;
	struct nested_src *src; /* NULL at the top */
	const char *path;	/* its path in messages */
	const char *member;	/* its own member name (the file name at the top) */
	unsigned depth;
	uint32_t entries; /* headers read so far, whatever their type */
	bool quiet;	  /* found by a weak magic only: its failures are not said */
	bool weak;	  /* no archive and not compressed, its head a weak magic */
};

/* A member name for messages: control characters shown as '?'. */
static void clean_name(char *dst, size_t size, const char *src)
{
	size_t i = 0;

	for (; src && *src && i + 1 < size; src++)
		dst[i++] = (unsigned char)*src < 0x20 || *src == 0x7f ? '?' : *src;
	dst[i] = '\0';
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
	if (OPTS_GET(w->opts, problem, NULL))
		w->opts->problem(w->opts->ctx, path, msg);
}

/* Whether more bytes still fit under max_total (without overflow). */
static bool fits(const struct walk *w, uint64_t more)
{
	return w->total <= w->max_total && more <= w->max_total - w->total;
}

/*
 * The archive expands past max_total: said once, by the level that saw it,
 * and the whole walk stops. declared >= 0: a header declared that many bytes
 * (path is then the member's), nothing of it is inflated.
 */
static void bomb(struct walk *w, const char *path, int64_t declared)
{
	if (!w->bombed) {
		if (declared >= 0)
			problem(w, path,
				"declares %lld bytes, past %llu for the whole archive (an archive "
				"bomb?), stopped there",
				(long long)declared, (unsigned long long)w->max_total);
		else
			problem(w, path,
				"expands past %llu bytes (an archive bomb?), stopped there",
				(unsigned long long)w->max_total);
	}
	w->bombed = w->stop = true;
}

/* Count n bytes inflated; false (the bomb said) once past max_total. */
static bool count(struct walk *w, const struct level *lv, uint64_t n)
{
	if (fits(w, n)) {
		w->total += n;
		return true;
	}
	w->total = w->max_total + 1;
	bomb(w, lv->path, -1);
	return false;
}

/*
 * A read failed at this level: say libarchive's reason, at path. A nested
 * reader fails when its parent's does: the reason is then the parent's, and
 * the parent is not said again.
 */
static void failed(struct walk *w, const struct level *lv, const char *path, const char *after)
{
	const struct nested_src *src = lv->src;
	struct archive *root = lv->a;
	const char *why;
	char raw[256], reason[256];
	size_t n;

	while (src && src->parent_failed) {
		root = src->parent;
		src = src->up;
	}
	if (w->bombed || w->said == root || w->said == lv->a || lv->quiet)
		return;
	w->said = root;
	why = la.archive_error_string(root);
	if (!why || !*why)
		why = "read error";
	n = strlen(why);
	while (n > 0 && (why[n - 1] == '\n' || why[n - 1] == ' '))
		n--; /* some of libarchive's end with a newline */
	snprintf(raw, sizeof(raw), "%.*s", (int)n, why);
	clean_name(reason, sizeof(reason), raw);
	why = reason;
	if (after)
		problem(w, path,
			"truncated or corrupt archive: %s (so '%s', read just before, is left out)",
			why, after);
	else
		problem(w, path, "truncated or corrupt archive: %s", why);
}

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
	if (n < 0) {
		s->parent_failed = true;
		return -1;
	}
	s->consumed += (uint64_t)n;
	if (n > 0 && !fits(s->w, (uint64_t)n)) {
		s->w->total = s->w->max_total + 1;
		return -1; /* the bomb is said by the level that reads this member */
	}
	s->w->total += (uint64_t)n;
	*out = s->buf;
	return n;
}

/*
 * Every filter and format, and "raw": a compressed stream that holds no
 * archive opens as one entry of its inflated bytes, rather than failing
 * like a corrupt archive.
 */
static struct archive *new_reader(void)
{
	struct archive *a = la.archive_read_new();

	if (a) {
		la.archive_read_support_filter_all(a);
		la.archive_read_support_format_all(a);
		la.archive_read_support_format_raw(a);
	}
	return a;
}

/* The header's size, -1 when it declares none. */
static int64_t declared_size(struct archive_entry *entry)
{
	int64_t size = la.archive_entry_size_is_set(entry) ? la.archive_entry_size(entry) : -1;

	return size < 0 ? -1 : size;
}

/*
 * Read past the rest of a member, done bytes of it read. A declared size is
 * counted against max_total first and libarchive skips: zip members of known
 * compressed size are not inflated at all. Without one, the rest is inflated
 * here and counted, so that a bomb stops at the limit rather than being
 * inflated whole by libarchive's own skip. Returns 0, or -1 when the level
 * cannot go on (said).
 */
static int skip_rest(struct walk *w, struct level *lv, const char *path, int64_t size,
		     uint64_t done)
{
	char buf[16384];
	la_ssize_t n;

	if (size >= 0 && done > (uint64_t)size) {
		problem(w, path,
			"holds more than the %lld bytes its header declares, stopped there",
			(long long)size);
		return -1;
	}
	if (size >= 0) {
		if (!fits(w, (uint64_t)size - done)) {
			bomb(w, path, size);
			return -1;
		}
		w->total += (uint64_t)size - done;
		if (la.archive_read_data_skip(lv->a) < ARCHIVE_WARN) {
			failed(w, lv, path, NULL);
			return -1;
		}
		return 0;
	}
	while ((n = la.archive_read_data(lv->a, buf, sizeof(buf))) > 0)
		if (!count(w, lv, (uint64_t)n))
			return -1;
	if (n < 0) {
		failed(w, lv, path, NULL);
		return -1;
	}
	return 0;
}

/* Up to size bytes of the member: fewer only at its end. */
static la_ssize_t read_full(struct archive *a, unsigned char *buf, size_t size)
{
	size_t len = 0;

	while (len < size) {
		la_ssize_t n = la.archive_read_data(a, buf + len, size - len);

		if (n < 0)
			return n;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	return (la_ssize_t)len;
}

enum { READ_OK, READ_REFUSED, READ_FAILED };

/* The member is past max_member, as the bytes show: refused, the rest read past. */
static int refuse(struct walk *w, struct level *lv, const char *path, int64_t size, uint64_t done)
{
	problem(w, path, "member larger than %llu bytes, refused",
		(unsigned long long)w->max_member);
	return skip_rest(w, lv, path, size, done) ? READ_FAILED : READ_REFUSED;
}

/* An ELF member's bytes as they are read: on the heap, or in a spill file (spill.h). */
struct member_buf {
	unsigned char *data; /* the heap's, cap bytes; NULL once spilled */
	size_t cap, len;
	struct spill *spill;
	bool mapped;	/* data: spill_map()'s mapping, not malloc'd */
	uint64_t holds; /* its bytes less the pages of zeros a spill left out */
};

static void member_buf_free(struct member_buf *mb)
{
	lidia_archive_data_free(mb->data, mb->len, mb->mapped);
	spill_free(mb->spill);
	*mb = (struct member_buf){ 0 };
}

/* Spill from here on: what the heap holds goes to the file first. 0 or -errno. */
static int start_spill(const struct walk *w, struct member_buf *mb)
{
	int err = spill_open(&mb->spill, w->spill_dir);

	if (!err && mb->len)
		err = spill_write(mb->spill, mb->data, mb->len);
	free(mb->data);
	mb->data = NULL;
	return err;
}

/*
 * Room for the next bytes, up to limit in all: the heap's buffer grown
 * (spilled instead when it would grow past spill_over), or the spill's.
 * NULL when out of memory or the spill failed (*err).
 */
static unsigned char *room(const struct walk *w, struct member_buf *mb, uint64_t limit, size_t *n,
			   int *err)
{
	unsigned char *p;

	*err = 0;
	if (!mb->spill && mb->len == mb->cap) {
		size_t cap = mb->cap > limit / 2 ? (size_t)limit : mb->cap * 2;

		if (w->spill_over && cap > w->spill_over) {
			if ((*err = start_spill(w, mb)))
				return NULL;
		} else if (!(p = realloc(mb->data, cap))) {
			*err = -ENOMEM;
			return NULL;
		} else {
			mb->data = p;
			mb->cap = cap;
		}
	}
	if (mb->spill) {
		p = spill_room(mb->spill, n);
	} else {
		p = mb->data + mb->len;
		*n = mb->cap - mb->len;
	}
	if (*n > limit - mb->len)
		*n = (size_t)(limit - mb->len);
	return p;
}

/* n bytes were read into room(). 0 or -errno (the spill's disk is full). */
static int took(struct member_buf *mb, size_t n)
{
	mb->len += n;
	return mb->spill ? spill_took(mb->spill, n) : 0;
}

/* The bytes read, as handed over: the heap's buffer, or the spill mapped. 0 or -errno. */
static int finish(struct member_buf *mb)
{
	int err;

	if (!mb->spill) {
		mb->holds = mb->len;
		return 0;
	}
	err = spill_map(mb->spill, &mb->data, &mb->holds);
	mb->spill = NULL;
	mb->mapped = !err;
	return err;
}

/* The member could not be kept (out of memory, the spill failed): said, the rest read past. */
static int cannot_keep(struct walk *w, struct level *lv, const char *path, int64_t size,
		       struct member_buf *mb, int err)
{
	uint64_t done = mb->len;

	if (err == -ENOMEM)
		problem(w, path, "out of memory reading a member of %llu bytes",
			(unsigned long long)(size >= 0 ? (uint64_t)size : mb->len));
	else
		problem(w, path, "cannot spill it to %s: %s",
			w->spill_dir ? w->spill_dir : "$TMPDIR", strerror(-err));
	member_buf_free(mb);
	return skip_rest(w, lv, path, size, done) ? READ_FAILED : READ_REFUSED;
}

/*
 * At the declared size or at the limit: the member must end here. READ_OK,
 * or the member is let go (said).
 */
static int must_end(struct walk *w, struct level *lv, const char *path, int64_t size,
		    struct member_buf *mb)
{
	uint64_t len = mb->len;
	unsigned char more;
	la_ssize_t n = la.archive_read_data(lv->a, &more, 1);

	if (n == 0)
		return READ_OK;
	member_buf_free(mb);
	if (n < 0) {
		failed(w, lv, path, NULL);
		return READ_FAILED;
	}
	if (size >= 0 && len >= (uint64_t)size) {
		skip_rest(w, lv, path, size, len + 1); /* says the header lies */
		return READ_FAILED;
	}
	if (!count(w, lv, 1))
		return READ_FAILED;
	return refuse(w, lv, path, size, len + 1);
}

/*
 * The rest of an ELF member after its head, into *mb. The declared size
 * sizes the buffer and is checked before anything is inflated; the bytes
 * are checked against it and against max_member as they come, whatever
 * the header said. Past spill_over (when set), the bytes go to a spill
 * file rather than the heap: at once when the header declares that much.
 */
static int read_elf(struct walk *w, struct level *lv, const char *path, int64_t size,
		    const unsigned char *head, size_t head_len, struct member_buf *mb)
{
	uint64_t max = w->max_member, limit;
	int err = 0;

	*mb = (struct member_buf){ 0 };
	if (size >= 0 && head_len > (uint64_t)size) {
		skip_rest(w, lv, path, size, head_len); /* says the header lies */
		return READ_FAILED;
	}
	if (size >= 0 && (uint64_t)size > max) {
		problem(w, path, "member of %lld bytes is larger than the limit of %llu, refused",
			(long long)size, (unsigned long long)max);
		return skip_rest(w, lv, path, size, head_len) ? READ_FAILED : READ_REFUSED;
	}
	if (head_len > max)
		return refuse(w, lv, path, size, head_len);
	limit = size >= 0 ? (uint64_t)size : max;
	mb->cap = size >= 0 ? (size_t)size : head_len * 2 + 65536;
	if (mb->cap > max)
		mb->cap = (size_t)max;
	if (w->spill_over && mb->cap > w->spill_over)
		err = spill_open(&mb->spill, w->spill_dir);
	else if (!(mb->data = malloc(mb->cap ? mb->cap : 1)))
		err = -ENOMEM;
	if (!err && mb->spill)
		err = spill_write(mb->spill, head, head_len);
	else if (!err)
		memcpy(mb->data, head, head_len);
	mb->len = head_len;
	if (err)
		return cannot_keep(w, lv, path, size, mb, err);
	for (;;) {
		unsigned char *to;
		size_t want;
		la_ssize_t n;

		if (mb->len >= limit) {
			if ((err = must_end(w, lv, path, size, mb)) != READ_OK)
				return err;
			break;
		}
		if (!(to = room(w, mb, limit, &want, &err)))
			return cannot_keep(w, lv, path, size, mb, err);
		n = la.archive_read_data(lv->a, to, want);
		if (n < 0) {
			member_buf_free(mb);
			failed(w, lv, path, NULL);
			return READ_FAILED;
		}
		if (n == 0)
			break;
		if ((err = took(mb, (size_t)n)))
			return cannot_keep(w, lv, path, size, mb, err);
		if (!count(w, lv, (uint64_t)n)) {
			member_buf_free(mb);
			return READ_FAILED;
		}
	}
	if ((err = finish(mb)))
		return cannot_keep(w, lv, path, size, mb, err);
	return READ_OK;
}

/*
 * An ELF member read whole waits for the next header before it is handed
 * over: a compressed stream gone bad shows first as a damaged header, and a
 * member read just before that is more likely garbage than an ELF file.
 */
struct held {
	struct member_buf mb;
	char *path, *member;
	uint32_t ordinal; /* its entry at its level (the levels above are the walk's) */
};

static void drop(struct held *h)
{
	member_buf_free(&h->mb);
	free(h->path);
	free(h->member);
	*h = (struct held){ 0 };
}

/* Room in w->at for the ordinals of levels 0..depth; false when out of memory. */
static bool room_for(struct walk *w, unsigned depth)
{
	uint32_t *p;
	unsigned cap;

	if (depth < w->at_cap)
		return true;
	cap = depth + 4;
	if (!(p = realloc(w->at, cap * sizeof(*p))))
		return false;
	w->at = p;
	w->at_cap = cap;
	return true;
}

/* The member at the current entry of a level (depth) as the callbacks see it. */
static struct lidia_archive_member member_at(const struct walk *w, unsigned depth, const char *path,
					     const char *member)
{
	return (struct lidia_archive_member){ path, member, w->at, depth + 1, false, 0 };
}

/*
 * An ELF member to the caller's callback, which takes its bytes over; or
 * dropped, without one. Only elf_member is told how they are held: spilling
 * is for it alone (set_limits).
 */
static void give(struct walk *w, unsigned depth, const char *path, const char *member,
		 struct member_buf *mb)
{
	struct lidia_archive_member m = member_at(w, depth, path, member);
	int stop = 0;

	m.mapped = mb->mapped;
	m.holds = mb->holds;
	if (OPTS_GET(w->opts, elf_member, NULL))
		stop = w->opts->elf_member(w->opts->ctx, &m, mb->data, mb->len);
	else if (OPTS_GET(w->opts, elf, NULL))
		stop = w->opts->elf(w->opts->ctx, path, member, mb->data, mb->len);
	else
		member_buf_free(mb);
	*mb = (struct member_buf){ 0 }; /* given */
	if (stop)
		w->stop = true;
}

/* Whether the caller wants the member at the level's current entry looked at. */
static bool wanted(const struct walk *w, unsigned depth, const char *path, const char *member)
{
	struct lidia_archive_member m = member_at(w, depth, path, member);

	if (OPTS_GET(w->opts, want_member, NULL))
		return w->opts->want_member(w->opts->ctx, &m);
	return !OPTS_GET(w->opts, want, NULL) || w->opts->want(w->opts->ctx, member);
}

/* The member held, under its own ordinal: the level's has moved on to the next header. */
static void hand_over(struct walk *w, const struct level *lv, struct held *h)
{
	if (h->mb.data && !w->stop) {
		uint32_t now = w->at[lv->depth];

		w->at[lv->depth] = h->ordinal;
		give(w, lv->depth, h->path, h->member, &h->mb);
		w->at[lv->depth] = now;
	}
	drop(h);
}

static int walk_entries(struct walk *w, struct level *lv);

/*
 * A small member of neither kind, its head read, to other_member whole (a
 * container image's JSON). Returns 0, or -1 when the level cannot go on.
 */
static int give_other(struct walk *w, struct level *lv, const char *path, const char *member,
		      int64_t size, const unsigned char *head, size_t n)
{
	struct lidia_archive_member m = member_at(w, lv->depth, path, member);
	unsigned char *buf = malloc((size_t)size + 1);
	la_ssize_t more = 0;

	if (!buf) {
		problem(w, path, "out of memory");
		return skip_rest(w, lv, path, size, n);
	}
	memcpy(buf, head, n);
	if ((uint64_t)size > n && (more = read_full(lv->a, buf + n, (size_t)size - n)) < 0) {
		free(buf);
		failed(w, lv, path, NULL);
		return 0;
	}
	if (!count(w, lv, (uint64_t)more)) {
		free(buf);
		return -1;
	}
	n += (size_t)more;
	buf[n] = '\0';
	if (w->opts->other_member(w->opts->ctx, &m, buf, n))
		w->stop = true;
	free(buf);
	return w->stop ? -1 : skip_rest(w, lv, path, size, n);
}

/* Open the archive inside a member (its head already read) and walk it. */
static int walk_nested(struct walk *w, struct level *parent, const char *path, const char *member,
		       const unsigned char *head, size_t head_len, int64_t size)
{
	struct nested_src *src = calloc(1, sizeof(*src));
	struct level lv = {
		.src = src, .path = path, .member = member, .depth = parent->depth + 1
	};
	bool parent_failed;
	uint64_t consumed;

	if (!src || !room_for(w, lv.depth) || !(lv.a = new_reader())) {
		problem(w, path, "out of memory");
		free(src);
		return skip_rest(w, parent, path, size, head_len);
	}
	*src = (struct nested_src){ .parent = parent->a,
				    .up = parent->src,
				    .head = head,
				    .head_len = head_len,
				    .w = w,
				    .consumed = head_len };
	/* Its own failures are said here; the parent goes on after it. */
	if (la.archive_read_open(lv.a, src, NULL, nested_read, NULL) != ARCHIVE_OK) {
		if (fits(w, 0))
			failed(w, &lv, path, NULL);
	} else {
		lv.quiet = la.archive_filter_count(lv.a) <= 1 && weak_magic(head, head_len);
		walk_entries(w, &lv);
	}
	if (!fits(w, 0))
		bomb(w, parent->path, -1);
	la.archive_read_free(lv.a);
	if (w->said == lv.a)
		w->said = NULL; /* its address may be the next reader's */
	parent_failed = src->parent_failed;
	consumed = src->consumed;
	free(src);
	if (w->stop)
		return -1;
	if (parent_failed)
		return 0; /* said; the parent's next header says whether it can go on */
	return skip_rest(w, parent, path, size, consumed);
}

/*
 * A compressed stream with no archive in it (libarchive's raw format: one
 * entry, its inflated bytes): an ELF file in it is handed over under the
 * compressed file's own path and member name; anything else is not ours.
 * Returns 0, 1 when it holds no ELF file, or -1.
 */
static int walk_raw(struct walk *w, struct level *lv)
{
	unsigned char head[HEAD];
	struct member_buf mb;
	la_ssize_t n;

	if ((n = read_full(lv->a, head, sizeof(head))) < 0) {
		failed(w, lv, lv->path, NULL);
		return -1;
	}
	if (!count(w, lv, (uint64_t)n))
		return -1;
	if (la.archive_filter_count(lv->a) <= 1) {
		/* Not even compressed: it only looked like an archive. */
		lv->weak = weak_magic(head, (size_t)n);
		return 1;
	}
	if (n < 4 || memcmp(head,
			    "\x7f"
			    "ELF",
			    4))
		return 1;
	if (read_elf(w, lv, lv->path, -1, head, (size_t)n, &mb) != READ_OK)
		return 0;
	give(w, lv->depth, lv->path, lv->member, &mb);
	return 0;
}

/* One regular member whose header was read. Returns 0, or -1 when the level cannot go on. */
static int walk_member(struct walk *w, struct level *lv, struct archive_entry *entry,
		       struct held *held)
{
	unsigned char head[HEAD];
	char member[1024], full[4096];
	int64_t size = declared_size(entry);
	la_ssize_t n;

	clean_name(member, sizeof(member), la.archive_entry_pathname(entry));
	snprintf(full, sizeof(full), "%s!%s", lv->path, member);
	if (!wanted(w, lv->depth, full, member))
		return skip_rest(w, lv, full, size, 0);
	if (size >= 0 && !fits(w, (uint64_t)size)) {
		bomb(w, full, size); /* before inflating any of it */
		return -1;
	}
	if ((n = read_full(lv->a, head, sizeof(head))) < 0) {
		failed(w, lv, full, NULL);
		return 0; /* the next header says whether the level can go on */
	}
	if (!count(w, lv, (uint64_t)n))
		return -1;
	if (n >= 4 && !memcmp(head,
			      "\x7f"
			      "ELF",
			      4)) {
		switch (read_elf(w, lv, full, size, head, (size_t)n, &held->mb)) {
		case READ_OK:
			held->path = strdup(full);
			held->member = strdup(member);
			held->ordinal = w->at[lv->depth];
			if (!held->path || !held->member) {
				problem(w, full, "out of memory");
				drop(held);
			}
			return 0;
		case READ_REFUSED:
			return 0;
		default:
			return -1;
		}
	}
	if (lidia_archive_magic(head, (size_t)n)) {
		if (lv->depth + 1 > w->max_depth) {
			problem(w, full, "archives nested deeper than %u, not opened",
				w->max_depth);
			return skip_rest(w, lv, full, size, (uint64_t)n);
		}
		return walk_nested(w, lv, full, member, head, (size_t)n, size);
	}
	if (OPTS_GET(w->opts, other_member, NULL) && size >= 0 &&
	    (uint64_t)size <= OPTS_GET(w->opts, other_max, 0))
		return give_other(w, lv, full, member, size, head, (size_t)n);
	return skip_rest(w, lv, full, size, (uint64_t)n);
}

/* An entry that is no regular file, named to other_entry (its data, if any, never read). */
static void tell_other(struct walk *w, const struct level *lv, struct archive_entry *entry)
{
	char member[1024], full[4096];
	struct lidia_archive_member m;

	if (!OPTS_GET(w->opts, other_entry, NULL))
		return;
	clean_name(member, sizeof(member), la.archive_entry_pathname(entry));
	snprintf(full, sizeof(full), "%s!%s", lv->path, member);
	m = member_at(w, lv->depth, full, member);
	w->opts->other_entry(w->opts->ctx, &m);
}

/* Every member of one archive. Returns 0, 1 when it turned out to be no archive, or -1. */
static int walk_entries(struct walk *w, struct level *lv)
{
	struct held held = { 0 };
	struct archive_entry *entry;
	bool first = true;
	int r, err = 0;

	while (!w->stop && (r = la.archive_read_next_header(lv->a, &entry)) != ARCHIVE_EOF) {
		if (r == ARCHIVE_FATAL || r == ARCHIVE_RETRY) {
			if (!w->stop && fits(w, 0))
				failed(w, lv, lv->path, held.mb.data ? held.member : NULL);
			err = -1;
			break;
		}
		if (first && la.archive_format(lv->a) == ARCHIVE_FORMAT_RAW) {
			w->at[lv->depth] = lv->entries++; /* its one entry: 0 */
			return walk_raw(w, lv);
		}
		first = false;
		w->said = NULL;
		hand_over(w, lv, &held);
		w->at[lv->depth] = lv->entries++;
		if (w->stop)
			continue;
		if (la.archive_entry_filetype(entry) != AE_IFREG) {
			tell_other(w, lv, entry);
			continue;
		}
		if (walk_member(w, lv, entry, &held) < 0) {
			err = -1;
			break;
		}
	}
	if (!err && !w->stop)
		hand_over(w, lv, &held);
	drop(&held);
	if (first && !err && la.archive_filter_count(lv->a) > 1 &&
	    (la.archive_format(lv->a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_EMPTY)
		return 1; /* a compressed empty stream */
	return err;
}

/* The limits of opts, its zeros (and what an older caller's struct lacks) the defaults. */
static void set_limits(struct walk *w, const struct lidia_archive_opts *opts)
{
	int depth = OPTS_GET(opts, max_depth, 0);

	w->opts = opts;
	w->max_member = OPTS_GET(opts, max_member, 0) ?: LIDIA_ARCHIVE_MAX_MEMBER;
	w->max_total = OPTS_GET(opts, max_total, 0) ?: LIDIA_ARCHIVE_MAX_TOTAL;
	w->max_depth = depth < 0 ? 0 : depth ? (unsigned)depth : LIDIA_ARCHIVE_MAX_DEPTH;
	/* Only elf_member learns that a member is mapped: elf's callers free() what they get. */
	if (OPTS_GET(opts, elf_member, NULL)) {
		w->spill_over = OPTS_GET(opts, spill_over, 0);
		w->spill_dir = OPTS_GET(opts, spill_dir, NULL);
	}
}

static int walk_top(struct archive *a, const char *path, const struct lidia_archive_opts *opts,
		    unsigned *problems, int open_result)
{
	struct walk w = { 0 };
	const char *base = strrchr(path, '/');
	struct level lv = { .a = a, .path = path, .member = base ? base + 1 : path };
	int err = 0;

	set_limits(&w, opts);
	if (!room_for(&w, 0)) {
		err = -ENOMEM;
		goto out;
	}
	if (open_result != ARCHIVE_OK) {
		/* It looked like an archive (its magic): cut short or damaged. */
		problem(&w, path, "truncated or corrupt archive: %s",
			la.archive_error_string(a) ? la.archive_error_string(a) : "cannot open");
		err = LIDIA_E_ARCHIVE;
		goto out;
	}
	switch (walk_entries(&w, &lv)) {
	case 1:
		if (la.archive_filter_count(a) > 1 || lv.weak)
			err = LIDIA_E_NOT_ELF;
		else
			problem(&w, path,
				"truncated or corrupt archive: unrecognized archive format");
		break;
	case -1:
		if (!w.problems)
			err = LIDIA_E_ARCHIVE;
		break;
	}
out:
	la.archive_read_free(a);
	free(w.at);
	if (problems)
		*problems = w.problems;
	return err;
}

/* A reader with every filter and format, once libarchive is loaded and opts checked. */
static int open_reader(struct archive **out, const struct lidia_archive_opts *opts,
		       unsigned *problems)
{
	if (problems)
		*problems = 0;
	if (!OPTS_VALID(opts, lidia_archive_opts))
		return LIDIA_E_INVAL;
	if (!la_loaded())
		return LIDIA_E_NO_LIBARCHIVE;
	*out = new_reader();
	return *out ? 0 : -ENOMEM;
}

/*
 * The top-level file when opts' file_bytes is set: read at the walk's own
 * offsets (its seeks are only offsets here), and each byte handed over
 * once, in order: a read past what was handed over reads the gap first.
 */
struct fd_src {
	int fd;
	const struct lidia_archive_opts *opts;
	int64_t pos;	 /* where the walk reads next */
	uint64_t handed; /* the file's [0, handed) went to file_bytes */
	bool end;	 /* handed over to the end of the file, or a read failed */
	unsigned char buf[1 << 16];
};

/* pread all of n bytes but at the end of the file; -1 on failure (errno). */
static ssize_t pread_full(int fd, unsigned char *buf, size_t n, uint64_t at)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, buf + got, n - got, (off_t)(at + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (!r)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* Hand over the file's bytes from s->handed up to end (or its end of file). */
static void catch_up(struct fd_src *s, uint64_t end)
{
	while (!s->end && s->handed < end) {
		uint64_t want = end - s->handed;
		ssize_t n = pread_full(s->fd, s->buf,
				       want < sizeof(s->buf) ? (size_t)want : sizeof(s->buf),
				       s->handed);

		if (n <= 0) {
			s->end = true; /* a short total tells the caller */
			return;
		}
		s->opts->file_bytes(s->opts->ctx, s->buf, (size_t)n);
		s->handed += (uint64_t)n;
	}
}

static la_ssize_t fd_src_read(struct archive *a, void *ctx, const void **out)
{
	struct fd_src *s = ctx;
	ssize_t n;

	catch_up(s, (uint64_t)s->pos);
	if ((n = pread_full(s->fd, s->buf, sizeof(s->buf), (uint64_t)s->pos)) < 0) {
		la.archive_set_error(a, errno, "read error");
		return -1;
	}
	/* The part of it not handed over yet (none when the walk sought back). */
	if (n && (uint64_t)s->pos + (uint64_t)n > s->handed && (uint64_t)s->pos <= s->handed) {
		uint64_t skip = s->handed - (uint64_t)s->pos;

		s->opts->file_bytes(s->opts->ctx, s->buf + skip, (size_t)n - skip);
		s->handed += (uint64_t)n - skip;
	}
	s->pos += n;
	*out = s->buf;
	return n;
}

static la_int64_t fd_src_seek(struct archive *a, void *ctx, la_int64_t off, int whence)
{
	struct fd_src *s = ctx;
	struct stat st;
	int64_t base = whence == SEEK_CUR ? s->pos : 0;

	if (whence == SEEK_END) {
		if (fstat(s->fd, &st)) {
			la.archive_set_error(a, errno, "cannot seek");
			return ARCHIVE_FATAL;
		}
		base = st.st_size;
	}
	if (off < -base || (off > 0 && base > INT64_MAX - off)) {
		la.archive_set_error(a, EINVAL, "seek out of range");
		return ARCHIVE_FATAL;
	}
	s->pos = base + off;
	return s->pos;
}

/* lidia_archive_walk_fd() with file_bytes: the file from its start, then what is left of it. */
static int walk_fd_handing(struct archive *a, int fd, const char *path,
			   const struct lidia_archive_opts *opts, unsigned *problems)
{
	struct fd_src *s = malloc(sizeof(*s));
	int err;

	if (!s) {
		la.archive_read_free(a);
		return -ENOMEM;
	}
	*s = (struct fd_src){ .fd = fd, .opts = opts };
	la.archive_read_set_seek_callback(a, fd_src_seek);
	err = walk_top(a, path, opts, problems,
		       la.archive_read_open(a, s, NULL, fd_src_read, NULL));
	catch_up(s, UINT64_MAX);
	free(s);
	return err;
}

int lidia_archive_walk_fd(int fd, const char *path, const struct lidia_archive_opts *opts,
			  unsigned *problems)
{
	struct archive *a;
	int err = open_reader(&a, opts, problems);

	if (err)
		return err;
	if (OPTS_GET(opts, file_bytes, NULL))
		return walk_fd_handing(a, fd, path, opts, problems);
	return walk_top(a, path, opts, problems, la.archive_read_open_fd(a, fd, 65536));
}

int lidia_archive_walk_mem(const void *buf, size_t size, const char *path,
			   const struct lidia_archive_opts *opts, unsigned *problems)
{
	struct archive *a;
	int err = open_reader(&a, opts, problems);

	if (err)
		return err;
	if (OPTS_GET(opts, file_bytes, NULL))
		opts->file_bytes(opts->ctx, buf, size);
	return walk_top(a, path, opts, problems, la.archive_read_open_memory(a, buf, size));
}

void lidia_archive_data_free(unsigned char *data, size_t size, bool mapped)
{
	if (mapped && data)
		munmap(data, size);
	else if (!mapped)
		free(data);
}
