/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The builder: collects ranges, then finalizes them into the exact tables of
 * a lidia file (spec sections 1 to 3 and 6) and writes them in order.
 *
 * Tables are not kept encoded: finalize encodes them once for the CRCs and
 * write again on the way to the sink (encode.c).
 */
#include <stdlib.h>
#include <unistd.h>

#include "builder.h"
#include "crc32c.h"
#include "format.h"
#include "internal.h"
#include "range_sort.h"
#include "strtab.h"
#include "tables.h"

/* One rule of lidia_builder_map_prefix(): a file name starting with old gets new instead. */
struct prefix_rule {
	char *old, *new;
	size_t old_len, new_len;
};

/*
 * The file names as given, when there are rules: each once, in seen (never
 * written), with the offset of its mapped name in strings. seen's offsets
 * grow as names are added, so raw[] is sorted: a name seen again is found by
 * its hash in seen, then by binary search here, and is mapped only once.
 */
struct file_map {
	struct strtab seen;
	uint32_t *raw, *mapped; /* seen's offset, strings' offset: n of each */
	size_t n, cap_raw, cap_mapped;
};

/*
 * Strings by the address they were given at, checked by their bytes: a
 * caller gives the same names and paths from the same memory again and
 * again (one file for a function's ranges, an inlined function's name for
 * each of its ranges), and comparing once is cheaper than measuring,
 * hashing and finding the string (a fifteenth of a dwz'd file's
 * instructions). A field's string is most often the last range's, at the
 * same address: found here too.
 */
#define MEMO_BITS 10

struct memo_slot {
	const char *p; /* NULL: empty */
	uint32_t off, len;
};

struct lidia_builder {
	struct brange *ranges;
	size_t nranges, cap_ranges;
	struct lidia_line *lines;
	size_t nlines, cap_lines;
	struct strtab strings;
	struct prefix_rule *rules;
	size_t nrules, cap_rules;
	struct file_map files;
	struct memo_slot memo[1u << MEMO_BITS];
	bool finalized;
	unsigned threads; /* finalize and write_mem may use (builder_use_threads) */
	unsigned va_size, field_size, line_size;
	uint32_t crc[4]; /* VA, ranges, strings, lines */
};

int lidia_builder_new(struct lidia_builder **out)
{
	struct lidia_builder *b = calloc(1, sizeof(*b));
	int err;

	*out = NULL;
	if (!b)
		return -ENOMEM;
	err = strtab_init(&b->strings);
	if (err) {
		free(b);
		return err;
	}
	*out = b;
	return 0;
}

void lidia_builder_free(struct lidia_builder *b)
{
	if (!b)
		return;
	free(b->ranges);
	free(b->lines);
	strtab_release(&b->strings);
	for (size_t i = 0; i < b->nrules; i++) {
		free(b->rules[i].old);
		free(b->rules[i].new);
	}
	free(b->rules);
	strtab_release(&b->files.seen);
	free(b->files.raw);
	free(b->files.mapped);
	free(b);
}

size_t lidia_builder_count(const struct lidia_builder *b)
{
	return b->nranges;
}

/* The offset of s[0..len) in the strings ("" when len is 0), added on first use. */
static int intern_n(struct lidia_builder *b, const char *s, size_t len, uint32_t *off)
{
	uint64_t o;
	int err = strtab_intern(&b->strings, len ? s : "", len, &o);

	*off = (uint32_t)o;
	return err;
}

int lidia_builder_map_prefix(struct lidia_builder *b, const char *old_prefix,
			     const char *new_prefix)
{
	struct prefix_rule *r;
	int err;

	if (b->finalized || b->nranges)
		return LIDIA_E_STATE;
	if (!old_prefix || !*old_prefix || !new_prefix)
		return LIDIA_E_INVAL;
	if (!b->nrules && (err = strtab_init(&b->files.seen)))
		return err;
	if ((err = LIDIA_GROW(b->rules, b->nrules + 1, b->cap_rules)))
		return err;
	r = &b->rules[b->nrules];
	r->old = strdup(old_prefix);
	r->new = strdup(new_prefix);
	if (!r->old || !r->new) {
		free(r->old);
		free(r->new);
		return -ENOMEM;
	}
	r->old_len = strlen(r->old);
	r->new_len = strlen(r->new);
	b->nrules++;
	return 0;
}

