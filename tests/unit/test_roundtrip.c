/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builder -> bytes -> reader round trips (spec sections 1 to 6).
 *
 * Random range sets from a fixed-seed xorshift generator, and hand-made edge
 * sets, are added to a builder, written, and read back with the CRC check on.
 * A model kept by the test says what the file must hold: the ranges in the
 * stable (va, depth, insertion) order, the narrowest widths, the strings table
 * byte for byte (first-use order after "" and "[overflow]"), and the frames of
 * a lookup per sections 4 and 5. The model is independent of lib/.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lidia.h"
#include "unit.h"

/* Header fields the test reads itself (spec section 2). */
#define H_STR_SIZE 0x48
#define H_STR_OFF 0x50

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- xorshift64*: fixed seeds, so every run tests the same sets ---- */

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* ---- The model ---- */

struct mrange {
	uint64_t va, length;
	uint32_t depth, call_line;
	const char *func, *file, *call_file; /* NULL means "" */
	struct lidia_line *lines;
	size_t nlines;
	size_t seq; /* insertion order among the kept ranges */
};

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

static bool str_eq(struct lidia_str a, const char *b)
{
	b = str_or_empty(b);
	return a.len == strlen(b) && (a.len == 0 || !memcmp(a.ptr, b, a.len));
}

static int cmp_mrange(const void *pa, const void *pb)
{
	const struct mrange *a = *(const struct mrange *const *)pa;
	const struct mrange *b = *(const struct mrange *const *)pb;

	if (a->va != b->va)
		return a->va < b->va ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The strings table as the spec says it must be: "", "[overflow]", then first use. */
struct mstrtab {
	unsigned char *bytes;
	size_t len, cap;
	size_t count;
};

static void mstr_add(struct mstrtab *t, const char *s)
{
	size_t n = strlen(s), off = 0;

	while (off < t->len) {
		uint32_t l = get32(t->bytes + off);

		if (l == n && !memcmp(t->bytes + off + 4, s, n))
			return;
		off += 4 + l;
	}
	if (t->len + 4 + n > t->cap) {
		t->cap = (t->len + 4 + n) * 2;
		t->bytes = realloc(t->bytes, t->cap);
		if (!t->bytes)
			abort();
	}
	t->bytes[t->len] = (unsigned char)n;
	t->bytes[t->len + 1] = (unsigned char)(n >> 8);
	t->bytes[t->len + 2] = (unsigned char)(n >> 16);
	t->bytes[t->len + 3] = (unsigned char)(n >> 24);
	memcpy(t->bytes + t->len + 4, s, n);
	t->len += 4 + n;
	t->count++;
}

static void mstr_build(struct mstrtab *t, const struct mrange *m, size_t n)
{
	memset(t, 0, sizeof(*t));
	/* "" goes first by hand: mstr_add's search would find nothing to match yet. */
	t->cap = 64;
	t->bytes = calloc(1, t->cap);
	if (!t->bytes)
		abort();
	t->len = 4;
	t->count = 1;
	mstr_add(t, "[overflow]");
	for (size_t i = 0; i < n; i++) {
		if (!m[i].length)
			continue;
		mstr_add(t, str_or_empty(m[i].func));
		mstr_add(t, str_or_empty(m[i].file));
		mstr_add(t, str_or_empty(m[i].call_file));
	}
}

/* The narrowest widths that hold every value of the kept ranges (spec section 3). */
static void model_widths(const struct mrange *m, size_t n, unsigned *va, unsigned *field,
			 unsigned *line)
{
	*va = 4;
	*field = 4;
	*line = 2;
	for (size_t i = 0; i < n; i++) {
		if (!m[i].length)
			continue;
		if (m[i].va > UINT32_MAX)
			*va = 8;
		if (m[i].length > UINT32_MAX)
			*field = 8;
		for (size_t k = 0; k < m[i].nlines; k++)
			if (m[i].lines[k].offset > UINT16_MAX || m[i].lines[k].line > UINT16_MAX)
				*line = 4;
	}
}

/* ---- Writing ---- */

static int add_all(struct lidia_builder *b, const struct mrange *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct lidia_range_desc d = {
			.va = m[i].va,
			.length = m[i].length,
			.depth = m[i].depth,
			.func = m[i].func,
			.file = m[i].file,
			.call_file = m[i].call_file,
			.call_line = m[i].call_line,
			.lines = m[i].lines,
			.line_count = m[i].nlines,
		};
		int err = lidia_builder_add(b, &d);

		if (err) {
			printf("# add %zu: %s\n", i, lidia_strerror(err));
			return err;
		}
	}
	return 0;
}

