/* SPDX-License-Identifier: Apache-2.0 */
/* Support: helpers shared by the library's files; not installed. */
#ifndef LIDIA_INTERNAL_H
#define LIDIA_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lidia.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Options structs: a field is read only when the caller's struct has it. */
#define OPTS_HAS(opts, field)                                                                      \
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field))
#define OPTS_GET(opts, field, fallback) (OPTS_HAS(opts, field) ? (opts)->field : (fallback))

/*
 * And a caller's struct is accepted only when this build can honour all of
 * it (libbpf's OPTS_VALID): NULL, or sz at least covers sz itself and every
 * byte past the last field this build knows is zero. A larger struct comes
 * from a newer lidia.h, and a non-zero byte there is a field it set that
 * this build would silently ignore. The check starts right after the last
 * field, not at sizeof: a newer field may take today's reserved bytes.
 * Used at every public function that takes opts; fails with LIDIA_E_INVAL.
 */
#define OPTS_VALID(opts, type)                                                                     \
	(!(opts) || opts_valid((const unsigned char *)(opts), (opts)->sz,                          \
			       OPTS_END(type, type##__last_field)))

static inline bool opts_valid(const unsigned char *opts, size_t user_sz, size_t known_sz)
{
	if (user_sz < sizeof(size_t))
		return false;
	for (size_t i = known_sz; i < user_sz; i++)
		if (opts[i])
			return false;
	return true;
}

/*
 * The last field of each options struct, after which a newer lidia.h's
 * fields begin (a reserved array included: it is theirs). A field added to
 * one in lidia.h goes at its end, taking reserved bytes first, and is named
 * here. Padding is the one part of a struct an initialiser may leave
 * holding garbage, so none may lie past a field some older library knows:
 * the assertions keep each struct free of tail padding, and added fields
 * must leave no hole between them either.
 */
#define lidia_reader_opts__last_field check_crc
#define lidia_extract_opts__last_field dwz_dir
#define lidia_store_opts__last_field key_template
#define lidia_archive_opts__last_field file_bytes

#define OPTS_END(type, field) (offsetof(struct type, field) + sizeof(((struct type *)0)->field))
_Static_assert(sizeof(struct lidia_reader_opts) == OPTS_END(lidia_reader_opts, reserved),
	       "lidia_reader_opts ends in padding");
_Static_assert(sizeof(struct lidia_extract_opts) == OPTS_END(lidia_extract_opts, dwz_dir),
	       "lidia_extract_opts ends in padding");
_Static_assert(sizeof(struct lidia_store_opts) == OPTS_END(lidia_store_opts, key_template),
	       "lidia_store_opts ends in padding");
_Static_assert(sizeof(struct lidia_archive_opts) == OPTS_END(lidia_archive_opts, file_bytes),
	       "lidia_archive_opts ends in padding");

/* Little-endian loads and stores; unaligned by construction (memcpy). */
static inline uint16_t le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t le32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline uint64_t le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline void put_le16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static inline void put_le32(unsigned char *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, 4);
}

static inline void put_le64(unsigned char *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
}

/* An n-byte unsigned integer (n <= 8) in either byte order: ELF and pclntab fields. */
static inline uint64_t load_endian(const unsigned char *p, unsigned n, bool big_endian)
{
	uint64_t v = 0;

	if (big_endian)
		for (unsigned i = 0; i < n; i++)
			v = v << 8 | p[i];
	else
		for (unsigned i = n; i-- > 0;)
			v = v << 8 | p[i];
	return v;
}

/* Load a field of width 2, 4 or 8. */
static inline uint64_t le_field(const unsigned char *p, unsigned width)
{
	return width == 8 ? le64(p) : width == 4 ? le32(p) : le16(p);
}

/* Two uint64_t in ascending order, for qsort() and bsearch(). */
static inline int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* qsort, which must not be given a NULL base even for no elements. */
static inline void sort_array(void *base, size_t n, size_t size,
			      int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/*
 * Grow *buf (of *cap elements of elem_size bytes) to hold at least need
 * elements, by half again each time. Returns 0 or -ENOMEM; *buf is unchanged on failure.
 */
int lidia_grow(void **buf, size_t *cap, size_t need, size_t elem_size);

/*
 * Make *buf (of *cap elements of elem_size bytes) hold need elements at
 * once, for a count known ahead: no slack but what puts a big one on huge
 * pages (huge_fit()). Returns 0 or -ENOMEM; *buf is unchanged on failure.
 */
int lidia_reserve(void **buf, size_t *cap, size_t need, size_t elem_size);

/*
 * The typed form, and the one to use (git's ALLOC_GROW): make the array a,
 * of cap elements, hold at least need; the element size comes from a's own
 * type. Evaluates to 0 or -ENOMEM; a and cap are unchanged on failure.
 */
#define LIDIA_GROW(a, need, cap)                                                                   \
	__extension__({                                                                            \
		size_t grow_need_ = (need);                                                        \
		int grow_err_ = 0;                                                                 \
		if (grow_need_ > (cap)) { /* called only to grow: hot loops add one at a time */   \
			void *grow_p_ = (a);                                                       \
			grow_err_ = lidia_grow(&grow_p_, &(cap), grow_need_, sizeof(*(a)));        \
			(a) = grow_p_;                                                             \
		}                                                                                  \
		grow_err_;                                                                         \
	})

/* write() all of buf to fd, through EINTR and short writes; 0 or -errno. */
int lidia_write_all(int fd, const void *buf, size_t len);

/* Report through the installed log callback (printf-style). */
void lidia_log(enum lidia_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* True when a log callback is installed (skip formatting work otherwise). */
int lidia_log_enabled(void);

#endif /* LIDIA_INTERNAL_H */