/* s[0..len) with the first rule whose prefix it starts with applied, interned. */
static int intern_mapped(struct lidia_builder *b, const char *s, size_t len, uint64_t *off)
{
	const struct prefix_rule *r = NULL;
	char *buf;
	int err;

	for (size_t i = 0; i < b->nrules && !r; i++)
		if (len >= b->rules[i].old_len && !memcmp(s, b->rules[i].old, b->rules[i].old_len))
			r = &b->rules[i];
	if (!r)
		return strtab_intern(&b->strings, s, len, off);
	buf = malloc(r->new_len + (len - r->old_len) + 1);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, r->new, r->new_len);
	memcpy(buf + r->new_len, s + r->old_len, len - r->old_len);
	err = strtab_intern(&b->strings, buf, r->new_len + (len - r->old_len), off);
	free(buf);
	return err;
}

/* The index in files.raw of seen's offset raw, or files.n when it has none. */
static size_t find_raw(const struct file_map *f, uint32_t raw)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->raw[mid] < raw)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->n && f->raw[lo] == raw ? lo : f->n;
}

/* A file name s[0..len)'s offset: as intern_n(), with the prefix rules applied once per distinct name. */
static int intern_file_n(struct lidia_builder *b, const char *s, size_t len, uint32_t *off)
{
	struct file_map *f = &b->files;
	size_t count = f->seen.count, i;
	uint64_t raw, o;
	int err;

	if (!b->nrules || !len)
		return intern_n(b, s, len, off);
	if ((err = strtab_intern(&f->seen, s, len, &raw)))
		return err;
	/* Known ("[overflow]" is in seen from the start, and has no entry: mapped each time). */
	if (f->seen.count == count && (i = find_raw(f, (uint32_t)raw)) < f->n) {
		*off = f->mapped[i];
		return 0;
	}
	if ((err = intern_mapped(b, s, len, &o)))
		return err;
	*off = (uint32_t)o;
	if (f->seen.count == count)
		return 0;
	if ((err = LIDIA_GROW(f->raw, f->n + 1, f->cap_raw)) ||
	    (err = LIDIA_GROW(f->mapped, f->n + 1, f->cap_mapped)))
		return err;
	f->raw[f->n] = (uint32_t)raw;
	f->mapped[f->n++] = *off;
	return 0;
}

/*
 * s's offset (NULL: ""), as intern_n() or, for a file, intern_file_n(),
 * but found first in the memo. A file name with prefix rules is never taken
 * from it: what is there is the name mapped, not as given.
 */
static int intern_remembered(struct lidia_builder *b, const char *s, bool file, uint32_t *off)
{
	bool as_given = !(file && b->nrules);
	struct memo_slot *m;
	size_t len;
	int err;

	if (!s || !*s) {
		*off = 0;
		return 0;
	}
	m = &b->memo[((uintptr_t)s >> 3) * 0x9e3779b97f4a7c15ull >> (64 - MEMO_BITS)];
	/* strncmp: s may be shorter than what was at its address before; no NUL is interned. */
	if (as_given && m->p == s &&
	    !strncmp((const char *)b->strings.pool + m->off + 4, s, m->len) && !s[m->len]) {
		*off = m->off;
		return 0;
	}
	len = strlen(s);
	err = file ? intern_file_n(b, s, len, off) : intern_n(b, s, len, off);
	if (!err && as_given && len <= UINT32_MAX && *off != STRTAB_OVERFLOW)
		*m = (struct memo_slot){ s, *off, (uint32_t)len };
	return err;
}

