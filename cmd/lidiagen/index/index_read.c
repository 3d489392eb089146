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
	for (size_t i = 0; i < ix->nerrors; i++) {
		free(ix->errors[i].path);
		free(ix->errors[i].msg);
	}
	free(ix->errors);
	free(ix->h.options);
	state_release(&ix->st);
	memset(ix, 0, sizeof(*ix));
}

int index_add_error(struct index *ix, const char *path, const char *msg)
{
	struct index_error *e;

	if (ix->nerrors == ix->cap_errors) {
		size_t cap = ix->cap_errors ? 2 * ix->cap_errors : 16;
		void *p = realloc(ix->errors, cap * sizeof(*ix->errors));

		if (!p)
			return -ENOMEM;
		ix->errors = p;
		ix->cap_errors = cap;
	}
	e = &ix->errors[ix->nerrors];
	e->path = strdup(path);
	e->msg = strdup(msg);
	if (!e->path || !e->msg) {
		free(e->path);
		free(e->msg);
		return -ENOMEM;
	}
	ix->nerrors++;
	return 0;
}

/* The reader's place: the line's fields, and the input whose records follow. */
struct reading {
	struct index *ix;
	struct json_field f[MAX_FIELDS];
	size_t nf;
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

/* Every field of the line is one of names (NULL-terminated): a field unknown is refused. */
static int only(struct reading *r, const char *const *names)
{
	for (size_t i = 0; i < r->nf; i++) {
		size_t k = 0;

		while (names[k] && strcmp(names[k], r->f[i].key))
			k++;
		if (!names[k])
			return fail(r, "unknown field '%.40s'", r->f[i].key);
	}
	return 0;
}

static const char *get_str(struct reading *r, const char *key)
{
	const struct json_field *f = json_get(r->f, r->nf, key, JSON_STRING);

	return f ? f->str : NULL;
}

static bool get_bool(struct reading *r, const char *key)
{
	const struct json_field *f = json_get(r->f, r->nf, key, JSON_BOOL);

	return f && f->on;
}

/* A number field from lo to MAX_SIZE (lo: 0, or INT64_MIN for an mtime); -1 when bad. */
static int get_num(struct reading *r, const char *key, int64_t lo, int64_t *out)
{
	const struct json_field *f = json_get(r->f, r->nf, key, JSON_NUMBER);

	if (!f)
		return fail(r, "'%s' missing or not a number", key);
	if (f->num < lo || f->num > (int64_t)MAX_SIZE)
		return fail(r, "'%s' out of range", key);
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
	static const char *const names[] = {
		"lidia_index", "fallback_key", "inputs", "inputs_sha256", "options", "slice", NULL
	};
	const struct json_field *v = json_get(r->f, r->nf, "lidia_index", JSON_NUMBER);
	const char *fb = get_str(r, "fallback_key"), *slice = get_str(r, "slice");
	const char *sha = get_str(r, "inputs_sha256"), *opts = get_str(r, "options");
	struct index_header *h = &r->ix->h;
	int64_t ninputs;
	char c;

	if (!v)
		return fail(r, "not a lidiagen index (no \"lidia_index\" header)");
	if (v->num != INDEX_VERSION)
		return fail(r, "index version %lld, this lidiagen reads version %d: index again",
			    (long long)v->num, INDEX_VERSION);
	if (only(r, names))
		return -1;
	if (!fb || (strcmp(fb, "none") && strcmp(fb, "go") && strcmp(fb, "sha256")))
		return fail(r, "'fallback_key' missing or not none, go or sha256");
	h->fallback = !strcmp(fb, "go")	      ? FALLBACK_GO
		      : !strcmp(fb, "sha256") ? FALLBACK_SHA256
					      : FALLBACK_NONE;
	if (slice && (sscanf(slice, "%u/%u%c", &h->slice_k, &h->slice_n, &c) != 2 || !h->slice_k ||
		      h->slice_k > h->slice_n || h->slice_n > 100000))
		return fail(r, "'slice' is not K/N with 1 <= K <= N");
	if (get_num(r, "inputs", 1, &ninputs))
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
	static const char *const names[] = { "input", "size", "mtime_ns", "type", "sha256", NULL };
	static const char *const types[] = { "unread", "elf", "archive", "other" };
	const char *path = get_str(r, "input"), *type = get_str(r, "type");
	const char *sha = get_str(r, "sha256");
	int64_t size, mtime;
	ssize_t idx;
	int kind = 0;

	if (only(r, names) || get_num(r, "size", 0, &size) ||
	    get_num(r, "mtime_ns", INT64_MIN, &mtime))
		return -1;
	while (type && kind < 4 && strcmp(type, types[kind]))
		kind++;
	if (!type || kind == 4)
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
	const struct json_field *m = json_get(r->f, r->nf, "members", JSON_ARRAY);
	const char *input = get_str(r, "input");
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

static int read_part(struct reading *r)
{
	static const char *const names[] = { "input", "members",  "name",  "position",
					     "size",  "build_id", "kind",  "symtab",
					     "dwarf", "go",	  "gives", "go_build_id",
					     NULL };
	const char *key = get_str(r, "build_id"), *kind = get_str(r, "kind");
	const char *at = get_str(r, "position");
	const char *name = get_str(r, "name"), *gobid = get_str(r, "go_build_id");
	struct lidia_elf_info info = { 0 };
	struct state *s = &r->ix->st;
	char path[4096];
	int64_t size;

	if (only(r, names) || image_path(r, path, sizeof(path)) || get_num(r, "size", 0, &size))
		return -1;
	if (strlen(key) >= LIDIA_KEY_MAX || !lidia_store_build_id_valid(key))
		return fail(r, "'build_id' is not a valid build ID");
	/* A member (it has a name) is found again by its position alone; a file has neither. */
	if (name && (!at || !state_position_valid(at)))
		return fail(r, "'position' of a member missing or not numbers joined with '.'");
	if (!name && at)
		return fail(r, "'position' given for an image that is no member");
	if (!kind || (strcmp(kind, "binary") && strcmp(kind, "debug") && strcmp(kind, "dwz") &&
		      strcmp(kind, "go")))
		return fail(r, "'kind' missing or not binary, debug, dwz or go");
	if (gobid && strlen(gobid) >= sizeof(info.go_build_id))
		return fail(r, "'go_build_id' too long");
	info.debug_file = !strcmp(kind, "debug");
	info.has_symtab = get_bool(r, "symtab");
	info.has_dwarf = get_bool(r, "dwarf");
	info.has_go = get_bool(r, "go");
	snprintf(info.go_build_id, sizeof(info.go_build_id), "%s", gobid ? gobid : "");
	if (state_add_part(s, (size_t)r->input, path, name, at, key, &info, (uint64_t)size))
		return fail(r, "out of memory");
	s->parts[s->nparts - 1].dwz = !strcmp(kind, "dwz");
	s->inputs[r->input].nparts++; /* an input's records follow its own */
	return 0;
}

static int read_skip(struct reading *r)
{
	static const char *const names[] = { "input", "members", "skipped", "build_id",
					     "go",    "kind",	 NULL };
	static const char *const reasons[] = { [SKIP_NO_KEY] = "no build ID",
					       [SKIP_SHORT_KEY] = "too short",
					       [SKIP_NOT_LINKED] = "not linked",
					       [SKIP_NOT_PROGRAM] = "not a program",
					       [SKIP_DEGENERATE_KEY] = "degenerate build ID" };
	const char *why = get_str(r, "skipped"), *key = get_str(r, "build_id");
	const char *kind = get_str(r, "kind");
	struct state *s = &r->ix->st;
	char path[4096];
	int reason = SKIP_NO_KEY;

	if (only(r, names) || image_path(r, path, sizeof(path)))
		return -1;
	while (why && reason < SKIP_REASONS && strcmp(why, reasons[reason]))
		reason++;
	if (!why || reason == SKIP_REASONS)
		return fail(r, "'skipped' is no reason lidiagen gives");
	if (key && strlen(key) >= LIDIA_KEY_MAX)
		return fail(r, "'build_id' too long");
	if (kind && strcmp(kind, "dwz"))
		return fail(r, "'kind' of an image passed over is dwz or none");
	if (state_add_skip(s, (size_t)r->input, path, (enum skip_reason)reason, key ? key : "",
			   get_bool(r, "go")))
		return fail(r, "out of memory");
	s->skips[s->nskips - 1].dwz = kind != NULL;
	s->inputs[r->input].nskips++;
	return 0;
}

static int read_error(struct reading *r)
{
	static const char *const names[] = { "input", "error", "at", NULL };
	const char *input = get_str(r, "input"), *at = get_str(r, "at");

	if (only(r, names))
		return -1;
	if (r->input < 0 || strcmp(input, r->ix->st.inputs[r->input].path))
		r->input = -1; /* a problem that names no input (a missing path) */
	if (index_add_error(r->ix, at ? at : input, get_str(r, "error")))
		return fail(r, "out of memory");
	return 0;
}

/* One record after the header: which kind its fields say, then read as that kind. */
static int record(struct reading *r)
{
	const char *input = get_str(r, "input");

	if (!input || !path_ok(input))
		return fail(r, "'input' missing, empty, or a path with a '..' element");
	if (json_get(r->f, r->nf, "error", JSON_STRING))
		return read_error(r);
	if (json_get(r->f, r->nf, "skipped", JSON_STRING))
		return read_skip(r);
	if (json_get(r->f, r->nf, "build_id", JSON_STRING))
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
