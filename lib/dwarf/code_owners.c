/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: which unit describes each address, as llvm-symbolizer decides it (code_owners.h). */
#include "code_owners.h"
#include "dwarf_cursor.h"
#include "internal.h"

int code_owners_add(struct code_owners *o, uint64_t unit_off, uint64_t lo, uint64_t hi)
{
	int err;

	if (lo >= hi)
		return 0;
	if ((err = LIDIA_GROW(o->v, o->n + 1, o->cap)))
		return err;
	o->v[o->n++] = (struct owned_span){ lo, hi, unit_off };
	return 0;
}

bool code_owners_listed(const struct code_owners *o, uint64_t unit_off)
{
	return o->nlisted && bsearch(&unit_off, o->listed, o->nlisted, sizeof(unit_off), cmp_u64);
}

/*
 * The set at p[0, size), its ranges added for its unit; its length in *full.
 * False: the set cannot be read (nothing of it added), and neither is the rest.
 */
static bool read_set(struct code_owners *o, const unsigned char *p, size_t size, uint64_t *full,
		     int *err)
{
	struct cursor c = { p, p + size, false };
	uint64_t len = cursor_u(&c, 4), unit_off, tuple, first;
	unsigned offset_size = 4, address_size, segment_size;
	size_t mark = o->n;

	if (len == 0xffffffff) {
		len = cursor_u(&c, 8);
		offset_size = 8;
	} else if (len >= 0xfffffff0) {
		return false; /* reserved */
	}
	cursor_u(&c, 2); /* the version, which LLVM 16 does not check */
	unit_off = cursor_u(&c, offset_size);
	address_size = (unsigned)cursor_u(&c, 1);
	segment_size = (unsigned)cursor_u(&c, 1);
	if (c.bad || len > size - (offset_size == 8 ? 12 : 4) || segment_size ||
	    (address_size != 2 && address_size != 4 && address_size != 8))
		return false;
	*full = len + (offset_size == 8 ? 12 : 4);
	tuple = 2 * address_size;
	/* The tuples start at the first multiple of their size past the header. */
	first = ((uint64_t)(c.p - p) + tuple - 1) / tuple * tuple;
	if (*full % tuple || *full <= first)
		return false;
	c = (struct cursor){ p + first, p + *full, false };
	while (c.p < c.end) {
		uint64_t lo = cursor_u(&c, address_size), length = cursor_u(&c, address_size);

		if (!lo && !length && c.p == c.end) {
			if (!(*err = LIDIA_GROW(o->listed, o->nlisted + 1, o->cap_listed)))
				o->listed[o->nlisted++] = unit_off;
			return !*err;
		}
		/* A terminator before the end is read past, as LLVM 16 does. */
		if ((*err = code_owners_add(o, unit_off, lo, lo + length)))
			return false;
	}
	o->n = mark; /* not terminated */
	return false;
}

int code_owners_read_aranges(struct code_owners *o, const unsigned char *p, size_t size)
{
	uint64_t full;
	int err = 0;

	for (size_t off = 0; p && off < size; off += (size_t)full)
		if (!read_set(o, p + off, size - off, &full, &err))
			break;
	if (o->nlisted > 1)
		qsort(o->listed, o->nlisted, sizeof(*o->listed), cmp_u64);
	return err;
}

/* ---- The spans: LLVM's sweep over the ranges' ends -------------------------------- */

struct endpoint {
	uint64_t addr;
	uint32_t rank; /* the unit's, among the units named, by offset */
	bool start;
};

static int cmp_endpoint(const void *pa, const void *pb)
{
	const struct endpoint *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->start != b->start) /* at one address the order changes nothing: one order */
		return a->start ? 1 : -1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* A binary min-heap of ranks; a rank whose count fell to 0 leaves it when on top. */
struct rank_heap {
	uint32_t *v;
	size_t n;
};