int lidia_builder_add(struct lidia_builder *b, const struct lidia_range_desc *r)
{
	struct brange *br;
	int err;

	if (b->finalized)
		return LIDIA_E_STATE;
	if (r->length == 0)
		return 0;
	if (r->va + r->length < r->va)
		return LIDIA_E_INVAL;
	for (size_t i = 0; i < r->line_count; i++) {
		if (r->lines[i].offset >= r->length ||
		    (i && r->lines[i].offset < r->lines[i - 1].offset))
			return LIDIA_E_INVAL;
	}
	if (b->nranges >= UINT32_MAX || b->nlines + r->line_count >= UINT32_MAX)
		return LIDIA_E_TOO_BIG;

	if ((err = LIDIA_GROW(b->ranges, b->nranges + 1, b->cap_ranges)))
		return err;
	if (r->line_count && (err = LIDIA_GROW(b->lines, b->nlines + r->line_count, b->cap_lines)))
		return err;

	br = &b->ranges[b->nranges];
	br->va = r->va;
	br->length = r->length;
	br->depth = r->depth;
	br->call_line = r->call_line;
	br->seq = (uint32_t)b->nranges;
	if ((err = intern_remembered(b, r->func, false, &br->func)) ||
	    (err = intern_remembered(b, r->file, true, &br->file)) ||
	    (err = intern_remembered(b, r->call_file, true, &br->call_file)))
		return err;
	br->line_count = (uint32_t)r->line_count;
	br->line_idx = r->line_count ? (uint32_t)b->nlines : 0;
	if (r->line_count)
		memcpy(b->lines + b->nlines, r->lines, r->line_count * sizeof(*r->lines));
	b->nlines += r->line_count;
	b->nranges++;
	return 0;
}

/*
 * src's strings as dst's: an offset in src's table (tagged with whether it
 * names a file, which dst's prefix rules apply to) and its offset in dst's.
 */
struct string_map {
	uint64_t *keys; /* (src offset << 1 | is_file) + 1; 0: empty */
	uint32_t *values;
	size_t mask;
};

/* The dst offset of src's string at off, interned into dst on first use. */
static int map_string(struct lidia_builder *dst, const struct lidia_builder *src,
		      struct string_map *m, uint32_t off, bool is_file, uint32_t *out)
{
	uint64_t key = ((uint64_t)off << 1 | is_file) + 1;
	size_t i = (size_t)(key * 0x9e3779b97f4a7c15ull >> 20) & m->mask;
	const unsigned char *p;
	uint32_t len;
	int err;

	if (!off) {
		*out = 0; /* "" */
		return 0;
	}
	for (; m->keys[i]; i = (i + 1) & m->mask) {
		if (m->keys[i] == key) {
			*out = m->values[i];
			return 0;
		}
	}
	p = src->strings.pool + off;
	len = le32(p);
	err = is_file ? intern_file_n(dst, (const char *)p + 4, len, out)
		      : intern_n(dst, (const char *)p + 4, len, out);
	if (!err) {
		m->keys[i] = key;
		m->values[i] = *out;
	}
	return err;
}

int builder_append(struct lidia_builder *dst, const struct lidia_builder *src)
{
	struct string_map m = { 0 };
	size_t slots = 64;
	int err = 0;

	if (dst->finalized || src->finalized)
		return LIDIA_E_STATE;
	if (dst->nranges + src->nranges >= UINT32_MAX || dst->nlines + src->nlines >= UINT32_MAX)
		return LIDIA_E_TOO_BIG;
	while (slots < 4 * src->strings.count + 4) /* a string is a func and a file at most */
		slots *= 2;
	m.keys = calloc(slots, sizeof(*m.keys));
	m.values = malloc(slots * sizeof(*m.values));
	m.mask = slots - 1;
	if (!m.keys || !m.values ||
	    (err = LIDIA_GROW(dst->ranges, dst->nranges + src->nranges, dst->cap_ranges)) ||
	    (src->nlines &&
	     (err = LIDIA_GROW(dst->lines, dst->nlines + src->nlines, dst->cap_lines))))
		goto out;
	/* Range by range, so that dst interns the strings in the order adding them would. */
	for (size_t k = 0; k < src->nranges && !err; k++) {
		const struct brange *r = &src->ranges[k];
		struct brange *br = &dst->ranges[dst->nranges];

		*br = *r;
		br->seq = (uint32_t)dst->nranges;
		br->line_idx = r->line_count ? (uint32_t)dst->nlines : 0;
		if ((err = map_string(dst, src, &m, r->func, false, &br->func)) ||
		    (err = map_string(dst, src, &m, r->file, true, &br->file)) ||
		    (err = map_string(dst, src, &m, r->call_file, true, &br->call_file)))
			break;
		if (r->line_count) /* src may have no lines at all */
			memcpy(dst->lines + dst->nlines, src->lines + r->line_idx,
			       r->line_count * sizeof(*src->lines));
		dst->nlines += r->line_count;
		dst->nranges++;
	}
out:
	if (!err && (!m.keys || !m.values))
		err = -ENOMEM;
	free(m.keys);
	free(m.values);
	return err;
}

