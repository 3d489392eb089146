/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reader: validates a lidia file before any use, then answers lookups
 * the way Pyroscope does (spec section 4), with lines per section 5.
 *
 * Nothing in the file is trusted: the header's widths, counts and offsets are
 * checked once at open (with overflow-safe arithmetic), and every string
 * offset and line slice taken from a range is checked when it is used.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "format.h"
#include "internal.h"

struct table {
	uint64_t width, count, offset, size;
	uint32_t crc;
	bool crc_checked; /* at open (check_crc): its bytes matched crc */
	const unsigned char *p;
};

struct lidia_reader {
	const unsigned char *data;
	size_t size;
	void *map; /* our mapping, or NULL for caller memory */
	size_t map_size;
	void *owned; /* the bytes read from a pipe, or NULL */
	struct table va, ranges, strings, lines;
};

/* Bounds of one table; size = count * width * per_entry, all overflow-checked. */
static int place_table(struct lidia_reader *r, struct table *t, uint64_t per_entry)
{
	uint64_t size;

	if (t->count && (t->width * per_entry) > UINT64_MAX / t->count)
		return LIDIA_E_OFFSET;
	size = t->count * t->width * per_entry;
	if (t->offset > r->size || size > r->size - t->offset)
		return LIDIA_E_OFFSET;
	t->size = size;
	t->p = r->data + t->offset;
	return 0;
}

static int parse(struct lidia_reader *r, bool check_crc)
{
	const unsigned char *h = r->data;
	struct table *all[4] = { &r->va, &r->ranges, &r->strings, &r->lines };
	int err;

	if (r->size < LIDIA_HEADER_SIZE)
		return r->size >= 4 && memcmp(h, LIDIA_MAGIC, 4) ? LIDIA_E_FORMAT
								 : LIDIA_E_TRUNCATED;
	if (memcmp(h, LIDIA_MAGIC, 4))
		return LIDIA_E_FORMAT;
	if (le32(h + 4) != LIDIA_FORMAT_VERSION)
		return LIDIA_E_VERSION;

	r->va = (struct table){ .width = le64(h + HDR_VA_SIZE),
				.count = le64(h + HDR_VA_COUNT),
				.offset = le64(h + HDR_VA_OFF),
				.crc = le32(h + HDR_VA_CRC) };
	r->ranges = (struct table){ .width = le64(h + HDR_FIELD_SIZE),
				    .count = le64(h + HDR_RANGE_COUNT),
				    .offset = le64(h + HDR_RANGE_OFF),
				    .crc = le32(h + HDR_RANGE_CRC) };
	r->strings = (struct table){ .width = 1,
				     .count = le64(h + HDR_STR_SIZE),
				     .offset = le64(h + HDR_STR_OFF),
				     .crc = le32(h + HDR_STR_CRC) };
	r->lines = (struct table){ .width = le64(h + HDR_LINE_SIZE),
				   .count = le64(h + HDR_LINE_COUNT),
				   .offset = le64(h + HDR_LINE_OFF),
				   .crc = le32(h + HDR_LINE_CRC) };

	if ((r->va.width != 4 && r->va.width != 8) ||
	    (r->ranges.width != 4 && r->ranges.width != 8) ||
	    (r->lines.width != 2 && r->lines.width != 4))
		return LIDIA_E_WIDTH;
	if (r->va.count != r->ranges.count)
		return LIDIA_E_COUNT;
	if ((err = place_table(r, &r->va, 1)) || (err = place_table(r, &r->ranges, 8)) ||
	    (err = place_table(r, &r->strings, 1)) || (err = place_table(r, &r->lines, 2)))
		return err;
	if (check_crc) {
		for (int i = 0; i < 4; i++) {
			if (lidia_crc32c(0, all[i]->p, all[i]->size) != all[i]->crc)
				return LIDIA_E_CRC;
			all[i]->crc_checked = true;
		}
	}
	return 0;
}