static void heap_push(struct rank_heap *h, uint32_t r)
{
	size_t i = h->n++;

	for (; i && h->v[(i - 1) / 2] > r; i = (i - 1) / 2)
		h->v[i] = h->v[(i - 1) / 2];
	h->v[i] = r;
}

static void heap_pop(struct rank_heap *h)
{
	uint32_t last = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] < h->v[c])
			c++;
		if (h->v[c] >= last)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
}

/* The first unit covering the address now, or UINT32_MAX: none. */
static uint32_t heap_first(struct rank_heap *h, const uint32_t *count)
{
	while (h->n && !count[h->v[0]])
		heap_pop(h);
	return h->n ? h->v[0] : UINT32_MAX;
}

/* The sweep: spans into out (2 * n at most), ranks of units into keys[rank]. */
static size_t sweep(const struct endpoint *e, size_t ne, uint32_t *count, struct rank_heap *h,
		    const uint64_t *keys, struct owned_span *out)
{
	uint64_t prev = 0;
	size_t n = 0;
	uint32_t last_rank = 0;

	for (size_t i = 0; i < ne; i++) {
		uint32_t first = heap_first(h, count);

		if (first != UINT32_MAX && prev < e[i].addr) {
			/* The span before goes on while its unit still covers the address. */
			if (n && out[n - 1].hi == prev && count[last_rank]) {
				out[n - 1].hi = e[i].addr;
			} else {
				out[n++] = (struct owned_span){ prev, e[i].addr, keys[first] };
				last_rank = first;
			}
		}
		if (e[i].start && !count[e[i].rank]++)
			heap_push(h, e[i].rank);
		else if (!e[i].start)
			count[e[i].rank]--; /* its start came before it: a range is never empty */
		prev = e[i].addr;
	}
	return n;
}

/* Each range's end points, the units ranked by offset (keys, nkeys of them). */
static void make_endpoints(const struct code_owners *o, const uint64_t *keys, size_t nkeys,
			   struct endpoint *e)
{
	for (size_t i = 0; i < o->n; i++) {
		const uint64_t *k = bsearch(&o->v[i].unit_off, keys, nkeys, sizeof(*keys), cmp_u64);
		uint32_t rank = (uint32_t)(k - keys);

		e[2 * i] = (struct endpoint){ o->v[i].lo, rank, true };
		e[2 * i + 1] = (struct endpoint){ o->v[i].hi, rank, false };
	}
}

int code_owners_resolve(struct code_owners *o)
{
	uint64_t *keys = malloc(o->n * sizeof(*keys) + 1);
	struct endpoint *e = malloc(2 * o->n * sizeof(*e) + 1);
	uint32_t *count = calloc(o->n + 1, sizeof(*count));
	struct rank_heap h = { malloc(o->n * sizeof(*h.v) + 1), 0 };
	struct owned_span *out = malloc(2 * o->n * sizeof(*out) + 1);
	size_t nkeys = 0;
	int err = -ENOMEM;

	if (!keys || !e || !count || !h.v || !out || o->n > UINT32_MAX)
		goto out;
	for (size_t i = 0; i < o->n; i++)
		keys[i] = o->v[i].unit_off;
	sort_array(keys, o->n, sizeof(*keys), cmp_u64);
	for (size_t i = 0; i < o->n; i++)
		if (!nkeys || keys[nkeys - 1] != keys[i])
			keys[nkeys++] = keys[i];
	make_endpoints(o, keys, nkeys, e);
	sort_array(e, 2 * o->n, sizeof(*e), cmp_endpoint);
	o->cap = 2 * o->n;
	o->n = sweep(e, 2 * o->n, count, &h, keys, out);
	free(o->v);
	o->v = out;
	out = NULL;
	err = 0;
out:
	free(keys);
	free(e);
	free(count);
	free(h.v);
	free(out);
	return err;
}

void code_owners_release(struct code_owners *o)
{
	free(o->v);
	free(o->listed);
	memset(o, 0, sizeof(*o));
}