int builder_reserve(struct lidia_builder *b, size_t ranges, size_t string_bytes)
{
	void *p = b->ranges;

	if (lidia_reserve(&p, &b->cap_ranges, b->nranges + ranges, sizeof(*b->ranges)))
		return -ENOMEM;
	b->ranges = p;
	return strtab_reserve(&b->strings, string_bytes, ranges);
}

void builder_truncate(struct lidia_builder *b, size_t nranges)
{
	/* Ranges and their lines are appended in step: the first dropped range with lines marks the end. */
	for (size_t i = nranges; i < b->nranges; i++) {
		if (b->ranges[i].line_count) {
			b->nlines = b->ranges[i].line_idx;
			break;
		}
	}
	if (nranges < b->nranges)
		b->nranges = nranges;
}

static int cmp_range(const void *a, const void *b)
{
	return range_cmp(a, b);
}

/* The tables as the encoder reads them. */
static struct tables view(const struct lidia_builder *b)
{
	return (struct tables){ .ranges = b->ranges,
				.nranges = b->nranges,
				.lines = b->lines,
				.nlines = b->nlines,
				.strings = b->strings.pool,
				.strings_len = b->strings.len,
				.va_size = b->va_size,
				.field_size = b->field_size,
				.line_size = b->line_size };
}

void builder_use_threads(struct lidia_builder *b, unsigned threads)
{
	b->threads = threads;
}

/*
 * The ranges in (va, depth, insertion) order, a total order: the same
 * result however it is reached (range_sort.c; qsort when there is no
 * memory for its copy).
 */
static void sort_ranges(struct lidia_builder *b)
{
	struct brange *sorted;

	/*
	 * Symbols alone are added by address: a look costs less than the
	 * sort's keys, passes and copy (a tenth of libLLVM-16's symbols run).
	 */
	if (ranges_in_order(b->ranges, b->nranges))
		return;
	sorted = range_sort(b->ranges, b->nranges, b->threads);

	if (!sorted) {
		sort_array(b->ranges, b->nranges, sizeof(*b->ranges), cmp_range);
		return;
	}
	free(b->ranges);
	b->ranges = sorted;
	b->cap_ranges = b->nranges ? b->nranges : 1;
}

int lidia_builder_finalize(struct lidia_builder *b)
{
	uint64_t max_va = 0, max_field = 0, max_line = 0;
	struct tables tables;
	int err;

	if (b->finalized)
		return LIDIA_E_STATE;
	sort_ranges(b);

	for (size_t i = 0; i < b->nranges; i++) {
		const struct brange *r = &b->ranges[i];
		uint64_t f[8] = { r->length,   r->depth,      r->func,	    r->file,
				  r->line_idx, r->line_count, r->call_file, r->call_line };

		if (r->va > max_va)
			max_va = r->va;
		for (int k = 0; k < 8; k++)
			if (f[k] > max_field)
				max_field = f[k];
	}
	for (size_t i = 0; i < b->nlines; i++) {
		if (b->lines[i].offset > max_line)
			max_line = b->lines[i].offset;
		if (b->lines[i].line > max_line)
			max_line = b->lines[i].line;
	}
	b->va_size = max_va > UINT32_MAX ? 8 : 4;
	b->field_size = max_field > UINT32_MAX ? 8 : 4;
	b->line_size = max_line > UINT16_MAX ? 4 : 2;
	tables = view(b);

	err = tables_crc(&tables, b->threads, b->crc);
	if (!err)
		b->finalized = true;
	return err;
}

