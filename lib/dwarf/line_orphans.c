/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: line programs no unit names, read for the code no unit covers (line_orphans.h). */
#include "internal.h"
#include "line_orphans.h"
#include "line_table.h"
#include "name_blocks.h"

static bool named(const uint64_t *v, size_t n, uint64_t off)
{
	return n && bsearch(&off, v, n, sizeof(*v), cmp_u64);
}

/* Whether [lo, hi) meets a normalized interval of c. */
static bool meets(const struct intervals *c, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = c->n;

	while (a < b) { /* first interval ending past lo */
		size_t mid = a + (b - a) / 2;

		if (c->v[mid].hi <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < c->n && c->v[a].lo < hi;
}

/* The rows of lt's sequences that meet no covered code, into x->orphans. */
static int keep_sequences(struct extract_ctx *x, const struct line_table *lt)
{
	struct line_rows *out = &x->orphans;

	for (size_t first = 0, i = 0; i < lt->nrows; i++) {
		const struct line_row *r = lt->rows;
		int err;

		if (r[i].file)
			continue;
		/* rows[first..i] is a sequence, ended by row i */
		if (!meets(&x->covered, r[first].addr + x->bias, r[i].addr + x->bias)) {
			if ((err = LIDIA_GROW(out->v, out->n + (i + 1 - first), out->cap)))
				return err;
			for (size_t k = first; k <= i; k++) {
				const char *f =
					r[k].file ? name_blocks_str(&out->names, r[k].file, NULL)
						  : NULL;

				if (r[k].file && !f)
					return -ENOMEM;
				out->v[out->n++] =
					(struct line_row){ r[k].addr + x->bias, f, r[k].line };
			}
		}
		first = i + 1;
	}
	return 0;
}

/* Where the line program after the one at off starts (0: none, or unreadable). */
static uint64_t next_program(const struct dwarf_sections *s, uint64_t off)
{
	const unsigned char *p = s->line + off;
	uint64_t len, head = 4;

	if (s->line_size - off < 4)
		return 0;
	len = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
	if (len == 0xffffffff) {
		if (s->line_size - off < 12)
			return 0;
		len = 0;
		for (int i = 11; i >= 4; i--)
			len = len << 8 | p[i];
		head = 12;
	}
	if (len > s->line_size - off - head)
		return 0;
	return off + head + len;
}

int line_orphans_add(struct extract_ctx *x, uint64_t *named_at, size_t nnamed,
		     const struct dwarf_sections *s, unsigned address_size)
{
	struct line_table lt = { 0 };
	int err = 0;

	if (!s->line)
		return 0;
	if (nnamed > 1)
		qsort(named_at, nnamed, sizeof(*named_at), cmp_u64);
	intervals_normalize(&x->covered);
	for (uint64_t off = 0, next; off < s->line_size && !err; off = next) {
		if (!(next = next_program(s, off)))
			break;
		if (named(named_at, nnamed, off) ||
		    line_table_decode(&lt, s, off, NULL, address_size))
			continue;
		err = keep_sequences(x, &lt);
	}
	line_table_release(&lt);
	return err;
}