/* A finalized builder holding m[0..n), or NULL. */
static struct lidia_builder *build(const struct mrange *m, size_t n)
{
	struct lidia_builder *b;
	int err = lidia_builder_new(&b);

	if (err)
		return NULL;
	err = add_all(b, m, n);
	if (!err)
		err = lidia_builder_finalize(b);
	if (err) {
		printf("# build: %s\n", lidia_strerror(err));
		lidia_builder_free(b);
		return NULL;
	}
	return b;
}

static int read_all(int fd, unsigned char **out, size_t *out_len)
{
	size_t len = 0, cap = 4096;
	unsigned char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t k;

		if (len == cap) {
			unsigned char *p = realloc(buf, cap * 2);

			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			buf = p;
			cap *= 2;
		}
		k = read(fd, buf + len, cap - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			free(buf);
			return -errno;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	*out = buf;
	*out_len = len;
	return 0;
}

/* What lidia_builder_write_fd() sends down a pipe (a child writes, we read). */
static int write_pipe(struct lidia_builder *b, unsigned char **out, size_t *out_len)
{
	int fds[2], status, err;
	pid_t pid;

	if (pipe(fds))
		return -errno;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (pid == 0) {
		close(fds[0]);
		_exit(lidia_builder_write_fd(b, fds[1]) ? 1 : 0);
	}
	close(fds[1]);
	err = read_all(fds[0], out, out_len);
	close(fds[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		if (!err)
			free(*out);
		return err ? err : -EIO;
	}
	return err;
}

/* What lidia_builder_write_fd() puts in a regular file. */
static int write_file(struct lidia_builder *b, unsigned char **out, size_t *out_len)
{
	char path[] = "/tmp/lidia-roundtrip.XXXXXX";
	int fd = mkstemp(path), err;

	if (fd < 0)
		return -errno;
	unlink(path);
	err = lidia_builder_write_fd(b, fd);
	if (!err && lseek(fd, 0, SEEK_SET) < 0)
		err = -errno;
	if (!err)
		err = read_all(fd, out, out_len);
	close(fd);
	return err;
}

static bool same_bytes(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
	return alen == blen && !memcmp(a, b, alen);
}

/* ---- Lookup model (spec sections 4 and 5) ---- */

struct mframe {
	const struct mrange *r;
	uint32_t line;
};

static uint32_t model_line(const struct mrange *r, uint64_t rel)
{
	uint32_t line = 0;

	for (size_t k = 0; k < r->nlines && r->lines[k].offset <= rel; k++)
		line = r->lines[k].line;
	return line;
}

static size_t model_lookup(struct mrange *const *sorted, size_t n, uint64_t addr,
			   struct mframe *out)
{
	size_t last = n, nf = 0;

	for (size_t i = 0; i < n && sorted[i]->va <= addr; i++)
		last = i;
	if (last == n)
		return 0;
	for (size_t i = last + 1; i-- > 0;) {
		const struct mrange *r = sorted[i];

		if (addr - r->va < r->length) {
			out[nf].r = r;
			out[nf].line = nf ? out[nf - 1].r->call_line : model_line(r, addr - r->va);
			nf++;
		}
		if (r->depth == 0)
			break;
	}
	return nf;
}

/*
 * The file of frame k: its own range's file for the innermost frame; for an
 * outer frame, the call file of the frame just inside it (which names the
 * call site the line is from, spec section 5), else its own file.
 */
static const char *model_file(const struct mframe *mf, size_t k)
{
	if (k > 0 && *str_or_empty(mf[k - 1].r->call_file))
		return mf[k - 1].r->call_file;
	return mf[k].r->file;
}

/* Compare one lookup with the model: function, file, line, depth, inlined. */
static bool lookup_matches(const struct lidia_reader *rd, struct mrange *const *sorted, size_t n,
			   uint64_t addr, struct lidia_frame *frames, struct mframe *mf)
{
	size_t want = model_lookup(sorted, n, addr, mf);
	int got = lidia_reader_lookup(rd, addr, frames, n ? n : 1);

	if (got < 0 || (size_t)got != want) {
		printf("# lookup 0x%" PRIx64 ": %d frames, want %zu\n", addr, got, want);
		return false;
	}
	for (size_t k = 0; k < want; k++) {
		const struct lidia_frame *f = &frames[k];

		if (!str_eq(f->function, mf[k].r->func) || f->depth != mf[k].r->depth ||
		    f->inlined != (mf[k].r->depth > 0) || f->line != mf[k].line ||
		    !str_eq(f->file, model_file(mf, k))) {
			printf("# lookup 0x%" PRIx64 " frame %zu: %.*s depth %u line %u,"
			       " want depth %u line %u\n",
			       addr, k, (int)(f->function.len > 60 ? 60 : f->function.len),
			       f->function.ptr, f->depth, f->line, mf[k].r->depth, mf[k].line);
			return false;
		}
	}
	return true;
}

/* ---- The round trip ---- */

/*
 * Round-trip m[0..n) and check everything. exp_* are the widths the set was
 * made to need (0: don't care); the model's narrowest widths are always checked.
 */
static void roundtrip(const char *name, struct mrange *m, size_t n, unsigned exp_va,
		      unsigned exp_field, unsigned exp_line)
{
	struct lidia_builder *b1 = NULL, *b2 = NULL;
	unsigned char *buf1 = NULL, *buf2 = NULL, *pbuf = NULL, *fbuf = NULL;
	size_t len1 = 0, len2 = 0, plen = 0, flen = 0, kept = 0, total_lines = 0;
	struct lidia_reader *rd = NULL;
	struct lidia_reader_opts opts = LIDIA_READER_OPTS(.check_crc = true);
	struct lidia_file_info fi;
	struct mrange **sorted = NULL;
	struct lidia_frame *frames = NULL;
	struct mframe *mf = NULL;
	struct mstrtab st;
	unsigned wva, wfield, wline;
	bool ok;
	int err;

	for (size_t i = 0; i < n; i++) {
		m[i].seq = kept;
		if (m[i].length) {
			kept++;
			total_lines += m[i].nlines;
		}
	}

	b1 = build(m, n);
	CHECK(b1 != NULL, "%s: %zu adds (%zu kept) finalize", name, n, kept);
	if (!b1)
		return;
	CHECK(lidia_builder_count(b1) == kept, "%s: zero-length adds are dropped (%zu of %zu)",
	      name, lidia_builder_count(b1), kept);
	err = lidia_builder_write_mem(b1, (void **)&buf1, &len1);
	CHECK(err == 0 && len1 == lidia_builder_file_size(b1), "%s: write_mem, %zu bytes", name,
	      len1);
	if (err)
		goto out;

	/* Determinism: the same adds give the same bytes, whatever the sink. */
	b2 = build(m, n);
	err = b2 ? lidia_builder_write_mem(b2, (void **)&buf2, &len2) : -1;
	ok = !err && same_bytes(buf1, len1, buf2, len2);
	CHECK(ok, "%s: a second builder with the same adds writes identical bytes", name);
	err = write_pipe(b1, &pbuf, &plen);
	ok = !err && same_bytes(buf1, len1, pbuf, plen);
	CHECK(ok, "%s: write_fd to a pipe gives the write_mem bytes (%s)", name,
	      err ? lidia_strerror(err) : "written");
	err = write_file(b1, &fbuf, &flen);
	ok = !err && same_bytes(buf1, len1, fbuf, flen);
	CHECK(ok, "%s: write_fd to a file gives the write_mem bytes (%s)", name,
	      err ? lidia_strerror(err) : "written");

	err = lidia_reader_open_mem(&rd, buf1, len1, &opts);
	CHECK(err == 0, "%s: opens with check_crc (%s)", name, lidia_strerror(err));
	if (err)
		goto out;

	/* Widths: the narrowest that hold every value. */
	model_widths(m, n, &wva, &wfield, &wline);
	err = lidia_reader_info(rd, &fi);
	ok = !err && fi.va.entry_size == wva && fi.ranges.entry_size == wfield &&
	     fi.lines.entry_size == wline;
	CHECK(ok, "%s: widths va %" PRIu64 " field %" PRIu64 " line %" PRIu64
		  " are the narrowest (%u %u %u)",
	      name, fi.va.entry_size, fi.ranges.entry_size, fi.lines.entry_size, wva, wfield,
	      wline);
	if (exp_va || exp_field || exp_line) {
		ok = (!exp_va || wva == exp_va) && (!exp_field || wfield == exp_field) &&
		     (!exp_line || wline == exp_line);
		CHECK(ok, "%s: the set needs the widths it was made for (va %u field %u line %u)",
		      name, exp_va, exp_field, exp_line);
	}
	ok = fi.version == 1 && fi.file_size == len1 && fi.va.count == kept &&
	     fi.ranges.count == kept && fi.lines.count == total_lines && fi.va.crc_ok &&
	     fi.ranges.crc_ok && fi.strings.crc_ok && fi.lines.crc_ok;
	CHECK(ok, "%s: info: version 1, %zu ranges, %zu line rows, CRCs ok", name, kept,
	      total_lines);

	/* Every range, in the stable (va, depth, insertion) order. */
	sorted = calloc(kept ? kept : 1, sizeof(*sorted));
	if (!sorted)
		abort();
	for (size_t i = 0, j = 0; i < n; i++)
		if (m[i].length)
			sorted[j++] = &m[i];
	qsort(sorted, kept, sizeof(*sorted), cmp_mrange);
	ok = lidia_reader_count(rd) == kept;
	for (size_t i = 0; ok && i < kept; i++) {
		const struct mrange *e = sorted[i];
		struct lidia_range_info ri;

		err = lidia_reader_range(rd, i, &ri);
		ok = !err && ri.va == e->va && ri.length == e->length && ri.depth == e->depth &&
		     str_eq(ri.func, e->func) && str_eq(ri.file, e->file) &&
		     str_eq(ri.call_file, e->call_file) && ri.call_line == e->call_line &&
		     ri.line_count == e->nlines;
		for (size_t k = 0; ok && k < e->nlines; k++) {
			struct lidia_line l;

			err = lidia_reader_line(rd, ri.line_idx + k, &l);
			ok = !err && l.offset == e->lines[k].offset && l.line == e->lines[k].line;
		}
		if (!ok)
			printf("# range %zu (va 0x%" PRIx64 " depth %u, added %zu) differs: %s\n",
			       i, e->va, e->depth, e->seq, lidia_strerror(err));
	}
	CHECK(ok, "%s: all %zu ranges read back as added, in (va, depth, insertion) order", name,
	      kept);
	err = lidia_reader_check(rd, NULL);
	CHECK(err == 0, "%s: lidia_reader_check passes (%s)", name, lidia_strerror(err));

	/* The strings table, byte for byte. */
	mstr_build(&st, m, n);
	{
		uint64_t soff = get64(buf1 + H_STR_OFF), ssize = get64(buf1 + H_STR_SIZE);
		const unsigned char *s = buf1 + soff;
		bool fixed, distinct = true;
		size_t count = 0;

		fixed = ssize >= 18 && soff + ssize <= len1 && get32(s) == 0 &&
			get32(s + 4) == 10 && !memcmp(s + 8, "[overflow]", 10);
		CHECK(fixed, "%s: strings table starts with \"\" at 0 and \"[overflow]\" at 4",
		      name);
		for (uint64_t a = 0; fixed && distinct && a < ssize; count++) {
			uint32_t la = get32(s + a);

			for (uint64_t c = a + 4 + la; c < ssize; c += 4 + get32(s + c))
				if (get32(s + c) == la && !memcmp(s + a + 4, s + c + 4, la))
					distinct = false;
			a += 4 + la;
		}
		CHECK(fixed && distinct, "%s: strings table holds each of its %zu strings once",
		      name, count);
		ok = fixed && ssize == st.len && !memcmp(s, st.bytes, st.len);
		CHECK(ok, "%s: strings table is every used string in first-use order (%zu strings,"
			  " %zu bytes)",
		      name, st.count, st.len);
		free(st.bytes);
	}

	/* Lookups against the model at the edges of every range and its line rows. */
	frames = calloc(kept ? kept : 1, sizeof(*frames));
	mf = calloc(kept ? kept : 1, sizeof(*mf));
	if (!frames || !mf)
		abort();
	ok = lookup_matches(rd, sorted, kept, 0, frames, mf) &&
	     lookup_matches(rd, sorted, kept, UINT64_MAX, frames, mf);
	/* Every range of a small set; a sample of a big one (the model is linear). */
	for (size_t i = 0; ok && i < kept; i += kept > 2000 ? kept / 500 : 1) {
		const struct mrange *e = sorted[i];
		uint64_t probes[4] = { e->va, e->va + e->length - 1, e->va + e->length, e->va - 1 };

		for (int p = 0; ok && p < 4; p++)
			ok = lookup_matches(rd, sorted, kept, probes[p], frames, mf);
		for (size_t k = 0; ok && k < e->nlines; k++)
			ok = lookup_matches(rd, sorted, kept, e->va + e->lines[k].offset, frames,
					    mf);
	}
	for (int p = 0; ok && p < 200 && kept; p++) {
		const struct mrange *e = sorted[rnd_below(kept)];

		ok = lookup_matches(rd, sorted, kept, e->va + rnd_below(e->length), frames, mf);
	}
	CHECK(ok, "%s: lookups give the frames of spec sections 4 and 5", name);

out:
	lidia_reader_close(rd);
	free(frames);
	free(mf);
	free(sorted);
	free(buf1);
	free(buf2);
	free(pbuf);
	free(fbuf);
	lidia_builder_free(b1);
	lidia_builder_free(b2);
}

/* ---- Random sets ---- */

struct cfg {
	const char *name;
	uint64_t seed;
	size_t n;
	bool high_va;  /* some VAs past 4 GiB: 8-byte VA entries */
	bool long_len; /* some lengths past 4 GiB: 8-byte range fields */
	bool big_line; /* some line numbers past 65535: 4-byte line fields */
	bool big_off;  /* some line offsets past 65535: 4-byte line fields */
	unsigned exp_va, exp_field, exp_line;
};

#define NSTR 48

/* A pool of strings: "", "[overflow]", short names, repeats, long and odd bytes. */
static void make_strings(char **pool)
{
	pool[0] = strdup("");
	pool[1] = strdup("[overflow]");
	pool[2] = strdup("main");
	pool[3] = strdup("/usr/src/x.c");
	for (int i = 4; i < NSTR; i++) {
		size_t len;

		switch (rnd_below(6)) {
		case 0: /* long */
			len = 200 + rnd_below(4000);
			break;
		case 1: /* very long: string offsets past 65535 */
			len = 66000 + rnd_below(2000);
			break;
		default:
			len = 1 + rnd_below(24);
			break;
		}
		pool[i] = malloc(len + 1);
		if (!pool[i])
			abort();
		for (size_t k = 0; k < len; k++)
			pool[i][k] =
				(char)(rnd_below(4) ? 'a' + rnd_below(26) : 1 + rnd_below(255));
		pool[i][len] = 0;
	}
}

static const char *pick(char **pool)
{
	/* Mostly a few names, so repeats are common; sometimes NULL for "". */
	if (!rnd_below(12))
		return NULL;
	return pool[rnd_below(4) ? rnd_below(8) : rnd_below(NSTR)];
}

static void random_set(const struct cfg *c)
{
	struct mrange *m = calloc(c->n ? c->n : 1, sizeof(*m));
	char *pool[NSTR];

	if (!m)
		abort();
	rng = c->seed;
	make_strings(pool);
	for (size_t i = 0; i < c->n; i++) {
		struct mrange *r = &m[i];
		uint64_t max_off;

		if (i && !rnd_below(4))
			r->va = m[rnd_below(i)].va; /* ties: the stable order decides */
		else if (c->high_va && !rnd_below(3))
			r->va = (1ull << 32) + rnd_below(1ull << 40);
		else
			r->va = rnd_below(1u << 20);
		if (!rnd_below(20))
			r->length = 0;
		else if (c->long_len && !rnd_below(4))
			r->length = (1ull << 32) + rnd_below(1ull << 36);
		else if (c->big_off && !rnd_below(3))
			r->length = 0x10000 + rnd_below(0x40000);
		else
			r->length = 1 + rnd_below(0x2000);
		r->depth = (uint32_t)rnd_below(4);
		r->func = pick(pool);
		r->file = pick(pool);
		r->call_file = r->depth ? pick(pool) : NULL;
		if (r->depth)
			r->call_line = rnd_below(8) ? (uint32_t)rnd_below(5000) + 1
						    : (uint32_t)(rnd() >> 32) | 0x80000000u;
		if (!r->length)
			continue;
		r->nlines = rnd_below(3) ? rnd_below(7) : 0;
		r->lines = calloc(r->nlines ? r->nlines : 1, sizeof(*r->lines));
		if (!r->lines)
			abort();
		max_off = c->big_off ? r->length : (r->length < 0x10000 ? r->length : 0x10000);
		if (max_off > UINT32_MAX)
			max_off = (uint64_t)UINT32_MAX + 1;
		for (size_t k = 0; k < r->nlines; k++) {
			struct lidia_line *l = &r->lines[k];

			l->offset = (uint32_t)rnd_below(max_off);
			l->line = c->big_line && !rnd_below(3) ? (uint32_t)(rnd() >> 32) | 0x10000u
							       : (uint32_t)rnd_below(0x10000);
		}
		/* Sorted by offset; equal offsets are allowed. */
		for (size_t k = 1; k < r->nlines; k++)
			for (size_t j = k; j && r->lines[j - 1].offset > r->lines[j].offset; j--) {
				uint32_t t = r->lines[j].offset;

				r->lines[j].offset = r->lines[j - 1].offset;
				r->lines[j - 1].offset = t;
			}
	}
	roundtrip(c->name, m, c->n, c->exp_va, c->exp_field, c->exp_line);
	for (size_t i = 0; i < c->n; i++)
		free(m[i].lines);
	for (int i = 0; i < NSTR; i++)
		free(pool[i]);
	free(m);
}

/* ---- Hand-made edge sets ---- */

static void edge_sets(void)
{
	struct lidia_line l16[] = { { 0, 1 }, { 65535, 65535 } };
	struct lidia_line lbig_line[] = { { 0, 65536 } };
	struct lidia_line lbig_off[] = { { 0, 7 }, { 65536, 8 } };
	struct lidia_line ldup[] = { { 3, 10 }, { 3, 11 }, { 3, 12 } };
	struct mrange fits[] = {
		{ .va = UINT32_MAX, .length = 1, .func = "last_byte" },
		{ .va = 0, .length = UINT32_MAX, .func = "all", .file = "a.c", .lines = l16,
		  .nlines = 2 },
		{ .va = 0, .length = 16, .depth = UINT16_MAX, .func = "deep", .call_file = "a.c",
		  .call_line = UINT32_MAX },
	};
	struct mrange va8[] = {
		{ .va = 1ull << 32, .length = 1, .func = "high" },
		{ .va = 0x1000, .length = 0x10, .func = "low" },
	};
	struct mrange field8[] = {
		{ .va = 0x1000, .length = 1ull << 32, .func = "huge" },
	};
	struct mrange line_big[] = {
		{ .va = 0x1000, .length = 0x10, .func = "f", .lines = lbig_line, .nlines = 1 },
	};
	struct mrange off_big[] = {
		{ .va = 0x1000, .length = 0x20000, .func = "f", .lines = lbig_off, .nlines = 2 },
	};
	struct mrange all_wide[] = {
		{ .va = UINT64_MAX - (1ull << 33), .length = 1ull << 33, .func = "top",
		  .lines = lbig_off, .nlines = 2 },
		{ .va = 0, .length = 1, .func = "" },
	};
	struct mrange names[] = {
		{ .va = 0x10, .length = 4, .func = "[overflow]", .file = "" },
		{ .va = 0x10, .length = 4, .func = NULL, .file = "[overflow]" },
		{ .va = 0x8, .length = 4, .func = "x", .file = "x", .call_file = "x",
		  .lines = ldup, .nlines = 3 },
		{ .va = 0x20, .length = 0, .func = "dropped-only-here", .file = "dropped.c" },
	};

	roundtrip("edge: values at the 4/4/2 limits", fits, 3, 4, 4, 2);
	roundtrip("edge: va 2^32", va8, 2, 8, 4, 2);
	roundtrip("edge: length 2^32", field8, 1, 4, 8, 2);
	roundtrip("edge: line 65536", line_big, 1, 4, 4, 4);
	roundtrip("edge: line offset 65536", off_big, 1, 4, 4, 4);
	roundtrip("edge: all wide, range ending at 2^64-1", all_wide, 2, 8, 8, 4);
	roundtrip("edge: fixed strings reused, equal line offsets, dropped add", names, 4, 4, 4,
		  2);
}

/* ---- A hand-made nested set: lookups by the spec's words ---- */

struct want_frame {
	const char *func, *file;
	uint32_t line, depth;
};

static void check_lookup(const struct lidia_reader *rd, uint64_t addr,
			 const struct want_frame *want, size_t nwant)
{
	struct lidia_frame f[8];
	int n = lidia_reader_lookup(rd, addr, f, 8);
	bool ok = n >= 0 && (size_t)n == nwant;

	for (size_t k = 0; ok && k < nwant; k++)
		ok = str_eq(f[k].function, want[k].func) && str_eq(f[k].file, want[k].file) &&
		     f[k].line == want[k].line && f[k].depth == want[k].depth &&
		     f[k].inlined == (want[k].depth > 0);
	if (!ok && n > 0)
		for (int k = 0; k < n && k < 8; k++)
			printf("# frame %d: %.*s %.*s:%u depth %u\n", k, (int)f[k].function.len,
			       f[k].function.ptr, (int)f[k].file.len, f[k].file.ptr, f[k].line,
			       f[k].depth);
	CHECK(ok, "nested: lookup 0x%" PRIx64 " gives %zu frames%s%s", addr, nwant,
	      nwant ? ", innermost " : "", nwant ? want[0].func : "");
}

static void nested(void)
{
	static const struct lidia_line outer_l[] = { { 0, 10 }, { 0x10, 11 }, { 0x80, 12 } };
	static const struct lidia_line mid_l[] = { { 0, 20 }, { 0x8, 21 } };
	static const struct lidia_line inner_l[] = { { 0, 30 }, { 4, 31 } };
	static const struct lidia_line next_l[] = { { 0, 40 } };
	/* Added out of order: the builder's sort must nest them. */
	const struct lidia_range_desc adds[] = {
		{ .va = 0x1030, .length = 0x10, .depth = 2, .func = "inner", .file = "c.h",
		  .call_file = "b.h", .call_line = 21, .lines = inner_l, .line_count = 2 },
		{ .va = 0x1100, .length = 0x20, .func = "next", .file = "a.c", .lines = next_l,
		  .line_count = 1 },
		{ .va = 0x1000, .length = 0x100, .func = "outer", .file = "a.c", .lines = outer_l,
		  .line_count = 3 },
		{ .va = 0x1020, .length = 0x40, .depth = 1, .func = "mid", .file = "b.h",
		  .call_file = "a.c", .call_line = 11, .lines = mid_l, .line_count = 2 },
		{ .va = 0x2000, .length = 0x10, .func = "nolines", .file = "d.c" },
	};
	const struct want_frame outer10 = { "outer", "a.c", 10, 0 };
	const struct want_frame outer11 = { "outer", "a.c", 11, 0 };
	const struct want_frame outer12 = { "outer", "a.c", 12, 0 };
	const struct want_frame w_mid20[] = { { "mid", "b.h", 20, 1 }, outer11 };
	const struct want_frame w_mid21[] = { { "mid", "b.h", 21, 1 }, outer11 };
	const struct want_frame w_in30[] = { { "inner", "c.h", 30, 2 },
					     { "mid", "b.h", 21, 1 },
					     outer11 };
	const struct want_frame w_in31[] = { { "inner", "c.h", 31, 2 },
					     { "mid", "b.h", 21, 1 },
					     outer11 };
	const struct want_frame w_next[] = { { "next", "a.c", 40, 0 } };
	const struct want_frame w_nolines[] = { { "nolines", "d.c", 0, 0 } };
	struct lidia_reader_opts opts = LIDIA_READER_OPTS(.check_crc = true);
	struct lidia_builder *b;
	struct lidia_reader *rd = NULL;
	struct lidia_frame one;
	void *buf = NULL;
	size_t len = 0;
	int err, n;

	err = lidia_builder_new(&b);
	for (size_t i = 0; !err && i < sizeof(adds) / sizeof(adds[0]); i++)
		err = lidia_builder_add(b, &adds[i]);
	if (!err)
		err = lidia_builder_finalize(b);
	if (!err)
		err = lidia_builder_write_mem(b, &buf, &len);
	if (!err)
		err = lidia_reader_open_mem(&rd, buf, len, &opts);
	CHECK(err == 0, "nested: build, write and open (%s)", lidia_strerror(err));
	if (err)
		goto out;

	check_lookup(rd, 0xfff, NULL, 0);
	check_lookup(rd, 0x1000, &outer10, 1);
	check_lookup(rd, 0x100f, &outer10, 1);
	check_lookup(rd, 0x1010, &outer11, 1);
	check_lookup(rd, 0x1020, w_mid20, 2);
	check_lookup(rd, 0x1027, w_mid20, 2);
	check_lookup(rd, 0x1028, w_mid21, 2);
	check_lookup(rd, 0x1030, w_in30, 3);
	check_lookup(rd, 0x1034, w_in31, 3);
	check_lookup(rd, 0x103f, w_in31, 3);
	check_lookup(rd, 0x1040, w_mid21, 2);
	check_lookup(rd, 0x105f, w_mid21, 2);
	check_lookup(rd, 0x1060, &outer11, 1);
	check_lookup(rd, 0x1080, &outer12, 1);
	check_lookup(rd, 0x10ff, &outer12, 1);
	check_lookup(rd, 0x1100, w_next, 1);
	check_lookup(rd, 0x111f, w_next, 1);
	check_lookup(rd, 0x1120, NULL, 0);
	check_lookup(rd, 0x2000, w_nolines, 1);
	check_lookup(rd, 0x2010, NULL, 0);
	check_lookup(rd, 0, NULL, 0);
	check_lookup(rd, UINT64_MAX, NULL, 0);

	/* Too little room: the count still says how many frames there are. */
	n = lidia_reader_lookup(rd, 0x1034, &one, 1);
	CHECK(n == 3 && str_eq(one.function, "inner") && one.line == 31,
	      "nested: lookup with room for 1 frame returns 3 and fills the innermost");
	n = lidia_reader_lookup(rd, 0x1034, NULL, 0);
	CHECK(n == 3, "nested: lookup with no room returns the frame count (%d)", n);
out:
	lidia_reader_close(rd);
	free(buf);
	lidia_builder_free(b);
}

/* ---- What the builder refuses ---- */

static void refusals(void)
{
	static const struct lidia_line unsorted[] = { { 4, 1 }, { 2, 2 } };
	static const struct lidia_line outside[] = { { 0, 1 }, { 16, 2 } };
	static const struct lidia_line ok_lines[] = { { 0, 1 } };
	struct lidia_range_desc zero = { .va = 0x1000, .length = 0, .func = "z" };
	struct lidia_range_desc bad_order = { .va = 0x1000, .length = 16, .func = "f",
					      .lines = unsorted, .line_count = 2 };
	struct lidia_range_desc bad_off = { .va = 0x1000, .length = 16, .func = "f",
					    .lines = outside, .line_count = 2 };
	struct lidia_range_desc wrap = { .va = UINT64_MAX - 7, .length = 9, .func = "w" };
	struct lidia_range_desc wrap2 = { .va = 2, .length = UINT64_MAX, .func = "w" };
	struct lidia_range_desc good = { .va = 0x1000, .length = 16, .func = "f",
					 .lines = ok_lines, .line_count = 1 };
	struct lidia_builder *b;
	void *buf = NULL;
	size_t len = 0;
	int err;

	err = lidia_builder_new(&b);
	CHECK(err == 0 && b, "refusals: new builder");
	if (err)
		return;
	err = lidia_builder_write_mem(b, &buf, &len);
	CHECK(err == LIDIA_E_STATE && !buf, "write before finalize gives LIDIA_E_STATE (%s)",
	      lidia_strerror(err));
	err = lidia_builder_add(b, &zero);
	CHECK(err == 0 && lidia_builder_count(b) == 0, "a zero-length add is accepted and dropped");
	err = lidia_builder_add(b, &bad_order);
	CHECK(err == LIDIA_E_INVAL, "unsorted lines give LIDIA_E_INVAL (%s)", lidia_strerror(err));
	err = lidia_builder_add(b, &bad_off);
	CHECK(err == LIDIA_E_INVAL, "a line offset past the range gives LIDIA_E_INVAL (%s)",
	      lidia_strerror(err));
	err = lidia_builder_add(b, &wrap);
	CHECK(err == LIDIA_E_INVAL, "va + length past 2^64 gives LIDIA_E_INVAL (%s)",
	      lidia_strerror(err));
	err = lidia_builder_add(b, &wrap2);
	CHECK(err == LIDIA_E_INVAL, "va 2 + length 2^64-1 gives LIDIA_E_INVAL (%s)",
	      lidia_strerror(err));
	CHECK(lidia_builder_count(b) == 0, "refused adds leave no range (%zu)",
	      lidia_builder_count(b));
	err = lidia_builder_add(b, &good);
	CHECK(err == 0 && lidia_builder_count(b) == 1, "a good add after refusals is kept");
	err = lidia_builder_finalize(b);
	CHECK(err == 0, "finalize (%s)", lidia_strerror(err));
	err = lidia_builder_add(b, &good);
	CHECK(err == LIDIA_E_STATE, "add after finalize gives LIDIA_E_STATE (%s)",
	      lidia_strerror(err));
	err = lidia_builder_finalize(b);
	CHECK(err == LIDIA_E_STATE, "finalize twice gives LIDIA_E_STATE (%s)",
	      lidia_strerror(err));
	err = lidia_builder_write_mem(b, &buf, &len);
	CHECK(err == 0 && len == lidia_builder_file_size(b),
	      "write after the refusals works (%zu bytes)", len);
	free(buf);
	lidia_builder_free(b);
	lidia_builder_free(NULL);
}

int main(void)
{
	static const struct cfg cfgs[] = {
		{ "seed 1: small", 1, 40, false, false, false, false, 4, 4, 2 },
		{ "seed 2: small, many", 2, 600, false, false, false, false, 4, 4, 2 },
		{ "seed 3: va past 4 GiB", 3, 200, true, false, false, false, 8, 4, 2 },
		{ "seed 4: length past 4 GiB", 4, 200, false, true, false, false, 4, 8, 2 },
		{ "seed 5: lines past 65535", 5, 200, false, false, true, false, 4, 4, 4 },
		{ "seed 6: line offsets past 65535", 6, 200, false, false, false, true, 4, 4, 4 },
		{ "seed 7: everything wide", 7, 400, true, true, true, true, 8, 8, 4 },
		{ "seed 8: one range", 8, 1, false, false, false, false, 0, 0, 0 },
		{ "seed 9: mixed", 9, 300, true, false, true, false, 0, 0, 0 },
		{ "seed 10: mixed", 10, 300, false, true, false, true, 0, 0, 0 },
		{ "seed 0xdeadbeef: mixed", 0xdeadbeef, 500, true, true, false, true, 0, 0, 0 },
		/* Tables past the builder's 64 KiB encoding chunk. */
		{ "seed 11: 40000 ranges", 11, 40000, false, false, false, false, 4, 4, 2 },
		{ "seed 12: 40000 wide ranges", 12, 40000, true, true, true, true, 8, 8, 4 },
	};

	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
		random_set(&cfgs[i]);
	edge_sets();
	nested();
	refusals();
	/* Last: under UBSan a failure here stops the program. */
	roundtrip("empty builder", NULL, 0, 4, 4, 2);
	return unit_exit();
}
