/* SPDX-License-Identifier: Apache-2.0 */
/* Extract: depth-0 ranges from resolved symbols, overlaps cut (spec section 4). */
#include "builder.h"
#include "functions.h"
#include "internal.h"

struct sweep {
	struct extract_ctx *x;
	struct lidia_line *lines; /* scratch for one piece's rows */
	size_t cap_lines;
	size_t next_cover; /* pieces come in address order, so the cursor only moves on */
	size_t added;
};

/* One piece: [start, end), the first n of sw->lines, file its rows' (NULL: own, the symbol's). */
static int put_piece(struct sweep *sw, struct lidia_range_desc *r, const char *own, uint64_t start,
		     uint64_t end, const char *file, size_t n)
{
	r->va = start;
	r->length = end - start;
	r->file = sw->x->files && file ? file : own;
	r->lines = sw->lines;
	r->line_count = n;
	sw->added++;
	sw->x->st.line_rows += n; /* the level the output holds counts them */
	return lidia_builder_add(sw->x->b, r);
}

/*
 * [from, to) of s with the orphan rows in it: a new piece wherever the rows'
 * file changes (an #include'd .c file, an inlined header function whose
 * subprogram is gone), and where rows stop or start again (code no row
 * describes has no file, as llvm-symbolizer's ??:0), so that each piece's
 * file is true (spec section 5).
 */
static int add_with_rows(struct sweep *sw, struct lidia_range_desc *r, uint64_t from, uint64_t to)
{
	const struct line_rows *rows = &sw->x->orphans;
	const char *own = r->file, *file = NULL;
	size_t first = line_rows_after(rows->v, rows->n, from), n = 0;
	uint64_t start = from, real_at = 0;
	bool real_seen = false; /* a row with a file at real_at */
	int err;

	for (size_t i = first ? first - 1 : 0; i < rows->n && rows->v[i].addr < to; i++) {
		const struct line_row *row = &rows->v[i];
		uint64_t at = row->addr > from ? row->addr : from;
		uint32_t line = row->file && row->line > 0 ? (uint32_t)row->line : 0;

		if (!row->file && row->line == LINE_ROW_SPAN_END && real_seen &&
		    row->addr == real_at)
			continue;
		if (row->file) {
			real_seen = true;
			real_at = row->addr;
		}
		if (sw->x->files && at > start &&
		    (row->file ? !file || strcmp(row->file, file) : file != NULL)) {
			/* Rows at the split point (equal addresses) belong to the next piece. */
			while (n && sw->lines[n - 1].offset >= at - start)
				n--;
			if ((err = put_piece(sw, r, own, start, at, file, n)))
				return err;
			start = at;
			n = 0;
			file = NULL;
		}
		/* A row at the piece's start supersedes the one in effect before it. */
		if (row->file && (!file || at == start))
			file = row->file;
		if (n && sw->lines[n - 1].line == line)
			continue;
		if (n && sw->lines[n - 1].offset == at - start) {
			sw->lines[n - 1].line = line;
			continue;
		}
		if (!n && !line)
			continue;
		if ((err = LIDIA_GROW(sw->lines, n + 1, sw->cap_lines)))
			return err;
		sw->lines[n++] = (struct lidia_line){ (uint32_t)(at - start), line };
	}
	return put_piece(sw, r, own, start, to, file, n);
}

static int add_piece(struct sweep *sw, const struct sym *s, uint64_t from, uint64_t to)
{
	struct extract_ctx *x = sw->x;
	struct lidia_range_desc r = { .va = from,
				      .length = to - from,
				      .func = demangle(&x->dm, s->name),
				      .file = x->files ? s->file : NULL };

	if (x->orphans.n && to - from <= UINT32_MAX)
		return add_with_rows(sw, &r, from, to);
	sw->added++;
	return lidia_builder_add(x->b, &r);
}

/* Add [from, to) of s, less what the covered intervals already describe. */
static int emit(struct sweep *sw, const struct sym *s, uint64_t from, uint64_t to)
{
	const struct intervals *c = &sw->x->covered;
	size_t i = sw->next_cover;
	int err;

	if (to <= from)
		return 0;
	while (i < c->n && c->v[i].hi <= from)
		i++;
	sw->next_cover = i;
	for (; i < c->n && c->v[i].lo < to; i++) {
		if (c->v[i].lo > from && (err = add_piece(sw, s, from, c->v[i].lo)))
			return err;
		if (c->v[i].hi >= to)
			return 0;
		if (c->v[i].hi > from)
			from = c->v[i].hi;
	}
	return add_piece(sw, s, from, to);
}

int functions_add_symbols(struct extract_ctx *x)
{
	const struct sym_vec *syms = &x->syms;
	struct sweep sw = { .x = x };
	const struct sym **stack = NULL;
	size_t n = syms->n, depth = 0;
	uint64_t pos = 0;
	int err = 0;

	if (!n)
		return 0;
	{
		/* Room for one range and one name per symbol; demangled names may take more. */
		size_t bytes = 0;

		for (size_t i = 0; i < n; i++)
			bytes += strlen(syms->v[i].name) + 4;
		if ((err = builder_reserve(x->b, n, bytes)))
			return err;
	}
	stack = malloc(n * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	/*
	 * Sweep by start address with a stack of the symbols that are open: each
	 * address belongs to the open symbol that started last.
	 */
	for (size_t i = 0; i < n && !err; i++) {
		const struct sym *s = &syms->v[i];

		while (depth && stack[depth - 1]->addr + stack[depth - 1]->size <= s->addr) {
			const struct sym *top = stack[--depth];
			uint64_t end = top->addr + top->size;

			if ((err = emit(&sw, top, pos, end)))
				goto out;
			if (end > pos)
				pos = end;
		}
		if (depth && (err = emit(&sw, stack[depth - 1], pos, s->addr)))
			goto out;
		stack[depth++] = s;
		pos = s->addr;
	}
	while (depth && !err) {
		const struct sym *top = stack[--depth];
		uint64_t end = top->addr + top->size;

		err = emit(&sw, top, pos, end);
		if (end > pos)
			pos = end;
	}
out:
	free(stack);
	free(sw.lines);
	x->st.functions += sw.added;
	return err;
}