int lidia_reader_open_mem(struct lidia_reader **out, const void *buf, size_t size,
			  const struct lidia_reader_opts *opts)
{
	struct lidia_reader *r;
	int err;

	*out = NULL;
	if ((!buf && size) || !OPTS_VALID(opts, lidia_reader_opts))
		return LIDIA_E_INVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->data = buf;
	r->size = size;
	err = parse(r, OPTS_GET(opts, check_crc, false));
	if (err) {
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

/*
 * A pipe or socket cannot be mapped: read it whole. What does not start
 * with the magic is refused at once, so an endless stream of something
 * else is never read to its (missing) end.
 */
static int open_stream(struct lidia_reader **out, int fd, const struct lidia_reader_opts *opts)
{
	size_t len = 0, cap = 0;
	unsigned char *buf = NULL;
	int err;

	for (;;) {
		if (len >= sizeof(LIDIA_MAGIC) - 1 &&
		    memcmp(buf, LIDIA_MAGIC, sizeof(LIDIA_MAGIC) - 1)) {
			err = LIDIA_E_FORMAT;
			goto fail;
		}
		ssize_t n;

		if ((err = LIDIA_GROW(buf, len + 65536, cap)))
			goto fail;
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if ((err = lidia_reader_open_mem(out, buf, len, opts)))
		goto fail;
	(*out)->owned = buf;
	return 0;
fail:
	free(buf);
	return err;
}

int lidia_reader_open_fd(struct lidia_reader **out, int fd, const struct lidia_reader_opts *opts)
{
	struct stat st;
	void *map;
	int err;

	*out = NULL;
	if (!OPTS_VALID(opts, lidia_reader_opts))
		return LIDIA_E_INVAL;
	if (fstat(fd, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	/* Devices (/dev/zero) neither map nor end: only files, pipes and sockets. */
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		return -ENODEV;
	if (!S_ISREG(st.st_mode))
		return open_stream(out, fd, opts);
	if ((uint64_t)st.st_size < LIDIA_HEADER_SIZE) {
		unsigned char small[LIDIA_HEADER_SIZE];
		ssize_t n = pread(fd, small, sizeof(small), 0);

		if (n < 0)
			return -errno;
		return lidia_reader_open_mem(out, small, (size_t)n, opts) ?: LIDIA_E_TRUNCATED;
	}
	if ((uint64_t)st.st_size > SIZE_MAX)
		return -EFBIG;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	err = lidia_reader_open_mem(out, map, (size_t)st.st_size, opts);
	if (err) {
		munmap(map, (size_t)st.st_size);
		return err;
	}
	(*out)->map = map;
	(*out)->map_size = (size_t)st.st_size;
	return 0;
}

int lidia_reader_open(struct lidia_reader **out, const char *path,
		      const struct lidia_reader_opts *opts)
{
	int fd, err;

	*out = NULL;
	if (!OPTS_VALID(opts, lidia_reader_opts))
		return LIDIA_E_INVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = lidia_reader_open_fd(out, fd, opts);
	close(fd);
	return err;
}

void lidia_reader_close(struct lidia_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap(r->map, r->map_size);
	free(r->owned);
	free(r);
}

size_t lidia_reader_count(const struct lidia_reader *r)
{
	return (size_t)r->va.count;
}

static inline uint64_t va_at(const struct lidia_reader *r, uint64_t i)
{
	return r->va.width == 8 ? le64(r->va.p + i * 8) : le32(r->va.p + i * 4);
}

static inline uint64_t field_at(const struct lidia_reader *r, uint64_t i, int k)
{
	const unsigned char *p = r->ranges.p + (i * 8 + (uint64_t)k) * r->ranges.width;

	return r->ranges.width == 8 ? le64(p) : le32(p);
}

/* A depth as the API gives it (a uint32_t): one past UINT32_MAX reads as UINT32_MAX. */
static inline uint32_t depth32(uint64_t depth)
{
	return depth > UINT32_MAX ? UINT32_MAX : (uint32_t)depth;
}

static int string_at(const struct lidia_reader *r, uint64_t off, struct lidia_str *out)
{
	uint64_t len;

	if (off == 0) {
		*out = (struct lidia_str){ "", 0 };
		return 0;
	}
	if (off > r->strings.size || r->strings.size - off < 4)
		return LIDIA_E_STRING;
	len = le32(r->strings.p + off);
	if (len > r->strings.size - off - 4)
		return LIDIA_E_STRING;
	*out = (struct lidia_str){ (const char *)r->strings.p + off + 4, (size_t)len };
	return 0;
}

static int line_slice(const struct lidia_reader *r, uint64_t idx, uint64_t count)
{
	if (idx > r->lines.count || count > r->lines.count - idx)
		return LIDIA_E_LINES;
	return 0;
}

static inline void line_at(const struct lidia_reader *r, uint64_t i, struct lidia_line *out)
{
	unsigned w = (unsigned)r->lines.width;
	const unsigned char *p = r->lines.p + i * 2 * w;

	out->offset = (uint32_t)le_field(p, w);
	out->line = (uint32_t)le_field(p + w, w);
}

/* The line of the last row at or before rel in range i's slice; 0 when none. */
static int line_for(const struct lidia_reader *r, uint64_t i, uint64_t rel, uint32_t *line)
{
	uint64_t idx = field_at(r, i, RF_LINE_IDX), n = field_at(r, i, RF_LINE_COUNT);
	uint64_t lo = 0, hi = n;
	struct lidia_line row;
	int err = line_slice(r, idx, n);

	*line = 0;
	if (err)
		return err;
	while (lo < hi) { /* first row whose offset is past rel */
		uint64_t mid = lo + (hi - lo) / 2;

		line_at(r, idx + mid, &row);
		if (row.offset > rel)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo) {
		line_at(r, idx + lo - 1, &row);
		*line = row.line;
	}
	return 0;
}

int lidia_reader_lookup(const struct lidia_reader *r, uint64_t addr, struct lidia_frame *frames,
			size_t cap)
{
	uint64_t lo = 0, hi = r->va.count, prev_call_line = 0, prev_call_file = 0;
	size_t n = 0;
	int err;

	while (lo < hi) { /* first index whose VA is past addr */
		uint64_t mid = lo + (hi - lo) / 2;

		if (va_at(r, mid) > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	/* Walk back from the last range starting at or before addr to the first depth 0. */
	for (uint64_t i = lo; i-- > 0;) {
		uint64_t va = va_at(r, i), depth = field_at(r, i, RF_DEPTH);

		if (addr - va < field_at(r, i, RF_LENGTH)) {
			/* Every frame is read and checked, whether or not there is room for it. */
			struct lidia_frame f;
			uint32_t line;

			if ((err = string_at(r, field_at(r, i, RF_FUNC), &f.function)) ||
			    (err = string_at(r, field_at(r, i, RF_FILE), &f.file)))
				return err;
			if (n == 0) {
				if ((err = line_for(r, i, addr - va, &line)))
					return err;
			} else {
				line = (uint32_t)prev_call_line;
			}
			/*
			 * An outer frame is at the call site of the frame just inside
			 * it: that call file goes with the call line (spec section 5),
			 * the range's own file is the fallback.
			 */
			if (n > 0 && prev_call_file) {
				struct lidia_str cf;

				if ((err = string_at(r, prev_call_file, &cf)))
					return err;
				if (cf.len)
					f.file = cf;
			}
			f.line = line;
			f.depth = depth32(depth);
			f.inlined = depth > 0;
			if (n < cap)
				frames[n] = f;
			prev_call_line = field_at(r, i, RF_CALL_LINE);
			prev_call_file = field_at(r, i, RF_CALL_FILE);
			n++;
		}
		if (depth == 0)
			break;
	}
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

int lidia_reader_range(const struct lidia_reader *r, size_t i, struct lidia_range_info *out)
{
	int err;

	if (i >= r->va.count)
		return LIDIA_E_INVAL;
	out->va = va_at(r, i);
	out->length = field_at(r, i, RF_LENGTH);
	out->depth = depth32(field_at(r, i, RF_DEPTH));
	out->line_idx = field_at(r, i, RF_LINE_IDX);
	out->line_count = field_at(r, i, RF_LINE_COUNT);
	out->call_line = field_at(r, i, RF_CALL_LINE);
	if ((err = string_at(r, field_at(r, i, RF_FUNC), &out->func)) ||
	    (err = string_at(r, field_at(r, i, RF_FILE), &out->file)) ||
	    (err = string_at(r, field_at(r, i, RF_CALL_FILE), &out->call_file)))
		return err;
	return line_slice(r, out->line_idx, out->line_count);
}

int lidia_reader_line(const struct lidia_reader *r, uint64_t i, struct lidia_line *out)
{
	if (i >= r->lines.count)
		return LIDIA_E_LINES;
	line_at(r, i, out);
	return 0;
}

int lidia_reader_info(const struct lidia_reader *r, struct lidia_file_info *out)
{
	const struct table *t[4] = { &r->va, &r->ranges, &r->strings, &r->lines };
	struct lidia_table_info *o[4] = { &out->va, &out->ranges, &out->strings, &out->lines };

	out->version = le32(r->data + 4);
	out->file_size = r->size;
	for (int k = 0; k < 4; k++) {
		*o[k] = (struct lidia_table_info){
			.entry_size = t[k]->width,
			.count = t[k]->count,
			.offset = t[k]->offset,
			.size = t[k]->size,
			.crc = t[k]->crc,
			/* Checked at open already: not again (a big file's tables are 100 MB). */
			.crc_ok = t[k]->crc_checked ||
				  lidia_crc32c(0, t[k]->p, t[k]->size) == t[k]->crc,
		};
	}
	return 0;
}

int lidia_reader_check(const struct lidia_reader *r, size_t *bad_index)
{
	struct lidia_range_info ri;
	uint64_t prev_va = 0;
	int err = 0;
	size_t i;

	for (i = 0; i < r->va.count; i++) {
		if ((err = lidia_reader_range(r, i, &ri)))
			goto out;
		if (i && ri.va < prev_va) {
			err = LIDIA_E_ORDER;
			goto out;
		}
		prev_va = ri.va;
		for (uint64_t k = 1; k < ri.line_count; k++) {
			struct lidia_line a, b;

			line_at(r, ri.line_idx + k - 1, &a);
			line_at(r, ri.line_idx + k, &b);
			if (b.offset < a.offset) {
				err = LIDIA_E_LINES;
				goto out;
			}
		}
	}
out:
	if (bad_index)
		*bad_index = i;
	return err;
}
