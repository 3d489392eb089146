/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The API's own contracts, beside what the other unit tests check of the
 * format:
 *
 * - Options structs (lidia_reader_opts, lidia_extract_opts, lidia_store_opts,
 *   lidia_archive_opts) as a caller built against another lidia.h passes
 *   them: NULL gives the defaults; a larger struct (a newer header) is
 *   accepted when every byte past the fields this library knows is zero,
 *   and its known fields are honoured; a non-zero byte there, in the tail
 *   padding of the last field or past the struct, is LIDIA_E_INVAL before
 *   any work; a smaller struct (an older header) has its missing fields
 *   defaulted; sz 0 (never set) is LIDIA_E_INVAL.
 * - lidia_set_log returns the pair it replaces, and while threads log and
 *   another swaps callbacks, every message reaches a whole pair.
 * - The CRC32C tables are set up once, whichever threads come first.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builder.h"
#include "crc32c.h"
#include "format.h"
#include "internal.h"
#include "lidia.h"
#include "unit.h"

/* A struct as a newer lidia.h makes it: ours, then 16 bytes of fields we do not know. */
#define NEWER(type)                                                                                \
	union {                                                                                    \
		struct type o;                                                                     \
		unsigned char b[sizeof(struct type) + 16];                                         \
	}

/* Where the fields this library knows end: right after the struct's last one. */
#define KNOWN_END(type, last) (offsetof(struct type, last) + sizeof(((struct type *)0)->last))

/* ---- lidia_reader_opts ---- */

/* A one-range file whose VA table CRC is wrong: check_crc, when honoured, refuses it. */
static void *bad_crc_file(size_t *len)
{
	struct lidia_range_desc d = { .va = 0x1000, .length = 0x10, .func = "f" };
	struct lidia_builder *b;
	void *buf = NULL;

	if (lidia_builder_new(&b) || lidia_builder_add(b, &d) || lidia_builder_finalize(b) ||
	    lidia_builder_write_mem(b, &buf, len))
		abort();
	lidia_builder_free(b);
	((unsigned char *)buf)[0x20] ^= 0xff; /* the VA table's CRC (spec section 2) */
	return buf;
}

static int open_mem(const void *buf, size_t len, const struct lidia_reader_opts *opts)
{
	static char poison;
	struct lidia_reader *r = (struct lidia_reader *)&poison;
	int err = lidia_reader_open_mem(&r, buf, len, opts);

	if (err && r)
		return 1; /* a failed open must leave *out NULL */
	lidia_reader_close(r);
	return err;
}

static void reader_opts(void)
{
	NEWER(lidia_reader_opts) u;
	size_t len, end = KNOWN_END(lidia_reader_opts, check_crc);
	void *buf = bad_crc_file(&len);
	struct lidia_reader *r;
	char path[] = "/tmp/lidia-test-api-XXXXXX";
	int fd, err;

	CHECK(open_mem(buf, len, NULL) == 0, "reader: NULL opts: the defaults (no CRC check)");
	CHECK(open_mem(buf, len, &LIDIA_READER_OPTS(.check_crc = true)) == LIDIA_E_CRC,
	      "reader: LIDIA_READER_OPTS(.check_crc = true) checks the CRCs");

	memset(&u, 0, sizeof(u));
	u.o.sz = sizeof(u);
	u.o.check_crc = true;
	CHECK(open_mem(buf, len, &u.o) == LIDIA_E_CRC,
	      "reader: a larger struct with a zero tail is accepted and check_crc honoured");
	u.b[end] = 1;
	CHECK(open_mem(buf, len, &u.o) == LIDIA_E_INVAL,
	      "reader: a non-zero byte right after check_crc (in today's padding): LIDIA_E_INVAL");
	u.b[end] = 0;
	u.b[sizeof(u) - 1] = 0x80;
	CHECK(open_mem(buf, len, &u.o) == LIDIA_E_INVAL,
	      "reader: a non-zero byte at the end of a larger struct: LIDIA_E_INVAL");

	/* Validated before any I/O, on every entry point. */
	r = (struct lidia_reader *)&u;
	err = lidia_reader_open(&r, "/nonexistent/lidia-test-api", &u.o);
	CHECK(err == LIDIA_E_INVAL && !r, "reader: lidia_reader_open refuses it before opening");
	r = (struct lidia_reader *)&u;
	err = lidia_reader_open_fd(&r, -1, &u.o);
	CHECK(err == LIDIA_E_INVAL && !r, "reader: lidia_reader_open_fd refuses it before reading");
	fd = mkstemp(path);
	if (fd >= 0 && lidia_write_all(fd, buf, len) == 0) {
		err = lidia_reader_open(&r, path, &u.o);
		CHECK(err == LIDIA_E_INVAL && !r,
		      "reader: a real file with that struct: LIDIA_E_INVAL");
		u.b[sizeof(u) - 1] = 0;
		err = lidia_reader_open(&r, path, &u.o);
		CHECK(err == LIDIA_E_CRC && !r,
		      "reader: the same file with the tail zeroed: opened, its CRC checked");
	}
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}

	/* An older header's struct stops before check_crc: it reads as false. */
	memset(&u, 0, sizeof(u));
	u.o.check_crc = true;
	u.o.sz = offsetof(struct lidia_reader_opts, check_crc);
	CHECK(open_mem(buf, len, &u.o) == 0,
	      "reader: a smaller struct (without check_crc): the field past it is not read");
	u.o.sz = 0;
	CHECK(open_mem(buf, len, &u.o) == LIDIA_E_INVAL, "reader: sz 0 (never set): LIDIA_E_INVAL");
	free(buf);
}