uint64_t lidia_builder_file_size(const struct lidia_builder *b)
{
	struct tables tables;
	uint64_t size[NTABLES];

	tables = view(b);
	tables_sizes(&tables, size);
	return LIDIA_HEADER_SIZE + size[0] + size[1] + size[2] + size[3];
}

static void make_header(const struct lidia_builder *b, unsigned char *h)
{
	struct tables tables;
	uint64_t size[NTABLES], off[NTABLES];

	tables = view(b);
	tables_sizes(&tables, size);
	/* The tables go back to back in this order, as the reference writes them. */
	off[0] = LIDIA_HEADER_SIZE;
	for (int t = 1; t < 4; t++)
		off[t] = off[t - 1] + size[t - 1];
	memset(h, 0, LIDIA_HEADER_SIZE);
	memcpy(h, LIDIA_MAGIC, 4);
	put_le32(h + 4, LIDIA_FORMAT_VERSION);
	put_le64(h + HDR_VA_SIZE, b->va_size);
	put_le64(h + HDR_VA_COUNT, b->nranges);
	put_le64(h + HDR_VA_OFF, off[0]);
	put_le32(h + HDR_VA_CRC, b->crc[0]);
	put_le64(h + HDR_FIELD_SIZE, b->field_size);
	put_le64(h + HDR_RANGE_COUNT, b->nranges);
	put_le64(h + HDR_RANGE_OFF, off[1]);
	put_le32(h + HDR_RANGE_CRC, b->crc[1]);
	put_le64(h + HDR_STR_SIZE, size[2]);
	put_le64(h + HDR_STR_OFF, off[2]);
	put_le32(h + HDR_STR_CRC, b->crc[2]);
	put_le64(h + HDR_LINE_SIZE, b->line_size);
	put_le64(h + HDR_LINE_COUNT, b->nlines);
	put_le64(h + HDR_LINE_OFF, off[3]);
	put_le32(h + HDR_LINE_CRC, b->crc[3]);
}

int lidia_builder_write(struct lidia_builder *b, lidia_sink_fn sink, void *ctx)
{
	unsigned char header[LIDIA_HEADER_SIZE];
	struct tables tables = view(b);
	int err;

	if (!b->finalized)
		return LIDIA_E_STATE;
	make_header(b, header);
	err = sink(ctx, header, sizeof(header));
	return err ? err : tables_emit_pipe(&tables, b->threads, sink, ctx);
}

int lidia_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fd_sink(void *ctx, const void *buf, size_t len)
{
	return lidia_write_all(*(int *)ctx, buf, len);
}

/*
 * Streamed a chunk at a time, encoded beside the writing with a second
 * thread (emit_pipe.c): encoding the whole file in fresh memory on every
 * thread first was slower (its pages made, then copied).
 */
int lidia_builder_write_fd(struct lidia_builder *b, int fd)
{
	return lidia_builder_write(b, fd_sink, &fd);
}

int lidia_builder_write_mem(struct lidia_builder *b, void **out_buf, size_t *out_size)
{
	uint64_t size = lidia_builder_file_size(b);
	struct tables tables = view(b);
	unsigned char *buf;
	int err;

	*out_buf = NULL;
	*out_size = 0;
	if (!b->finalized)
		return LIDIA_E_STATE;
	if (size > SIZE_MAX)
		return LIDIA_E_TOO_BIG;
	buf = malloc((size_t)size);
	if (!buf)
		return -ENOMEM;
	make_header(b, buf);
	/* Into memory, the tables' pieces are encoded side by side, each at its place. */
	err = tables_encode(&tables, b->threads, buf + LIDIA_HEADER_SIZE);
	if (err) {
		free(buf);
		return err;
	}
	*out_buf = buf;
	*out_size = (size_t)size;
	return 0;
}
