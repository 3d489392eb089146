/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the index back (index.h, doc/index.md). An index may come from
 * another job, another machine: every line is checked before it is used
 * (JSON whole, the version, known fields of the right types, numbers in
 * range, build IDs valid, input paths without '..', each record inside its
 * input's), and the first fault is one message naming the line.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index.h"
#include "json.h"
#include "names.h"

/* A line longer than this is no index of ours (a path is at most 4096 bytes). */
#define MAX_LINE (1u << 20)
#define MAX_FIELDS 16
/* Sizes and mtimes past this are nonsense (8 EiB), and would overflow sums. */
#define MAX_SIZE (1ull << 62)

void index_init(struct index *ix)
{
	memset(ix, 0, sizeof(*ix));
	state_init(&ix->st);
}

void index_release(struct index *ix)
{
	problems_release(&ix->errors);
	free(ix->h.options);
	state_release(&ix->st);
	memset(ix, 0, sizeof(*ix));
}

/* Every field an index line may have (doc/index.md), each read once per line. */
enum field {
	F_LIDIA_INDEX,
	F_FALLBACK_KEY,
	F_INPUTS,
	F_INPUTS_SHA256,
	F_OPTIONS,
	F_SLICE,
	F_INPUT,
	F_SIZE,
	F_MTIME_NS,
	F_TYPE,
	F_SHA256,
	F_MEMBERS,
	F_NAME,
	F_POSITION,
	F_BUILD_ID,
	F_KIND,
	F_SYMTAB,
	F_DWARF,
	F_GO,
	F_GIVES,
	F_GO_BUILD_ID,
	F_SKIPPED,
	F_ERROR,
	F_AT,
	F_COUNT
};

static const struct {
	const char *key;
	enum json_type type;
} fields[F_COUNT] = {
	[F_LIDIA_INDEX] = { "lidia_index", JSON_NUMBER },
	[F_FALLBACK_KEY] = { "fallback_key", JSON_STRING },
	[F_INPUTS] = { "inputs", JSON_NUMBER },
	[F_INPUTS_SHA256] = { "inputs_sha256", JSON_STRING },
	[F_OPTIONS] = { "options", JSON_STRING },
	[F_SLICE] = { "slice", JSON_STRING },
	[F_INPUT] = { "input", JSON_STRING },
	[F_SIZE] = { "size", JSON_NUMBER },
	[F_MTIME_NS] = { "mtime_ns", JSON_NUMBER },
	[F_TYPE] = { "type", JSON_STRING },
	[F_SHA256] = { "sha256", JSON_STRING },
	[F_MEMBERS] = { "members", JSON_ARRAY },
	[F_NAME] = { "name", JSON_STRING },
	[F_POSITION] = { "position", JSON_STRING },
	[F_BUILD_ID] = { "build_id", JSON_STRING },
	[F_KIND] = { "kind", JSON_STRING },
	[F_SYMTAB] = { "symtab", JSON_BOOL },
	[F_DWARF] = { "dwarf", JSON_BOOL },
	[F_GO] = { "go", JSON_BOOL },
	[F_GIVES] = { "gives", JSON_ARRAY },
	[F_GO_BUILD_ID] = { "go_build_id", JSON_STRING },
	[F_SKIPPED] = { "skipped", JSON_STRING },
	[F_ERROR] = { "error", JSON_STRING },
	[F_AT] = { "at", JSON_STRING },
};

#define BIT(f) (1u << (f))

/* The fields each kind of record may have. */
#define HEADER_FIELDS                                                                              \
	(BIT(F_LIDIA_INDEX) | BIT(F_FALLBACK_KEY) | BIT(F_INPUTS) | BIT(F_INPUTS_SHA256) |         \
	 BIT(F_OPTIONS) | BIT(F_SLICE))
#define INPUT_FIELDS (BIT(F_INPUT) | BIT(F_SIZE) | BIT(F_MTIME_NS) | BIT(F_TYPE) | BIT(F_SHA256))
#define PART_FIELDS                                                                                \
	(BIT(F_INPUT) | BIT(F_MEMBERS) | BIT(F_NAME) | BIT(F_POSITION) | BIT(F_SIZE) |             \
	 BIT(F_BUILD_ID) | BIT(F_KIND) | BIT(F_SYMTAB) | BIT(F_DWARF) | BIT(F_GO) | BIT(F_GIVES) | \
	 BIT(F_GO_BUILD_ID))
#define SKIP_FIELDS                                                                                \
	(BIT(F_INPUT) | BIT(F_MEMBERS) | BIT(F_SKIPPED) | BIT(F_BUILD_ID) | BIT(F_GO) | BIT(F_KIND))
#define ERROR_FIELDS (BIT(F_INPUT) | BIT(F_ERROR) | BIT(F_AT))

/* One line, read in one pass: each field it has, where it is of its type. */
struct line {
	unsigned has;			     /* a bit per field present, of any type */
	const struct json_field *v[F_COUNT]; /* NULL: absent, or not of its type */
	const char *unknown;		     /* the first field no record has */
};

/* The reader's place: the line, and the input whose records follow. */
struct reading {
	struct index *ix;
	struct json_field f[MAX_FIELDS];
	size_t nf;
	struct line l;
	ssize_t input; /* -1: none yet */
	char *err;
	size_t err_size;
	const char *path;
	unsigned long line;
};

static int fail(struct reading *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct reading *r, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, r->err_size, "%s:%lu: ", r->path, r->line);

	if (n >= 0 && (size_t)n < r->err_size) {
		va_start(ap, fmt);
		vsnprintf(r->err + n, r->err_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/*
 * The line's fields into r->l, in one pass (json_parse_flat refused a key
 * given twice): one unknown is noted, and refused by only() once the line is
 * known for an index line at all.
 */
static void take_fields(struct reading *r)
{
	memset(&r->l, 0, sizeof(r->l));
	for (size_t i = 0; i < r->nf; i++) {
		const struct json_field *jf = &r->f[i];
		unsigned k = 0;

		while (k < F_COUNT && strcmp(fields[k].key, jf->key))
			k++;
		if (k == F_COUNT) {
			if (!r->l.unknown)
				r->l.unknown = jf->key;
			continue;
		}
		r->l.has |= BIT(k);
		if (jf->type == fields[k].type)
			r->l.v[k] = jf;
	}
}

/* Every field of the line is one a record of this kind has. */
static int only(struct reading *r, unsigned allowed)
{
	unsigned extra = r->l.has & ~allowed;

	if (r->l.unknown)
		return fail(r, "unknown field '%.40s'", r->l.unknown);
	for (unsigned k = 0; k < F_COUNT; k++)
		if (extra & BIT(k))
			return fail(r, "unknown field '%s'", fields[k].key);
	return 0;
}

static const char *get_str(const struct reading *r, enum field k)
{
	return r->l.v[k] ? r->l.v[k]->str : NULL;
}

static bool get_bool(const struct reading *r, enum field k)
{
	return r->l.v[k] && r->l.v[k]->on;
}

/* A number field from lo to MAX_SIZE (lo: 0, or INT64_MIN for an mtime); -1 when bad. */
static int get_num(struct reading *r, enum field k, int64_t lo, int64_t *out)
{
	const struct json_field *f = r->l.v[k];

	if (!f)
		return fail(r, "'%s' missing or not a number", fields[k].key);
	if (f->num < lo || f->num > (int64_t)MAX_SIZE)
		return fail(r, "'%s' out of range", fields[k].key);
	*out = f->num;
	return 0;
}

/* An input path: not empty, no '..' element (an index names files, never climbs). */
static bool path_ok(const char *p)
{
	size_t n = strlen(p);

	if (!n || n >= PATH_MAX)
		return false;
	for (const char *s = p; (s = strstr(s, "..")); s += 2)
		if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
			return false;
	return true;
}

static bool is_sha256(const char *s)
{
	size_t n = 0;

	while ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f'))
		n++;
	return n == 64 && !s[n];
}

static int header(struct reading *r)
{
	const struct json_field *v = r->l.v[F_LIDIA_INDEX];
	const char *fb = get_str(r, F_FALLBACK_KEY), *slice = get_str(r, F_SLICE);
	const char *sha = get_str(r, F_INPUTS_SHA256), *opts = get_str(r, F_OPTIONS);
	struct index_header *h = &r->ix->h;
	int64_t ninputs = 0;
	int scheme;
	char c;

	if (!v)
		return fail(r, "not a lidiagen index (no \"lidia_index\" header)");
	if (v->num != INDEX_VERSION)
		return fail(r, "index version %lld, this lidiagen reads version %d: index again",
			    (long long)v->num, INDEX_VERSION);
	if (only(r, HEADER_FIELDS))
		return -1;
	if (!fb || (scheme = fallback_parse(fb)) < 0)
		return fail(r, "'fallback_key' missing or not none, go or sha256");
	h->fallback = (enum fallback_key)scheme;
	if (slice && (sscanf(slice, "%u/%u%c", &h->slice_k, &h->slice_n, &c) != 2 || !h->slice_k ||
		      h->slice_k > h->slice_n || h->slice_n > 100000))
		return fail(r, "'slice' is not K/N with 1 <= K <= N");
	if (get_num(r, F_INPUTS, 1, &ninputs))
		return -1;
	if (!sha || !is_sha256(sha))
		return fail(r, "'inputs_sha256' missing or not 64 hex digits");
	if (!opts)
		return fail(r, "'options' missing or not a string");
	h->ninputs = (size_t)ninputs;
	memcpy(h->inputs_sha256, sha, sizeof(h->inputs_sha256));
	free(h->options);
	if (!(h->options = strdup(opts)))
		return fail(r, "out of memory");
	return 0;
}

static int read_input(struct reading *r)
{
	const char *path = get_str(r, F_INPUT), *type = get_str(r, F_TYPE);
	const char *sha = get_str(r, F_SHA256);
	int64_t size = 0, mtime = 0;
	ssize_t idx;
	int kind;

	if (only(r, INPUT_FIELDS) || get_num(r, F_SIZE, 0, &size) ||
	    get_num(r, F_MTIME_NS, INT64_MIN, &mtime))
		return -1;
	if (!type || (kind = input_kind_parse(type)) < 0)
		return fail(r, "'type' missing or not unread, elf, archive or other");
	if (sha && !is_sha256(sha))
		return fail(r, "'sha256' is not 64 hex digits");
	idx = state_add_input(&r->ix->st, path, (uint64_t)size, mtime);
	if (idx == STATE_DUPLICATE)
		return fail(r, "input '%.200s' twice", path);
	if (idx < 0)
		return fail(r, "out of memory");
	r->ix->st.inputs[idx].kind = (enum input_kind)kind;
	snprintf(r->ix->st.inputs[idx].sha256, 65, "%s", sha ? sha : "");
	r->input = idx;
	return 0;
}

/* The image's path, "INPUT!M1!M2", from the record's input and members; -1 when bad. */
static int image_path(struct reading *r, char *out, size_t size)
{
	const struct json_field *m = r->l.v[F_MEMBERS];
	const char *input = get_str(r, F_INPUT);
	size_t n;

	if (!m)
		return fail(r, "'members' missing or not an array of strings");
	if (r->input < 0 || strcmp(input, r->ix->st.inputs[r->input].path))
		return fail(r, "a record of '%.200s' not after its input's record", input);
	n = (size_t)snprintf(out, size, "%s", input);
	for (size_t i = 0; i < m->nitems && n < size; i++)
		n += (size_t)snprintf(out + n, size - n, "!%s", m->items[i]);
	if (n >= size)
		return fail(r, "a member path longer than %zu bytes", size - 1);
	return 0;
}

/* A part's key, position and kind checked; its kind into *kind. */
static int check_part(struct reading *r, enum part_kind *kind)
{
	const char *key = get_str(r, F_BUILD_ID), *k = get_str(r, F_KIND);
	const char *at = get_str(r, F_POSITION), *gobid = get_str(r, F_GO_BUILD_ID);
	bool member = r->l.has & BIT(F_NAME);
	int parsed;

	if (strlen(key) >= LIDIA_KEY_MAX || !lidia_store_build_id_valid(key))
		return fail(r, "'build_id' is not a valid build ID");
	/* A member (it has a name) is found again by its position alone; a file has neither. */
	if (member && (!at || !state_position_valid(at)))
		return fail(r, "'position' of a member missing or not numbers joined with '.'");
	if (!member && (r->l.has & BIT(F_POSITION)))
		return fail(r, "'position' given for an image that is no member");
	if (!k || (parsed = part_kind_parse(k)) < 0)
		return fail(r, "'kind' missing or not binary, debug, dwz or go");
	if (gobid && strlen(gobid) >= sizeof(((struct lidia_elf_info *)0)->go_build_id))
		return fail(r, "'go_build_id' too long");
	*kind = (enum part_kind)parsed;
	return 0;
}

static int read_part(struct reading *r)
{
	const char *gobid = get_str(r, F_GO_BUILD_ID);
	struct lidia_elf_info info = { 0 };
	struct state *s = &r->ix->st;
	enum part_kind kind = PART_BINARY;
	char path[4096];
	int64_t size = 0;

	if (only(r, PART_FIELDS) || image_path(r, path, sizeof(path)) ||
	    get_num(r, F_SIZE, 0, &size) || check_part(r, &kind))
		return -1;
	info.debug_file = kind == PART_DEBUG;
	info.has_symtab = get_bool(r, F_SYMTAB);
	info.has_dwarf = get_bool(r, F_DWARF);
	info.has_go = get_bool(r, F_GO);
	snprintf(info.go_build_id, sizeof(info.go_build_id), "%s", gobid ? gobid : "");
	if (state_add_part(s, (size_t)r->input, path, get_str(r, F_NAME), get_str(r, F_POSITION),
			   get_str(r, F_BUILD_ID), &info, (uint64_t)size))
		return fail(r, "out of memory");
	s->parts[s->nparts - 1].dwz = kind == PART_DWZ;
	s->inputs[r->input].nparts++; /* an input's records follow its own */
	return 0;
}

static int read_skip(struct reading *r)
{
	const char *key = get_str(r, F_BUILD_ID), *kind = get_str(r, F_KIND);
	struct state *s = &r->ix->st;
	char path[4096];
	int reason;

	if (only(r, SKIP_FIELDS) || image_path(r, path, sizeof(path)))
		return -1;
	if ((reason = skip_reason_parse(get_str(r, F_SKIPPED))) < 0)
		return fail(r, "'skipped' is no reason lidiagen gives");
	if (key && strlen(key) >= LIDIA_KEY_MAX)
		return fail(r, "'build_id' too long");
	if ((r->l.has & BIT(F_KIND)) && (!kind || part_kind_parse(kind) != PART_DWZ))
		return fail(r, "'kind' of an image passed over is dwz or none");
	if (state_add_skip(s, (size_t)r->input, path, (enum skip_reason)reason, key ? key : "",
			   get_bool(r, F_GO)))
		return fail(r, "out of memory");
	s->skips[s->nskips - 1].dwz = kind != NULL;
	s->inputs[r->input].nskips++;
	return 0;
}

static int read_error(struct reading *r)
{
	const char *input = get_str(r, F_INPUT), *at = get_str(r, F_AT);

	if (only(r, ERROR_FIELDS))
		return -1;
	if (r->input < 0 || strcmp(input, r->ix->st.inputs[r->input].path))
		r->input = -1; /* a problem that names no input (a missing path) */
	if (problems_add(&r->ix->errors, at ? at : input, get_str(r, F_ERROR)))
		return fail(r, "out of memory");
	return 0;
}

/* One record after the header: which kind its fields say, then read as that kind. */
static int record(struct reading *r)
{
	const char *input = get_str(r, F_INPUT);

	if (!input || !path_ok(input))
		return fail(r, "'input' missing, empty, or a path with a '..' element");
	if (r->l.v[F_ERROR])
		return read_error(r);
	if (r->l.v[F_SKIPPED])
		return read_skip(r);
	if (r->l.v[F_BUILD_ID])
		return read_part(r);
	return read_input(r);
}

/* The next line into buf (without its newline); 1 at the end, -1 when too long or unreadable. */
static int next_line(FILE *f, char *buf, size_t size, size_t *len)
{
	int c;

	*len = 0;
	while ((c = getc_unlocked(f)) != EOF && c != '\n') {
		if (*len + 1 >= size)
			return -1;
		buf[(*len)++] = (char)c;
	}
	buf[*len] = '\0';
	if (ferror(f))
		return -1;
	return c == EOF && !*len ? 1 : 0;
}

static int read_lines(struct reading *r, FILE *f, char *buf)
{
	const char *items[4 * JSON_MAX_ITEMS], *what;
	size_t len;
	int end;

	while (!(end = next_line(f, buf, MAX_LINE, &len))) {
		r->line++;
		if (memchr(buf, '\0', len))
			return fail(r, "a NUL byte");
		if ((what = json_parse_flat(buf, r->f, MAX_FIELDS, &r->nf, items,
					    4 * JSON_MAX_ITEMS)))
			return fail(r, "%s", what);
		take_fields(r);
		if (r->line == 1 ? header(r) : record(r))
			return -1;
	}
	if (end < 0) {
		r->line++;
		return fail(r, ferror(f) ? "cannot be read" : "a line too long");
	}
	if (!r->line)
		return fail(r, "empty: not a lidiagen index");
	return 0;
}

int index_load_stream(struct index *ix, FILE *f, const char *name, char *err, size_t err_size)
{
	struct reading r = {
		.ix = ix, .input = -1, .err = err, .err_size = err_size, .path = name
	};
	char *buf = malloc(MAX_LINE);
	int ret;

	if (!buf) {
		snprintf(err, err_size, "%s: out of memory", name);
		return -1;
	}
	ret = read_lines(&r, f, buf);
	free(buf);
	return ret;
}

int index_load(struct index *ix, const char *path, char *err, size_t err_size)
{
	bool std = !strcmp(path, "-");
	FILE *f = std ? stdin : fopen(path, "r");
	int ret;

	if (!f) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -1;
	}
	ret = index_load_stream(ix, f, path, err, err_size);
	if (!std)
		fclose(f);
	return ret;
}