/* ---- lidia_store_opts ---- */

#define ID "0123456789abcdef0123456789abcdef"

static void store_opts(void)
{
	NEWER(lidia_store_opts) u;
	size_t end = KNOWN_END(lidia_store_opts, key_template), removed = 7;
	char key[LIDIA_KEY_MAX + 64];
	int err;

	err = lidia_store_key(key, sizeof(key), ID, NULL);
	CHECK(!err && !strcmp(key, "symbolizer/anonymous/" ID), "store: NULL opts: %s", key);
	CHECK(lidia_store_key(key, sizeof(key), "0000000000000000000000000000000000000000", NULL) ==
			      LIDIA_E_BAD_KEY &&
		      lidia_store_key(key, sizeof(key), "ffffffffffffffffffffffffffffffff", NULL) ==
			      LIDIA_E_BAD_KEY &&
		      !lidia_store_build_id_valid("ffffffffffffffff"),
	      "store: an all-zero or all-0xff build ID is no key (two programs would share it)");

	memset(&u, 0, sizeof(u));
	u.o.sz = sizeof(u);
	u.o.tenant = "team-a";
	err = lidia_store_key(key, sizeof(key), ID, &u.o);
	CHECK(!err && !strcmp(key, "symbolizer/team-a/" ID),
	      "store: a larger struct with a zero tail is accepted and its tenant honoured");
	u.b[end] = 1;
	err = lidia_store_key(key, sizeof(key), ID, &u.o);
	CHECK(err == LIDIA_E_INVAL, "store: lidia_store_key with a non-zero tail: LIDIA_E_INVAL");
	err = lidia_store_clean("/nonexistent", &u.o, &removed);
	CHECK(err == LIDIA_E_INVAL && removed == 0,
	      "store: lidia_store_clean with a non-zero tail: LIDIA_E_INVAL, nothing removed");

	/* An older struct that ends before tenant: "anonymous". */
	memset(&u, 0, sizeof(u));
	u.o.tenant = "team-a";
	u.o.sz = offsetof(struct lidia_store_opts, tenant);
	err = lidia_store_key(key, sizeof(key), ID, &u.o);
	CHECK(!err && !strcmp(key, "symbolizer/anonymous/" ID),
	      "store: a smaller struct (without tenant): the field past it is not read");
}

/* ---- lidia_extract_opts ---- */

static int extract_self(const struct lidia_extract_opts *opts, size_t *count)
{
	struct lidia_elf *elf;
	struct lidia_builder *b;
	int err;

	*count = 0;
	if (lidia_elf_open(&elf, "/proc/self/exe"))
		return 1;
	if (lidia_builder_new(&b))
		abort();
	err = lidia_extract(b, &elf, 1, opts, NULL);
	*count = lidia_builder_count(b);
	lidia_builder_free(b);
	lidia_elf_close(elf);
	return err;
}

