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

#include "dwarf_cursor.h"
#include "line_overlap.h"
#include "line_table.h"
#include "internal.h"

/* A form's value in a v5 entry: a string, or a number; anything else is skipped. */
static bool read_form(struct cursor *c, const struct dwarf_sections *s, unsigned form,
		      unsigned offset_size, const char **str, uint64_t *num)
{
	*str = NULL;
	*num = 0;
	switch (form) {
	case DW_FORM_string:
		*str = cursor_cstr(c);
		break;
	case DW_FORM_line_strp:
		*str = dwarf_sections_str(s, true, cursor_u(c, offset_size));
		break;
	case DW_FORM_strp:
		*str = dwarf_sections_str(s, false, cursor_u(c, offset_size));
		break;
	case DW_FORM_udata:
		*num = cursor_uleb(c);
		break;
	case DW_FORM_data1:
		*num = cursor_u(c, 1);
		break;
	case DW_FORM_data2:
		*num = cursor_u(c, 2);
		break;
	case DW_FORM_data4:
		*num = cursor_u(c, 4);
		break;
	case DW_FORM_data8:
		*num = cursor_u(c, 8);
		break;
	case DW_FORM_data16:
		cursor_u(c, 8);
		cursor_u(c, 8);
		break;
	case DW_FORM_block: {
		uint64_t n = cursor_uleb(c);

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
	int err = LIDIA_GROW(*v, *n + 1, *cap);

	if (err)
		return err;
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

void line_table_reset(struct line_table *lt)
{
	lt->nrows = 0;
	lt->nfiles = 0;
	name_blocks_reset(&lt->names, false);
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
	int err = LIDIA_GROW(lt->rows, lt->nrows + 1, lt->cap_rows);

	if (err)
		return err;
	lt->rows[lt->nrows++] = (struct line_row){ addr, file, line };
	return 0;
}

static int cmp_seq_addr(const void *pa, const void *pb, void *ctx)
{
	const struct line_seq *a = pa, *b = pb;
	const struct line_row *rows = ctx;
	uint64_t x = rows[a->first].addr, y = rows[b->first].addr;

	if (x != y)
		return x < y ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/*
 * Code the linker discarded (COMDAT copies, --gc-sections) keeps its
 * sequence at address 0 or a tombstone: left out, as an empty one.
 */
static size_t live_sequences(const struct line_row *rows, struct line_seq *seqs, size_t nseqs)
{
	size_t k = 0;

	for (size_t i = 0; i < nseqs; i++) {
		uint64_t start = seqs[i].n ? rows[seqs[i].first].addr : 0;

		if (start != 0 && start < (uint64_t)-2)
			seqs[k++] = seqs[i];
	}
	return k;
}

/*
 * seqs[i] and those after it that start before the end of one before them:
 * how many (line_overlap.c merges them row by row).
 */
static size_t overlapping(const struct line_row *rows, const struct line_seq *seqs, size_t i,
			  size_t nseqs)
{
	uint64_t end = rows[seqs[i].first + seqs[i].n - 1].addr;
	size_t j = i + 1;

	for (; j < nseqs && rows[seqs[j].first].addr < end; j++)
		if (rows[seqs[j].first + seqs[j].n - 1].addr > end)
			end = rows[seqs[j].first + seqs[j].n - 1].addr;
	return j - i;
}

/* The sequences at i..i+k, one or more that overlap, appended to out at *n. */
static int append_sequences(struct line_row *out, size_t *n, const struct line_row *rows,
			    const struct line_seq *seqs, size_t k)
{
	int err = k > 1 ? line_overlap_merge(out, n, rows, seqs, k) : 1;

	if (err == 1) { /* one, or addresses going back: the first is kept */
		memcpy(out + *n, rows + seqs[0].first, seqs[0].n * sizeof(*out));
		*n += seqs[0].n;
		err = 0;
	}
	return err;
}

/*
 * Whether the sequences, sorted by address, are also in the order they
 * were decoded, none overlapping the next: what order_sequences() would
 * copy out is then each one moved down over those left out, in place (a
 * new array for every program was 4% of libceph-common's page faults).
 */
static bool in_order(const struct line_row *rows, const struct line_seq *seqs, size_t nseqs)
{
	for (size_t i = 1; i < nseqs; i++)
		if (seqs[i].first < seqs[i - 1].first ||
		    rows[seqs[i].first].addr < rows[seqs[i - 1].first + seqs[i - 1].n - 1].addr)
			return false;
	return true;
}

static void compact(struct line_table *lt, const struct line_seq *seqs, size_t nseqs)
{
	size_t n = 0;

	for (size_t i = 0; i < nseqs; i++) {
		memmove(lt->rows + n, lt->rows + seqs[i].first, seqs[i].n * sizeof(*lt->rows));
		n += seqs[i].n;
	}
	lt->nrows = n;
}

/* The sorted sequences copied out in order, overlapping ones merged, into a new array. */
static int copy_in_order(struct line_table *lt, const struct line_seq *seqs, size_t nseqs)
{
	struct line_row *out = malloc((lt->nrows + 1) * sizeof(*out));
	size_t n = 0;
	int err = 0;

	if (!out)
		return -ENOMEM;
	for (size_t i = 0, k; i < nseqs && !err; i += k) {
		k = overlapping(lt->rows, seqs, i, nseqs);
		err = append_sequences(out, &n, lt->rows, seqs + i, k);
	}
	free(lt->rows);
	lt->rows = out;
	lt->nrows = n;
	lt->cap_rows = lt->nrows + 1;
	return err;
}

static int order_sequences(struct line_table *lt, struct line_seq *seqs, size_t nseqs)
{
	int err = 0;

	nseqs = live_sequences(lt->rows, seqs, nseqs);
	if (nseqs > 1)
		qsort_r(seqs, nseqs, sizeof(*seqs), cmp_seq_addr, lt->rows);
	if (in_order(lt->rows, seqs, nseqs))
		compact(lt, seqs, nseqs);
	else if ((err = copy_in_order(lt, seqs, nseqs)))
		return err;
	/*
	 * Addresses going back within a sequence: not a line program lookups
	 * can use as is (libdw sorts such ones).
	 */
	for (size_t i = 1; i < lt->nrows; i++)
		if (lt->rows[i].addr < lt->rows[i - 1].addr)
			return LIDIA_E_DWARF_LINES;
	return 0;
}

/* One unit's decoding: the header's fields the program needs, and what it makes. */
struct decoder {
	struct line_table *lt;
	const struct dwarf_sections *s;
	const char *comp_dir;
	struct cursor c;
	unsigned version, offset_size, min_inst, opcode_base;
	int line_base, line_range;
	const unsigned char *std_lengths, *program;
	struct dir_vec dirs;
	struct line_seq *seqs;
	size_t nseqs, cap_seqs, seq_first;
};

static int add_file(struct decoder *d, const char *name, uint64_t dir)
{
	struct line_table *lt = d->lt;

	return push_str(&lt->files, &lt->nfiles, &lt->cap_files,
			file_path(lt, &d->dirs, d->version, d->comp_dir, name, dir));
}

/*
 * The unit's header up to its directory and file tables (DWARF 5 section
 * 6.2.4), where it leaves the cursor; the cursor's end becomes the unit's.
 */
static bool read_prologue(struct decoder *d, uint64_t offset, unsigned address_size)
{
	const struct dwarf_sections *s = d->s;
	struct cursor *c = &d->c;
	uint64_t unit_length, header_length;

	if (!s->line || offset >= s->line_size || (address_size != 4 && address_size != 8))
		return false;
	c->p = s->line + offset;
	c->end = s->line + s->line_size;
	unit_length = cursor_u(c, 4);
	if (unit_length == 0xffffffff) {
		unit_length = cursor_u(c, 8);
		d->offset_size = 8;
	}
	if (c->bad || unit_length > (uint64_t)(c->end - c->p))
		return false;
	c->end = c->p + unit_length;
	d->version = (unsigned)cursor_u(c, 2);
	if (d->version < 2 || d->version > 5)
		return false;
	if (d->version >= 5) {
		if (cursor_u(c, 1) != address_size)
			return false;
		cursor_u(c, 1); /* segment selector size */
	}
	header_length = cursor_u(c, d->offset_size);
	if (c->bad || header_length > (uint64_t)(c->end - c->p))
		return false;
	d->program = c->p + header_length;
	d->min_inst = (unsigned)cursor_u(c, 1);
	if (d->version >= 4)
		cursor_u(c, 1); /* maximum operations per instruction: VLIW only */
	cursor_u(c, 1);		/* default_is_stmt */
	d->line_base = (int8_t)cursor_u(c, 1);
	d->line_range = (int)cursor_u(c, 1);
	d->opcode_base = (unsigned)cursor_u(c, 1);
	if (c->bad || d->line_range == 0 || d->opcode_base == 0 ||
	    (size_t)(c->end - c->p) < d->opcode_base - 1)
		return false;
	d->std_lengths = c->p;
	c->p += d->opcode_base - 1;
	return true;
}

/* DWARF 5: the directory table, then the file table, each entry as its formats say. */
static bool read_v5_tables(struct decoder *d)
{
	struct cursor *c = &d->c;

	for (int table = 0; table < 2; table++) {
		unsigned nformats = (unsigned)cursor_u(c, 1);
		uint64_t kinds[16], forms[16], count;

		if (nformats > 16)
			return false;
		for (unsigned i = 0; i < nformats; i++) {
			kinds[i] = cursor_uleb(c);
			forms[i] = cursor_uleb(c);
		}
		count = cursor_uleb(c);
		if (c->bad || count > (uint64_t)(c->end - c->p))
			return false;
		for (uint64_t k = 0; k < count; k++) {
			const char *name = NULL;
			uint64_t dir = 0;

			for (unsigned i = 0; i < nformats; i++) {
				const char *sv;
				uint64_t nv;

				if (!read_form(c, d->s, (unsigned)forms[i], d->offset_size, &sv,
					       &nv))
					return false;
				if (kinds[i] == DW_LNCT_path)
					name = sv;
				else if (kinds[i] == DW_LNCT_directory_index)
					dir = nv;
			}
			if (table == 0 ? push_str(&d->dirs.v, &d->dirs.n, &d->dirs.cap,
						  name ? name : "")
				       : add_file(d, name, dir))
				return false;
		}
	}
	return !c->bad;
}

/* DWARF 2-4: include_directories, then file_names, each ended by an empty entry. */
static bool read_v2_tables(struct decoder *d)
{
	struct cursor *c = &d->c;
	const char *dir_name;

	while ((dir_name = cursor_cstr(c)) && *dir_name)
		if (push_str(&d->dirs.v, &d->dirs.n, &d->dirs.cap, dir_name))
			return false;
	/* DWARF 2-4 files count from 1: index 0 is "none". */
	if (push_str(&d->lt->files, &d->lt->nfiles, &d->lt->cap_files, NULL))
		return false;
	for (;;) {
		const char *name = cursor_cstr(c);
		uint64_t dir;

		if (!name || !*name)
			return !c->bad;
		dir = cursor_uleb(c);
		cursor_uleb(c); /* mtime */
		cursor_uleb(c); /* length */
		if (add_file(d, name, dir))
			return false;
	}
}

/* The state machine's registers that rows are made of (DWARF 5 section 6.2.2). */
struct regs {
	uint64_t addr, file, line;
};

#define REGS_INIT ((struct regs){ .addr = 0, .file = 1, .line = 1 })

/* An extended opcode, after its 0; false when it is malformed. */
static bool extended_op(struct decoder *d, struct regs *r, bool *end_seq)
{
	struct cursor *c = &d->c;
	uint64_t len = cursor_uleb(c);
	const unsigned char *next;
	unsigned sub;

	if (c->bad || len == 0 || len > (uint64_t)(c->end - c->p))
		return false;
	next = c->p + len;
	sub = (unsigned)cursor_u(c, 1);
	if (sub == DW_LNE_end_sequence) {
		*end_seq = true;
	} else if (sub == DW_LNE_set_address) {
		r->addr = cursor_u(c, len - 1 >= 8 ? 8 : (unsigned)(len - 1));
	} else if (sub == DW_LNE_define_file) {
		const char *name = cursor_cstr(c);
		uint64_t dir = cursor_uleb(c);

		if (add_file(d, name, dir))
			return false;
	}
	c->p = next; /* discriminators and vendor extensions: skipped */
	return true;
}

/* A standard opcode (1 to opcode_base - 1); true when it makes a row. */
static bool standard_op(struct decoder *d, unsigned op, struct regs *r)
{
	struct cursor *c = &d->c;

	switch (op) {
	case DW_LNS_copy:
		return true;
	case DW_LNS_advance_pc:
		r->addr += cursor_uleb(c) * d->min_inst;
		break;
	case DW_LNS_advance_line:
		r->line += (uint64_t)cursor_sleb(c);
		break;
	case DW_LNS_set_file:
		r->file = cursor_uleb(c);
		break;
	case DW_LNS_const_add_pc:
		r->addr +=
			(uint64_t)((255 - d->opcode_base) / (unsigned)d->line_range) * d->min_inst;
		break;
	case DW_LNS_fixed_advance_pc:
		r->addr += cursor_u(c, 2);
		break;
	default:
		/* Other standard opcodes: skip their operands as the header says. */
		for (unsigned i = 0; i < d->std_lengths[op - 1]; i++)
			cursor_uleb(c);
		break;
	}
	return false;
}

/* Run the program: its rows, sequence by sequence; false when it is malformed. */
static bool run_program(struct decoder *d)
{
	struct line_table *lt = d->lt;
	struct cursor *c = &d->c;
	struct regs r = REGS_INIT;

	c->p = d->program;
	while (c->p < c->end && !c->bad) {
		unsigned op = (unsigned)cursor_u(c, 1);
		bool emit, end_seq = false;

		if (op >= d->opcode_base) { /* a special opcode */
			unsigned adj = op - d->opcode_base;

			r.addr += (uint64_t)(adj / (unsigned)d->line_range) * d->min_inst;
			r.line += (int64_t)d->line_base + (int64_t)(adj % (unsigned)d->line_range);
			emit = true;
		} else if (op == 0) {
			if (!extended_op(d, &r, &end_seq))
				return false;
			emit = end_seq;
		} else {
			emit = standard_op(d, op, &r);
		}
		if (!emit)
			continue;
		if (end_seq ? add_row(lt, r.addr, NULL, 0)
			    : add_row(lt, r.addr,
				      r.file < lt->nfiles && lt->files[r.file] ? lt->files[r.file]
									       : "",
				      (int32_t)r.line))
			return false;
		if (end_seq) {
			if (LIDIA_GROW(d->seqs, d->nseqs + 1, d->cap_seqs))
				return false;
			d->seqs[d->nseqs++] =
				(struct line_seq){ d->seq_first, lt->nrows - d->seq_first };
			d->seq_first = lt->nrows;
			r = REGS_INIT;
		}
	}
	return !c->bad;
}

int line_table_decode(struct line_table *lt, const struct dwarf_sections *s, uint64_t offset,
		      const char *comp_dir, unsigned address_size)
{
	struct decoder d = { .lt = lt, .s = s, .comp_dir = comp_dir, .offset_size = 4 };
	int err = LIDIA_E_DWARF_LINES;

	line_table_reset(lt);
	if (!read_prologue(&d, offset, address_size))
		return LIDIA_E_DWARF_LINES;
	if ((d.version >= 5 ? read_v5_tables(&d) : read_v2_tables(&d)) && run_program(&d)) {
		/* Rows after the last end of sequence are not a sequence. */
		lt->nrows = d.seq_first;
		err = order_sequences(lt, d.seqs, d.nseqs);
	}
	if (err == -ENOMEM)
		err = LIDIA_E_DWARF_LINES;
	free(d.dirs.v);
	free(d.seqs);
	if (err)
		lt->nrows = 0;
	return err;
}
