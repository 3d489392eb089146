/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extract: a unit's DWARF line program (versions 2 to 5), decoded here
 * rather than through libdw's dwarf_getsrclines(), for two reasons:
 *  - libdw keeps every unit's decoded lines until the file is closed (150 MB
 *    for a large C++ library); these rows are the caller's, reused per unit;
 *  - file names are joined as llvm-symbolizer joins them (the compilation
 *    directory, the include directory by its index, the name), which needs
 *    the directory index libdw does not give.
 * Rows come out in address order, sequence by sequence, each sequence ended
 * by a row with no file: exactly the lookup semantics of the line program.
 * Every read is bounds-checked; a malformed program is an error for its
 * unit, and the caller falls back to libdw.
 */
#include <dwarf.h>

#include "line_table.h"
#include "internal.h"

struct cursor {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t u(struct cursor *c, unsigned n)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	/* Little-endian only: the caller checks the image's byte order. */
	for (unsigned i = n; i-- > 0;)
		v = v << 8 | c->p[i];
	c->p += n;
	return v;
}

static uint64_t uleb(struct cursor *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0; c->p < c->end; shift += 7) {
		unsigned char b = *c->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

static int64_t sleb(struct cursor *c)
{
	int64_t v = 0;
	unsigned shift = 0;
	unsigned char b = 0x80;

	while (c->p < c->end && (b & 0x80)) {
		b = *c->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
	}
	if (b & 0x80) {
		c->bad = true;
		return 0;
	}
	if (shift < 64 && (b & 0x40)) /* sign-extend, in unsigned arithmetic */
		v = (int64_t)((uint64_t)v | ~(((uint64_t)1 << shift) - 1));
	return v;
}

static const char *cstr(struct cursor *c)
{
	const unsigned char *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
	const char *s = (const char *)c->p;

	if (!nul) {
		c->bad = true;
		c->p = c->end;
		return NULL;
	}
	c->p = nul + 1;
	return s;
}

static const char *str_at(const struct dwarf_sections *s, bool line_str, uint64_t off)
{
	const unsigned char *base = line_str ? s->line_str : s->str;
	size_t size = line_str ? s->line_str_size : s->str_size;

	if (!base || off >= size || !memchr(base + off, 0, size - off))
		return NULL;
	return (const char *)base + off;
}

/* A form's value in a v5 entry: a string, or a number; anything else is skipped. */
static bool read_form(struct cursor *c, const struct dwarf_sections *s, unsigned form,
		      unsigned offset_size, const char **str, uint64_t *num)
{
	*str = NULL;
	*num = 0;
	switch (form) {
	case DW_FORM_string:
		*str = cstr(c);
		break;
	case DW_FORM_line_strp:
		*str = str_at(s, true, u(c, offset_size));
		break;
	case DW_FORM_strp:
		*str = str_at(s, false, u(c, offset_size));
		break;
	case DW_FORM_udata:
		*num = uleb(c);
		break;
	case DW_FORM_data1:
		*num = u(c, 1);
		break;
	case DW_FORM_data2:
		*num = u(c, 2);
		break;
	case DW_FORM_data4:
		*num = u(c, 4);
		break;
	case DW_FORM_data8:
		*num = u(c, 8);
		break;
	case DW_FORM_data16:
		u(c, 8);
		u(c, 8);
		break;
	case DW_FORM_block: {
		uint64_t n = uleb(c);

		if (n > (uint64_t)(c->end - c->p))
			c->bad = true;
		else
			c->p += n;
		break;
	}
	default:
		return false; /* a form we cannot size: the table is unreadable */
	}
	return !c->bad;
}

/* A path joined as llvm's sys::path::append does: empty parts are skipped. */
static const char *join(struct name_block **names, const char *a, const char *b, const char *c)
{
	char buf[4096];
	size_t n = 0;
	const char *parts[3] = { a, b, c };

	for (int i = 0; i < 3; i++) {
		size_t len;

		if (!parts[i] || !*parts[i])
			continue;
		len = strlen(parts[i]);
		if (n && buf[n - 1] != '/' && n + 1 < sizeof(buf))
			buf[n++] = '/';
		if (n + len >= sizeof(buf))
			return NULL;
		memcpy(buf + n, parts[i], len);
		n += len;
	}
	buf[n] = '\0';
	return name_blocks_str(names, buf, NULL);
}

struct dir_vec {
	const char **v;
	size_t n, cap;
};

static int push_str(const char ***v, size_t *n, size_t *cap, const char *s)
{
	void *p = *v;
	int err = lidia_grow(&p, cap, *n + 1, sizeof(**v));

	if (err)
		return err;
	*v = p;
	(*v)[(*n)++] = s;
	return 0;
}

/* File f's name as llvm-symbolizer gives it (FileLineInfoKind::AbsoluteFilePath). */
static const char *file_path(struct line_table *lt, const struct dir_vec *dirs, unsigned version,
			     const char *comp_dir, const char *name, uint64_t dir)
{
	const char *inc = NULL;

	if (!name)
		return NULL;
	if (name[0] == '/')
		return name;
	if (version >= 5) {
		if (dir < dirs->n)
			inc = dirs->v[dir];
	} else if (dir > 0 && dir <= dirs->n) {
		inc = dirs->v[dir - 1];
	}
	/* The compilation directory, but for DWARF 5's directory 0 (which is it). */
	if ((version < 5 || dir != 0) && !(inc && inc[0] == '/'))
		return join(&lt->names, comp_dir, inc, name);
	return join(&lt->names, NULL, inc, name);
}

void line_table_release(struct line_table *lt)
{
	free(lt->rows);
	free(lt->files);
	name_blocks_reset(&lt->names, true);
	memset(lt, 0, sizeof(*lt));
}

static int add_row(struct line_table *lt, uint64_t addr, const char *file, int32_t line)
{
	void *p = lt->rows;
	int err = lidia_grow(&p, &lt->cap_rows, lt->nrows + 1, sizeof(*lt->rows));

	if (err)
		return err;
	lt->rows = p;
	lt->rows[lt->nrows++] = (struct line_table_row){ addr, file, line };
	return 0;
}

/* Sequences sorted by their first address (they do not overlap). */
struct seq {
	size_t first, n;
};

static int cmp_seq_addr(const void *pa, const void *pb, void *ctx)
{
	const struct seq *a = pa, *b = pb;
	const struct line_table_row *rows = ctx;
	uint64_t x = rows[a->first].addr, y = rows[b->first].addr;

	if (x != y)
		return x < y ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

static int order_sequences(struct line_table *lt, struct seq *seqs, size_t nseqs)
{
	struct line_table_row *out;
	size_t n = 0;

	if (nseqs > 1)
		qsort_r(seqs, nseqs, sizeof(*seqs), cmp_seq_addr, lt->rows);
	out = malloc((lt->nrows + 1) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < nseqs; i++) {
		const struct line_table_row *first = lt->rows + seqs[i].first;
		uint64_t start = first->addr;

		/*
		 * Code the linker discarded (COMDAT copies, --gc-sections) keeps its
		 * sequence at address 0 or a tombstone; and where two sequences
		 * overlap, the first one is kept.
		 */
		if (!seqs[i].n || start == 0 || start >= (uint64_t)-2 ||
		    (n && start < out[n - 1].addr))
			continue;
		memcpy(out + n, first, seqs[i].n * sizeof(*out));
		n += seqs[i].n;
	}
	free(lt->rows);
	lt->rows = out;
	lt->nrows = n;
	lt->cap_rows = lt->nrows + 1;
	/*
	 * Addresses going back within a sequence, or sequences that overlap:
	 * not a line program lookups can use as is (libdw sorts such ones).
	 */
	for (size_t i = 1; i < n; i++)
		if (out[i].addr < out[i - 1].addr)
			return LIDIA_E_DWARF_LINES;
	return 0;
}

int line_table_decode(struct line_table *lt, const struct dwarf_sections *s, uint64_t offset,
		      const char *comp_dir, unsigned address_size)
{
	struct cursor c = { 0 };
	struct dir_vec dirs = { 0 };
	struct seq *seqs = NULL;
	size_t nseqs = 0, cap_seqs = 0, seq_first = 0;
	uint64_t unit_length;
	unsigned version, offset_size = 4, min_inst, max_ops, opcode_base;
	int default_is_stmt, line_base, line_range;
	const unsigned char *std_lengths, *program, *end;
	int err = LIDIA_E_DWARF_LINES;

	lt->nrows = 0;
	lt->nfiles = 0;
	name_blocks_reset(&lt->names, false);
	if (!s->line || offset >= s->line_size || (address_size != 4 && address_size != 8))
		return LIDIA_E_DWARF_LINES;
	c.p = s->line + offset;
	c.end = s->line + s->line_size;
	unit_length = u(&c, 4);
	if (unit_length == 0xffffffff) {
		unit_length = u(&c, 8);
		offset_size = 8;
	}
	if (c.bad || unit_length > (uint64_t)(c.end - c.p))
		return LIDIA_E_DWARF_LINES;
	end = c.p + unit_length;
	c.end = end;
	version = (unsigned)u(&c, 2);
	if (version < 2 || version > 5)
		return LIDIA_E_DWARF_LINES;
	if (version >= 5) {
		if (u(&c, 1) != address_size)
			return LIDIA_E_DWARF_LINES;
		u(&c, 1); /* segment selector size */
	}
	{
		uint64_t header_length = u(&c, offset_size);

		if (c.bad || header_length > (uint64_t)(c.end - c.p))
			return LIDIA_E_DWARF_LINES;
		program = c.p + header_length;
	}
	min_inst = (unsigned)u(&c, 1);
	max_ops = version >= 4 ? (unsigned)u(&c, 1) : 1;
	default_is_stmt = (int)u(&c, 1);
	line_base = (int8_t)u(&c, 1);
	line_range = (int)u(&c, 1);
	opcode_base = (unsigned)u(&c, 1);
	(void)default_is_stmt;
	(void)max_ops;
	if (c.bad || line_range == 0 || opcode_base == 0 ||
	    (size_t)(c.end - c.p) < opcode_base - 1)
		return LIDIA_E_DWARF_LINES;
	std_lengths = c.p;
	c.p += opcode_base - 1;

	/* Directories and files. */
	if (version >= 5) {
		for (int table = 0; table < 2; table++) {
			unsigned nformats = (unsigned)u(&c, 1);
			uint64_t kinds[16], forms[16], count;

			if (nformats > 16)
				goto out;
			for (unsigned i = 0; i < nformats; i++) {
				kinds[i] = uleb(&c);
				forms[i] = uleb(&c);
			}
			count = uleb(&c);
			if (c.bad || count > (uint64_t)(c.end - c.p))
				goto out;
			for (uint64_t k = 0; k < count; k++) {
				const char *name = NULL;
				uint64_t dir = 0;

				for (unsigned i = 0; i < nformats; i++) {
					const char *sv;
					uint64_t nv;

					if (!read_form(&c, s, (unsigned)forms[i], offset_size, &sv, &nv))
						goto out;
					if (kinds[i] == DW_LNCT_path)
						name = sv;
					else if (kinds[i] == DW_LNCT_directory_index)
						dir = nv;
				}
				if (table == 0 ? push_str(&dirs.v, &dirs.n, &dirs.cap, name ? name : "")
					       : push_str(&lt->files, &lt->nfiles, &lt->cap_files,
							  file_path(lt, &dirs, version, comp_dir, name, dir)))
					goto out;
			}
		}
	} else {
		const char *d;

		while ((d = cstr(&c)) && *d)
			if (push_str(&dirs.v, &dirs.n, &dirs.cap, d))
				goto out;
		/* DWARF 2-4 files count from 1: index 0 is "none". */
		if (push_str(&lt->files, &lt->nfiles, &lt->cap_files, NULL))
			goto out;
		for (;;) {
			const char *name = cstr(&c);
			uint64_t dir;

			if (!name || !*name)
				break;
			dir = uleb(&c);
			uleb(&c); /* mtime */
			uleb(&c); /* length */
			if (push_str(&lt->files, &lt->nfiles, &lt->cap_files,
				     file_path(lt, &dirs, version, comp_dir, name, dir)))
				goto out;
		}
	}
	if (c.bad)
		goto out;

	/* The program. */
	c.p = program;
	{
		uint64_t addr = 0, file = 1, line = 1;

		while (c.p < c.end && !c.bad) {
			unsigned op = (unsigned)u(&c, 1);
			bool emit = false, end_seq = false;

			if (op >= opcode_base) {
				unsigned adj = op - opcode_base;

				addr += (uint64_t)(adj / (unsigned)line_range) * min_inst;
				line += (int64_t)line_base + (int64_t)(adj % (unsigned)line_range);
				emit = true;
			} else if (op == 0) {
				uint64_t len = uleb(&c);
				const unsigned char *next;
				unsigned sub;

				if (c.bad || len == 0 || len > (uint64_t)(c.end - c.p))
					goto out;
				next = c.p + len;
				sub = (unsigned)u(&c, 1);
				if (sub == DW_LNE_end_sequence) {
					emit = end_seq = true;
				} else if (sub == DW_LNE_set_address) {
					addr = u(&c, len - 1 >= 8 ? 8 : (unsigned)(len - 1));
				} else if (sub == DW_LNE_define_file) {
					const char *name = cstr(&c);
					uint64_t dir = uleb(&c);

					if (push_str(&lt->files, &lt->nfiles, &lt->cap_files,
						     file_path(lt, &dirs, version, comp_dir, name, dir)))
						goto out;
				}
				c.p = next; /* discriminators and vendor extensions: skipped */
			} else {
				switch (op) {
				case DW_LNS_copy:
					emit = true;
					break;
				case DW_LNS_advance_pc:
					addr += uleb(&c) * min_inst;
					break;
				case DW_LNS_advance_line:
					line += (uint64_t)sleb(&c);
					break;
				case DW_LNS_set_file:
					file = uleb(&c);
					break;
				case DW_LNS_const_add_pc:
					addr += (uint64_t)((255 - opcode_base) / (unsigned)line_range) * min_inst;
					break;
				case DW_LNS_fixed_advance_pc:
					addr += u(&c, 2);
					break;
				default:
					/* Other standard opcodes: skip their operands as the header says. */
					for (unsigned i = 0; i < std_lengths[op - 1]; i++)
						uleb(&c);
					break;
				}
			}
			if (!emit)
				continue;
			if (add_row(lt, addr,
				    end_seq ? NULL
					    : file < lt->nfiles && lt->files[file] ? lt->files[file] : "",
				    end_seq ? 0 : (int32_t)line))
				goto out;
			if (end_seq) {
				void *p = seqs;

				if (lidia_grow(&p, &cap_seqs, nseqs + 1, sizeof(*seqs)))
					goto out;
				seqs = p;
				seqs[nseqs++] = (struct seq){ seq_first, lt->nrows - seq_first };
				seq_first = lt->nrows;
				addr = 0;
				file = 1;
				line = 1;
			}
		}
	}
	if (c.bad)
		goto out;
	lt->nrows = seq_first; /* rows after the last end of sequence are not a sequence */
	err = order_sequences(lt, seqs, nseqs);
out:
	if (err == -ENOMEM)
		err = LIDIA_E_DWARF_LINES;
	free(dirs.v);
	free(seqs);
	if (err)
		lt->nrows = 0;
	return err;
}