static void extract_opts(void)
{
	NEWER(lidia_extract_opts) u;
	size_t end = KNOWN_END(lidia_extract_opts, no_debug_search), all, symbols, n;
	int err;

	err = extract_self(NULL, &all);
	CHECK(!err && all > 0, "extract: NULL opts: the defaults (%zu ranges of this test)", all);
	err = extract_self(&LIDIA_EXTRACT_OPTS(.no_dwarf = true, .no_debug_search = true),
			   &symbols);
	/* This test is built with -g: DWARF adds inline ranges to the symbols. */
	CHECK(!err && symbols > 0 && symbols < all,
	      "extract: LIDIA_EXTRACT_OPTS(.no_dwarf = true): symbols only (%zu ranges)", symbols);

	memset(&u, 0, sizeof(u));
	u.o.sz = sizeof(u);
	u.o.no_dwarf = u.o.no_debug_search = true;
	err = extract_self(&u.o, &n);
	CHECK(!err && n == symbols,
	      "extract: a larger struct with a zero tail is accepted and no_dwarf honoured");
	u.b[end] = 1;
	err = extract_self(&u.o, &n);
	CHECK(err == LIDIA_E_INVAL && n == 0,
	      "extract: a non-zero byte right after no_debug_search: LIDIA_E_INVAL, nothing added");
	u.b[end] = 0;
	u.b[sizeof(u) - 1] = 1;
	err = extract_self(&u.o, &n);
	CHECK(err == LIDIA_E_INVAL && n == 0,
	      "extract: a non-zero byte at the end of a larger struct: LIDIA_E_INVAL");
}

/* ---- lidia_archive_opts ---- */

/* An ar archive (a .deb's outer format) of count members, all "app", that start like ELF. */
static size_t make_ar(unsigned char *buf, int count)
{
	size_t n = 8;

	memcpy(buf, "!<arch>\n", 8);
	for (int i = 0; i < count; i++) {
		n += (size_t)sprintf((char *)buf + n, "%-16s%-12s%-6s%-6s%-8s%-10s`\n", "app/", "0",
				     "0", "0", "100644", "64");
		memset(buf + n, 0, 64);
		memcpy(buf + n,
		       "\x7f"
		       "ELF",
		       4);
		buf[n + 4] = (unsigned char)i; /* tells them apart */
		n += 64;
	}
	return n;
}

struct members {
	unsigned elves, problems;
	char path[64];
};

static int on_elf(void *ctx, const char *path, const char *member, unsigned char *data, size_t size)
{
	struct members *m = ctx;

	m->elves++;
	snprintf(m->path, sizeof(m->path), "%s", path);
	free(data);
	return 0;
}

/* Each member's position, by the byte that tells it apart (make_ar). */
struct positions {
	unsigned elves, depth[4];
	uint32_t at[4];
};

static int on_elf_member(void *ctx, const struct lidia_archive_member *m, unsigned char *data,
			 size_t size)
{
	struct positions *p = ctx;

	if (size > 4 && data[4] < 4 && m->depth) {
		p->depth[data[4]] = m->depth;
		p->at[data[4]] = m->at[m->depth - 1];
	}
	p->elves++;
	free(data);
	return 0;
}

/* Three members of one name: each has its own position, whatever the name says. */
static void archive_positions(void)
{
	unsigned char ar[512];
	size_t len = make_ar(ar, 3);
	struct positions p = { 0 };
	struct lidia_archive_opts o = LIDIA_ARCHIVE_OPTS(.elf_member = on_elf_member, .ctx = &p);
	int err = lidia_archive_walk_mem(ar, len, "in", &o, NULL);

	if (err == LIDIA_E_NO_LIBARCHIVE)
		return;
	CHECK(err == 0 && p.elves == 3 && p.depth[0] == 1 && p.depth[2] == 1 && p.at[0] == 0 &&
		      p.at[1] == 1 && p.at[2] == 2,
	      "archive: three members named app: positions 0, 1, 2 (got %u %u %u of %u)", p.at[0],
	      p.at[1], p.at[2], p.elves);
}

/* How a member came: mapped or not, what it holds, and whether its bytes are the ones put in. */
struct spilled {
	unsigned elves, mapped;
	uint64_t holds;
	bool bytes_right;
};

static int on_spilled(void *ctx, const struct lidia_archive_member *m, unsigned char *data,
		      size_t size)
{
	struct spilled *sp = ctx;

	sp->elves++;
	sp->mapped += m->mapped;
	sp->holds = m->holds;
	sp->bytes_right = size == 64 && !memcmp(data,
						"\x7f"
						"ELF",
						4);
	lidia_archive_data_free(data, size, m->mapped);
	return 0;
}

/*
 * spill_over: a member past it comes mapped (from an unnamed file), its
 * bytes the same; not past it, or to a caller that cannot be told (elf,
 * or an older struct), on the heap.
 */
static void archive_spill(void)
{
	unsigned char ar[256];
	size_t len = make_ar(ar, 1);
	struct spilled sp = { 0 };
	struct lidia_archive_opts o =
		LIDIA_ARCHIVE_OPTS(.elf_member = on_spilled, .ctx = &sp, .spill_over = 16);
	struct members m = { 0 };
	int err = lidia_archive_walk_mem(ar, len, "in", &o, NULL);

	CHECK(err == 0 && sp.elves == 1 && sp.mapped == 1 && sp.bytes_right && sp.holds == 64,
	      "archive: spill_over 16: the 64-byte member comes mapped, the same bytes, holding "
	      "64 (%u mapped, holds %llu)",
	      sp.mapped, (unsigned long long)sp.holds);
	sp = (struct spilled){ 0 };
	o.spill_over = 64;
	err = lidia_archive_walk_mem(ar, len, "in", &o, NULL);
	CHECK(err == 0 && sp.elves == 1 && sp.mapped == 0 && sp.bytes_right,
	      "archive: spill_over 64: the 64-byte member stays on the heap");
	sp = (struct spilled){ 0 };
	o.spill_over = 16;
	o.sz = KNOWN_END(lidia_archive_opts, want_member);
	err = lidia_archive_walk_mem(ar, len, "in", &o, NULL);
	CHECK(err == 0 && sp.elves == 1 && sp.mapped == 0,
	      "archive: a struct ending at want_member (an older lidia.h) is never spilled");
	o = LIDIA_ARCHIVE_OPTS(.elf = on_elf, .ctx = &m, .spill_over = 16);
	err = lidia_archive_walk_mem(ar, len, "in", &o, NULL); /* on_elf free()s: not mapped */
	CHECK(err == 0 && m.elves == 1, "archive: the elf callback is given malloc'd bytes");
}

/* What file_bytes was handed: the bytes, in order, and how many calls. */
struct handed {
	unsigned char buf[1024];
	size_t n;
	unsigned elves;
	bool overflow;
};

static void on_file_bytes(void *ctx, const unsigned char *data, size_t size)
{
	struct handed *h = ctx;

	if (h->n + size > sizeof(h->buf)) {
		h->overflow = true;
		return;
	}
	memcpy(h->buf + h->n, data, size);
	h->n += size;
}

/* The first member stops the walk: file_bytes still gets the file to its end. */
static int stop_at_first(void *ctx, const struct lidia_archive_member *m, unsigned char *data,
			 size_t size)
{
	((struct handed *)ctx)->elves++;
	free(data);
	return 1;
}

/* A file of len bytes of buf, already unlinked: its fd, or -1. */
static int unlinked_file(const unsigned char *buf, size_t len)
{
	char path[] = "/tmp/lidia-test-api-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	if (fd >= 0 && write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void archive_file_bytes(void)
{
	struct handed h = { 0 };
	unsigned char ar[512];
	size_t len = make_ar(ar, 3);
	int fd = unlinked_file(ar, len), err;
	struct lidia_archive_opts o = LIDIA_ARCHIVE_OPTS(.elf_member = stop_at_first, .ctx = &h,
							 .file_bytes = on_file_bytes);

	if (fd < 0) {
		CHECK(0, "archive file_bytes: a temporary file");
		return;
	}
	err = lidia_archive_walk_fd(fd, "in", &o, NULL);
	CHECK(err == 0 && h.elves == 1 && !h.overflow && h.n == len && !memcmp(h.buf, ar, len),
	      "archive file_bytes: the walk stopped at its first member, the file handed over "
	      "whole, in order (%zu of %zu bytes)",
	      h.n, len);
	h = (struct handed){ 0 };
	err = lidia_archive_walk_mem(ar, len, "in", &o, NULL);
	CHECK(err == 0 && h.n == len && !memcmp(h.buf, ar, len),
	      "archive file_bytes: walk_mem hands its buffer over once");
	close(fd);
}

static void on_problem(void *ctx, const char *path, const char *msg)
{
	((struct members *)ctx)->problems++;
}

static void archive_opts(void)
{
	NEWER(lidia_archive_opts) u;
	size_t end = KNOWN_END(lidia_archive_opts, file_bytes);
	unsigned char ar[256];
	size_t len = make_ar(ar, 1);
	struct members m = { 0 };
	unsigned problems = 99;
	int err;

	memset(&u, 0, sizeof(u));
	u.o.sz = sizeof(u);
	u.o.elf = on_elf;
	u.o.problem = on_problem;
	u.o.ctx = &m;
	u.b[end] = 1;
	err = lidia_archive_walk_mem(ar, len, "in", &u.o, &problems);
	CHECK(err == LIDIA_E_INVAL && problems == 0 && m.elves == 0,
	      "archive: a non-zero byte right after file_bytes: LIDIA_E_INVAL, nothing walked");
	u.b[end] = 0;
	u.b[sizeof(u) - 1] = 1;
	err = lidia_archive_walk_mem(ar, len, "in", &u.o, &problems);
	CHECK(err == LIDIA_E_INVAL && m.elves == 0,
	      "archive: a non-zero byte at the end of a larger struct: LIDIA_E_INVAL");
	u.b[sizeof(u) - 1] = 0;

	err = lidia_archive_walk_mem(ar, len, "in", NULL, &problems);
	if (err == LIDIA_E_NO_LIBARCHIVE) {
		printf("ok - # SKIP archive walks: %s\n", lidia_strerror(err));
		return;
	}
	CHECK(err == 0 && problems == 0, "archive: NULL opts: walked, the member dropped");
	err = lidia_archive_walk_mem(ar, len, "in", &u.o, &problems);
	CHECK(err == 0 && problems == 0 && m.elves == 1 && !strcmp(m.path, "in!app"),
	      "archive: a larger struct with a zero tail: walked, its callbacks called (%s)",
	      m.path);
	/* Zero limits are the defaults; a set one is honoured. */
	m = (struct members){ 0 };
	u.o.max_member = 16;
	err = lidia_archive_walk_mem(ar, len, "in", &u.o, &problems);
	CHECK(err == 0 && problems == 1 && m.problems == 1 && m.elves == 0,
	      "archive: max_member 16 refuses the 64-byte member, said through problem");
	/* An older caller's struct, ending at ctx: its elf callback is called. */
	m = (struct members){ 0 };
	u.o.max_member = 0;
	u.o.sz = KNOWN_END(lidia_archive_opts, ctx);
	err = lidia_archive_walk_mem(ar, len, "in", &u.o, &problems);
	CHECK(err == 0 && m.elves == 1, "archive: a struct ending at ctx (an older lidia.h) walks");
	archive_positions();
	archive_spill();
	archive_file_bytes();
}

/* ---- lidia_set_log ---- */

struct log_sink {
	atomic_ulong calls;
};

static struct log_sink sink_a, sink_b;
static atomic_ulong mixed;

static void log_a(enum lidia_log_level level, const char *msg, void *ctx)
{
	if (ctx != &sink_a)
		atomic_fetch_add(&mixed, 1);
	atomic_fetch_add(&sink_a.calls, 1);
}

static void log_b(enum lidia_log_level level, const char *msg, void *ctx)
{
	if (ctx != &sink_b)
		atomic_fetch_add(&mixed, 1);
	atomic_fetch_add(&sink_b.calls, 1);
}

#define LOGGERS 4
#define MESSAGES 20000

static atomic_bool swapping;

static void *logger(void *arg)
{
	int id = *(int *)arg;

	for (int i = 0; i < MESSAGES; i++)
		lidia_log(LIDIA_LOG_DEBUG, "message %d of thread %d", i, id);
	return NULL;
}

static void *swapper(void *arg)
{
	unsigned long *bad = arg;

	for (unsigned i = 0; atomic_load(&swapping); i++) {
		struct lidia_log_cb old =
			i % 2 ? lidia_set_log(log_a, &sink_a) : lidia_set_log(log_b, &sink_b);

		if (!(old.fn == log_a && old.ctx == &sink_a) &&
		    !(old.fn == log_b && old.ctx == &sink_b))
			(*bad)++;
	}
	return NULL;
}

static void set_log(void)
{
	pthread_t loggers[LOGGERS], sw;
	int ids[LOGGERS];
	unsigned long bad = 0, total;
	struct lidia_log_cb old;

	old = lidia_set_log(log_a, &sink_a);
	CHECK(old.fn == NULL && old.ctx == NULL,
	      "log: the first lidia_set_log returns no callback");
	old = lidia_set_log(log_b, &sink_b);
	CHECK(old.fn == log_a && old.ctx == &sink_a,
	      "log: lidia_set_log returns the callback and ctx it replaces");

	atomic_store(&swapping, true);
	pthread_create(&sw, NULL, swapper, &bad);
	for (int t = 0; t < LOGGERS; t++) {
		ids[t] = t;
		pthread_create(&loggers[t], NULL, logger, &ids[t]);
	}
	for (int t = 0; t < LOGGERS; t++)
		pthread_join(loggers[t], NULL);
	atomic_store(&swapping, false);
	pthread_join(sw, NULL);

	total = atomic_load(&sink_a.calls) + atomic_load(&sink_b.calls);
	CHECK(atomic_load(&mixed) == 0 && bad == 0 && total == LOGGERS * MESSAGES,
	      "log: %d threads log while one swaps callbacks: all %lu messages reach a whole pair"
	      " (%lu to a, %lu to b; %lu mixed, %lu bad returns)",
	      LOGGERS, total, atomic_load(&sink_a.calls), atomic_load(&sink_b.calls),
	      atomic_load(&mixed), bad);

	old = lidia_set_log(NULL, NULL);
	CHECK(old.fn == log_a || old.fn == log_b,
	      "log: lidia_set_log(NULL, NULL) returns the last");
	total = atomic_load(&sink_a.calls) + atomic_load(&sink_b.calls);
	lidia_log(LIDIA_LOG_WARN, "dropped");
	CHECK(!lidia_log_enabled() &&
		      atomic_load(&sink_a.calls) + atomic_load(&sink_b.calls) == total,
	      "log: after lidia_set_log(NULL, NULL) messages are dropped");
}

/* ---- CRC32C from threads ---- */

#define CRC_THREADS 8

static void *crc_thread(void *arg)
{
	uint32_t *out = arg;

	*out = lidia_crc32c(0, "123456789", 9);
	return NULL;
}

static void crc_threads(void)
{
	pthread_t t[CRC_THREADS];
	uint32_t got[CRC_THREADS];
	bool ok = true;

	/* The first calls of the process, all at once. */
	for (int i = 0; i < CRC_THREADS; i++)
		pthread_create(&t[i], NULL, crc_thread, &got[i]);
	for (int i = 0; i < CRC_THREADS; i++) {
		pthread_join(t[i], NULL);
		ok = ok && got[i] == 0xe3069283u;
	}
	CHECK(ok, "crc32c: %d threads making the first calls all get 0xe3069283", CRC_THREADS);
}

/* CRCs of pieces joined: every split of the check string gives its CRC. */
static void crc_combine(void)
{
	const char *s = "123456789";
	bool ok = lidia_crc32c_combine(0, 0, 0) == 0;

	for (size_t k = 0; k <= 9; k++)
		ok = ok &&
		     lidia_crc32c_combine(lidia_crc32c(0, s, k), lidia_crc32c(0, s + k, 9 - k),
					  9 - k) == 0xe3069283u;
	CHECK(ok, "crc32c: the CRCs of the two pieces of every split of \"123456789\" join to "
		  "0xe3069283");
}

/*
 * Long buffers, where the CRC runs in lanes side by side: every length
 * around the lanes' bounds and odd starts, against the CRC bit by bit.
 */
static void crc_long(void)
{
	enum { MAX = 3 * 8192 * 2 + 64 };
	static const size_t lens[] = { 0,
				       1,
				       7,
				       8,
				       3 * 8192 - 1,
				       3 * 8192,
				       3 * 8192 + 1,
				       3 * 8192 + 13,
				       6 * 8192 - 8,
				       6 * 8192,
				       6 * 8192 + 9 };
	unsigned char *buf = malloc(MAX + 8);
	uint32_t x = 1;
	bool ok = buf != NULL;

	for (size_t i = 0; ok && i < MAX + 8; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (unsigned char)(x >> 16);
	}
	for (size_t k = 0; ok && k < sizeof(lens) / sizeof(lens[0]); k++) {
		for (size_t start = 0; ok && start < 8; start += 3) {
			size_t cut = lens[k] < 5 ? lens[k] : 5;
			uint32_t want = 0xffffffffu;

			for (size_t i = 0; i < lens[k]; i++) {
				want ^= buf[start + i];
				for (int b = 0; b < 8; b++)
					want = (want >> 1) ^ (0x82f63b78u & (0u - (want & 1)));
			}
			ok = lidia_crc32c(0, buf + start, lens[k]) == ~want &&
			     lidia_crc32c(lidia_crc32c(0, buf + start, cut), buf + start + cut,
					  lens[k] - cut) == ~want;
		}
	}
	CHECK(ok, "crc32c: buffers of up to 48 KiB at odd starts give the bitwise CRC, whole or "
		  "continued");
	free(buf);
}

/* The little-endian 32- or 64-bit word at p. */
static uint64_t word(const unsigned char *p, int size)
{
	uint64_t v = 0;

	for (int i = size - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* A sink into memory, failing with -EIO once it holds fail_at bytes (0: never). */
struct mem_sink {
	unsigned char *buf;
	size_t len, cap, fail_at;
	size_t failed; /* calls answered with -EIO */
};

static int mem_sink(void *ctx, const void *buf, size_t len)
{
	struct mem_sink *m = ctx;

	if (m->fail_at && m->len >= m->fail_at) {
		m->failed++;
		return -EIO;
	}
	if (m->len + len > m->cap) {
		unsigned char *p = realloc(m->buf, m->len + len);

		if (!p)
			return -ENOMEM;
		m->buf = p;
		m->cap = m->len + len;
	}
	memcpy(m->buf + m->len, buf, len);
	m->len += len;
	return 0;
}

/*
 * b (on 2 threads, over 4 MiB of tables) streamed to a sink: the tables are
 * encoded on a second thread while the sink takes the chunks before, and the
 * sink gets want's bytes (one thread's, made in memory); a sink that fails
 * half way stops it with its error, having been called no more after it.
 */
static void streamed_on_threads(struct lidia_builder *b, const void *want, size_t nwant)
{
	struct mem_sink all = { 0 }, half = { .fail_at = nwant / 2 };
	int err;

	CHECK(!lidia_builder_write(b, mem_sink, &all) && all.len == nwant &&
		      !memcmp(all.buf, want, nwant),
	      "builder: streamed on 2 threads (%zu bytes), the bytes one thread makes", all.len);
	err = lidia_builder_write(b, mem_sink, &half);
	CHECK(err == -EIO && half.len >= nwant / 2 && half.len < nwant && half.failed == 1,
	      "builder: a sink failing half way: its error, and no call after it (%zu failed)",
	      half.failed);
	free(all.buf);
	free(half.buf);
}

/*
 * A builder of 300,000 ranges with lines, finalized and written on 2
 * threads (tables cut into pieces encoded side by side): the bytes are
 * those one thread streams, and each table's CRC in the header is the
 * CRC-32C of its bytes, computed here in one piece.
 */
static void tables_on_threads(void)
{
	struct lidia_builder *one = NULL, *two = NULL;
	struct lidia_line lines[3] = { { 0, 10 }, { 4, 11 }, { 8, 12 } };
	void *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	bool ok = !lidia_builder_new(&one) && !lidia_builder_new(&two);
	char name[32];

	if (ok)
		builder_use_threads(two, 2);
	for (uint32_t i = 0; i < 300000 && ok; i++) {
		struct lidia_range_desc r = { .va = 0x400000 + (uint64_t)(i * 7919u % 300000) * 16,
					      .length = 16,
					      .func = name,
					      .file = "/src/f.c",
					      .lines = lines,
					      .line_count = i % 3 + 1 };

		snprintf(name, sizeof(name), "f%u", i % 50000);
		ok = !lidia_builder_add(one, &r) && !lidia_builder_add(two, &r);
	}
	ok = ok && !lidia_builder_finalize(one) && !lidia_builder_finalize(two) &&
	     !lidia_builder_write_mem(one, &a, &na) && !lidia_builder_write_mem(two, &b, &nb);
	CHECK(ok && na == nb && !memcmp(a, b, na),
	      "builder: 300,000 ranges finalized and encoded on 2 threads: the bytes of 1 thread");
	if (ok && na > LIDIA_HEADER_SIZE) {
		const unsigned char *h = a;
		static const int crc_at[4] = { HDR_VA_CRC, HDR_RANGE_CRC, HDR_STR_CRC,
					       HDR_LINE_CRC };
		static const int off_at[4] = { HDR_VA_OFF, HDR_RANGE_OFF, HDR_STR_OFF,
					       HDR_LINE_OFF };
		bool crcs = true;

		for (int t = 0; t < 4; t++) {
			uint64_t off = word(h + off_at[t], 8);
			uint64_t end = t < 3 ? word(h + off_at[t + 1], 8) : na;

			crcs = crcs && off <= end && end <= na &&
			       lidia_crc32c(0, h + off, end - off) ==
				       (uint32_t)word(h + crc_at[t], 4);
		}
		CHECK(crcs, "builder: each table's CRC in the header is the CRC-32C of its bytes");
	}
	if (ok)
		streamed_on_threads(two, a, na);
	free(a);
	free(b);
	lidia_builder_free(one);
	lidia_builder_free(two);
}

/*
 * Ranges added in a scrambled order, with addresses that differ in every
 * byte (high ones too), depths past 255, and ties on (address, depth): the
 * file holds them by address, then depth, ties in the order added (each
 * range's name says when it was added).
 */
static void range_order(void)
{
	static const uint64_t vas[] = {
		0xffffffff00000000ull, 0x100, 0x1ff, 0x100, 0x10000000000ull, 0x100,
		0x0102030405060708ull, 0x1ff
	};
	static const uint32_t depths[] = { 0, 300, 1, 1, 0, 1, 2, 1 };
	struct lidia_builder *b = NULL;
	struct lidia_reader *r = NULL;
	void *buf = NULL;
	size_t size = 0, n = sizeof(vas) / sizeof(vas[0]);
	bool ok = !lidia_builder_new(&b);
	char name[8];

	for (size_t i = 0; i < n && ok; i++) {
		snprintf(name, sizeof(name), "r%zu", i);
		ok = !lidia_builder_add(
			b, &(struct lidia_range_desc){
				   .va = vas[i], .length = 1, .depth = depths[i], .func = name });
	}
	ok = ok && !lidia_builder_finalize(b) && !lidia_builder_write_mem(b, &buf, &size) &&
	     !lidia_reader_open_mem(&r, buf, size, NULL) && lidia_reader_count(r) == n;
	if (ok) {
		/* The expected order, worked out by hand: (va, depth, insertion). */
		static const char *const order[] = {
			"r3", "r5", "r1", "r2", "r7", "r4", "r6", "r0"
		};

		for (size_t i = 0; i < n && ok; i++) {
			struct lidia_range_info ri;

			ok = !lidia_reader_range(r, i, &ri) && ri.func.len == strlen(order[i]) &&
			     !memcmp(ri.func.ptr, order[i], ri.func.len);
		}
	}
	CHECK(ok, "builder: ranges in the file by address, then depth, ties in the order added");
	lidia_reader_close(r);
	free(buf);
	lidia_builder_free(b);
}

int main(void)
{
	crc_threads(); /* first: no CRC computed before it */
	crc_combine();
	crc_long();
	tables_on_threads();
	range_order();
	reader_opts();
	store_opts();
	extract_opts();
	archive_opts();
	set_log();
	return unit_exit();
}
