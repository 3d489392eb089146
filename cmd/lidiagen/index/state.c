/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The batch's state (state.h) and its file: a header line, an "O" line per
 * output, then an "I" line per input followed by a "P" line per ELF part in
 * it and an "S" line per ELF image in it passed over, fields separated by
 * tabs, paths with tab, newline, backslash and percent escaped as %xx.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "tempfile.h"

/*
 * 3: parts have their position; 4: images passed over say whether they are
 * dwz files (a run gathers those of the inputs it does not read again). An
 * older state is read again, not trusted.
 */
#define STATE_MAGIC "lidiagen-state 4"

void state_init(struct state *s)
{
	memset(s, 0, sizeof(*s));
}

/* ---- Indexes: inputs by path, outputs by key (no run is quadratic in its inputs) ---- */

uint64_t str_hash64(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static size_t str_hash(const char *s)
{
	return (size_t)str_hash64(s);
}

static const char *input_path(const struct state *s, size_t i)
{
	return s->inputs[i].path;
}

static const char *output_key(const struct state *s, size_t i)
{
	return s->outputs[i].key;
}

/* The position of key in the array ix indexes, or -1. */
static ssize_t index_find(const struct state *s, const struct str_index *ix,
			  const char *(*key_at)(const struct state *, size_t), const char *key)
{
	if (!ix->cap)
		return -1;
	for (size_t i = str_hash(key) & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
		if (!ix->slots[i])
			return -1;
		if (!strcmp(key_at(s, ix->slots[i] - 1), key))
			return (ssize_t)(ix->slots[i] - 1);
	}
}

static void index_put(struct str_index *ix, size_t pos, const char *key)
{
	size_t i = str_hash(key) & (ix->cap - 1);

	while (ix->slots[i])
		i = (i + 1) & (ix->cap - 1);
	ix->slots[i] = pos + 1;
}

/* Index the array's element pos (count elements in all, pos the last), growing at half full. */
static int index_add(const struct state *s, struct str_index *ix,
		     const char *(*key_at)(const struct state *, size_t), size_t pos, size_t count)
{
	if (2 * count > ix->cap) {
		size_t cap = ix->cap ? ix->cap * 2 : 128;
		size_t *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		free(ix->slots);
		*ix = (struct str_index){ slots, cap };
		for (size_t k = 0; k < pos; k++)
			index_put(ix, k, key_at(s, k));
	}
	index_put(ix, pos, key_at(s, pos));
	return 0;
}

static void release_parts(struct state *s)
{
	for (size_t i = 0; i < s->nparts; i++) {
		free(s->parts[i].path);
		free(s->parts[i].member);
		free(s->parts[i].at);
	}
	free(s->parts);
	for (size_t i = 0; i < s->nskips; i++)
		free(s->skips[i].path);
	free(s->skips);
	for (size_t i = 0; i < s->ninputs; i++)
		free(s->inputs[i].path);
	free(s->inputs);
	free(s->outputs);
	free(s->input_index.slots);
	free(s->output_index.slots);
}

void state_release(struct state *s)
{
	if (s->saved) {
		release_parts(s->saved);
		free(s->saved);
	}
	release_parts(s);
	memset(s, 0, sizeof(*s));
}

static ssize_t push_input(struct state *s, const char *path, uint64_t size, int64_t mtime)
{
	if (s->ninputs == s->cap_inputs) {
		size_t cap = s->cap_inputs ? s->cap_inputs * 2 : 64;
		void *p = realloc(s->inputs, cap * sizeof(*s->inputs));

		if (!p)
			return -ENOMEM;
		s->inputs = p;
		s->cap_inputs = cap;
	}
	s->inputs[s->ninputs] = (struct state_input){ .path = strdup(path),
						      .size = size,
						      .mtime = mtime,
						      .part0 = s->nparts,
						      .skip0 = s->nskips };
	if (!s->inputs[s->ninputs].path ||
	    index_add(s, &s->input_index, input_path, s->ninputs, s->ninputs + 1)) {
		free(s->inputs[s->ninputs].path);
		return -ENOMEM;
	}
	return (ssize_t)s->ninputs++;
}

int state_position(char *buf, size_t size, const uint32_t *at, unsigned depth)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < depth; i++) {
		int w = snprintf(buf + n, size - n, "%s%u", i ? "." : "", (unsigned)at[i]);

		if (w < 0 || (size_t)w >= size - n)
			return -ENOSPC;
		n += (size_t)w;
	}
	return 0;
}

bool state_position_valid(const char *at)
{
	size_t digits = 0, n = 0;

	for (; *at; at++, n++) {
		if (*at >= '0' && *at <= '9' && digits < 10)
			digits++;
		else if (*at == '.' && digits)
			digits = 0;
		else
			return false;
	}
	return digits && n < STATE_POSITION_MAX;
}

int state_add_part(struct state *s, size_t input, const char *path, const char *member,
		   const char *at, const char *key, const struct lidia_elf_info *info,
		   uint64_t size)
{
	struct state_part *p;

	if (s->nparts == s->cap_parts) {
		size_t cap = s->cap_parts ? s->cap_parts * 2 : 64;
		void *np = realloc(s->parts, cap * sizeof(*s->parts));

		if (!np)
			return -ENOMEM;
		s->parts = np;
		s->cap_parts = cap;
	}
	p = &s->parts[s->nparts];
	memset(p, 0, sizeof(*p));
	p->path = strdup(path);
	p->member = member ? strdup(member) : NULL;
	p->at = at ? strdup(at) : NULL;
	if (!p->path || (member && !p->member) || (at && !p->at)) {
		free(p->path);
		free(p->member);
		free(p->at);
		return -ENOMEM;
	}
	p->input = input;
	snprintf(p->key, sizeof(p->key), "%s", key);
	p->info = *info;
	p->size = size;
	s->nparts++;
	return 0;
}

int state_add_skip(struct state *s, size_t input, const char *path, enum skip_reason reason,
		   const char *key, bool go)
{
	struct state_skip *k;

	if (s->nskips == s->cap_skips) {
		size_t cap = s->cap_skips ? s->cap_skips * 2 : 16;
		void *np = realloc(s->skips, cap * sizeof(*s->skips));

		if (!np)
			return -ENOMEM;
		s->skips = np;
		s->cap_skips = cap;
	}
	k = &s->skips[s->nskips];
	memset(k, 0, sizeof(*k));
	if (!(k->path = strdup(path)))
		return -ENOMEM;
	k->input = input;
	k->reason = reason;
	snprintf(k->key, sizeof(k->key), "%s", key ? key : "");
	k->go = go;
	s->nskips++;
	return 0;
}

ssize_t state_find_input(const struct state *s, const char *path)
{
	return index_find(s, &s->input_index, input_path, path);
}

int state_copy_input(struct state *s, size_t idx, const struct state *from, size_t from_idx)
{
	const struct state_input *old = &from->inputs[from_idx];

	s->inputs[idx].kind = old->kind;
	memcpy(s->inputs[idx].sha256, old->sha256, sizeof(old->sha256));
	for (size_t k = old->part0; k < old->part0 + old->nparts; k++) {
		const struct state_part *p = &from->parts[k];

		if (state_add_part(s, idx, p->path, p->member, p->at, p->key, &p->info, p->size))
			return -ENOMEM;
		s->parts[s->nparts - 1].dwz = p->dwz;
	}
	for (size_t k = old->skip0; k < old->skip0 + old->nskips; k++) {
		const struct state_skip *sk = &from->skips[k];

		if (state_add_skip(s, idx, sk->path, sk->reason, sk->key, sk->go))
			return -ENOMEM;
		s->skips[s->nskips - 1].dwz = sk->dwz;
	}
	/* Added in one go, under the caller's lock: they follow one another until sorted. */
	s->inputs[idx].part0 = s->nparts - old->nparts;
	s->inputs[idx].skip0 = s->nskips - old->nskips;
	s->inputs[idx].nparts = old->nparts;
	s->inputs[idx].nskips = old->nskips;
	return 0;
}

ssize_t state_add_input(struct state *s, const char *path, uint64_t size, int64_t mtime)
{
	const struct state_input *old;
	ssize_t idx, i;

	if (index_find(s, &s->input_index, input_path, path) >= 0)
		return STATE_DUPLICATE;
	idx = push_input(s, path, size, mtime);
	if (idx < 0 || !s->saved)
		return idx;
	i = index_find(s->saved, &s->saved->input_index, input_path, path);
	if (i < 0)
		return idx;
	old = &s->saved->inputs[i];
	if (old->size != size || old->mtime != mtime)
		return idx;
	s->inputs[idx].from_state = true;
	return state_copy_input(s, (size_t)idx, s->saved, (size_t)i) ? -ENOMEM : idx;
}

/* The output entry of key, made (level -1) if there is none; NULL out of memory. */
static struct state_output *output_entry(struct state *s, const char *key)
{
	ssize_t i = index_find(s, &s->output_index, output_key, key);
	struct state_output *o;

	if (i >= 0)
		return &s->outputs[i];
	if (s->noutputs == s->cap_outputs) {
		size_t cap = s->cap_outputs ? s->cap_outputs * 2 : 64;
		void *p = realloc(s->outputs, cap * sizeof(*s->outputs));

		if (!p)
			return NULL;
		s->outputs = p;
		s->cap_outputs = cap;
	}
	o = &s->outputs[s->noutputs];
	*o = (struct state_output){ .level = -1 };
	snprintf(o->key, sizeof(o->key), "%s", key);
	if (index_add(s, &s->output_index, output_key, s->noutputs, s->noutputs + 1))
		return NULL;
	s->noutputs++;
	return o;
}

int state_set_output(struct state *s, const char *key, int level, bool dynsym_only)
{
	struct state_output *o = output_entry(s, key);

	if (!o)
		return -ENOMEM;
	o->level = level;
	o->dynsym_only = dynsym_only;
	return 0;
}

int state_set_remote(struct state *s, const char *key, const struct state_remote *r)
{
	struct state_output *o = output_entry(s, key);

	if (!o)
		return -ENOMEM;
	o->remote = *r;
	return 0;
}

const struct state_remote *state_remote(const struct state *s, const char *key)
{
	ssize_t i = s ? index_find(s, &s->output_index, output_key, key) : -1;

	return i >= 0 && s->outputs[i].remote.etag[0] ? &s->outputs[i].remote : NULL;
}

int state_output_level(const struct state *s, const char *key)
{
	ssize_t i = s ? index_find(s, &s->output_index, output_key, key) : -1;

	return i >= 0 ? s->outputs[i].level : -1;
}

bool state_output_dynsym_only(const struct state *s, const char *key)
{
	ssize_t i = s ? index_find(s, &s->output_index, output_key, key) : -1;

	return i >= 0 && s->outputs[i].dynsym_only;
}

static int cmp_part(const void *pa, const void *pb)
{
	const struct state_part *a = pa, *b = pb;
	int c = strcmp(a->key, b->key);

	if (!c)
		c = strcmp(a->path, b->path);
	/* Two members of one path (a tar appended to): their positions decide, not qsort. */
	if (!c)
		c = strcmp(a->at ? a->at : "", b->at ? b->at : "");
	return c;
}

static int cmp_skip(const void *pa, const void *pb)
{
	const struct state_skip *a = pa, *b = pb;
	int c = strcmp(a->path, b->path);

	return c ? c : (int)a->reason - (int)b->reason;
}

void state_sort_parts(struct state *s)
{
	if (s->nparts > 1)
		qsort(s->parts, s->nparts, sizeof(*s->parts), cmp_part);
	if (s->nskips > 1)
		qsort(s->skips, s->nskips, sizeof(*s->skips), cmp_skip);
}

/* ---- The file ---------------------------------------------------------------------------- */

static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\t' || *s == '\n' || *s == '\\' || *s == '%' || *s == '\r')
			fprintf(f, "%%%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
}

static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		unsigned v;

		if (*s == '%' && sscanf(s + 1, "%2x", &v) == 1) {
			*o++ = (char)v;
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

static int cmp_output(const void *a, const void *b)
{
	return strcmp((*(const struct state_output *const *)a)->key,
		      (*(const struct state_output *const *)b)->key);
}

/*
 * The indexes of n elements ordered by their input (a counting sort: within
 * an input they keep their order, parts by key, skips by path).
 */
static size_t *by_input(const struct state *s, size_t n,
			size_t (*input_of)(const struct state *, size_t))
{
	size_t *start = calloc(s->ninputs + 1, sizeof(*start));
	size_t *order = malloc((n + 1) * sizeof(*order));

	if (!start || !order) {
		free(start);
		free(order);
		return NULL;
	}
	for (size_t k = 0; k < n; k++)
		start[input_of(s, k) + 1]++;
	for (size_t i = 0; i < s->ninputs; i++)
		start[i + 1] += start[i];
	for (size_t k = 0; k < n; k++)
		order[start[input_of(s, k)]++] = k;
	free(start);
	return order;
}

static size_t part_input(const struct state *s, size_t k)
{
	return s->parts[k].input;
}

static size_t skip_input(const struct state *s, size_t k)
{
	return s->skips[k].input;
}

size_t *state_order_by_input(const struct state *s, bool skips)
{
	return skips ? by_input(s, s->nskips, skip_input) : by_input(s, s->nparts, part_input);
}

static void write_part(FILE *f, const struct state_part *p)
{
	fprintf(f, "P\t%s\t%s%s%s%s-\t%llu\t", p->key, p->info.debug_file ? "d" : "",
		p->info.has_symtab ? "s" : "", p->info.has_dwarf ? "w" : "",
		p->info.has_go ? "g" : "", (unsigned long long)p->size);
	put_escaped(f, p->info.go_build_id[0] ? p->info.go_build_id : "-");
	fprintf(f, "\t%s\t", p->at ? p->at : "-");
	put_escaped(f, p->path);
	fputc('\t', f);
	put_escaped(f, p->member ? p->member : "");
	fputc('\n', f);
}

static void write_skip(FILE *f, const struct state_skip *k)
{
	fprintf(f, "S\t%d\t%s\t%s\t", (int)k->reason,
		k->go	 ? "g"
		: k->dwz ? "z"
			 : "-",
		k->key[0] ? k->key : "-");
	put_escaped(f, k->path);
	fputc('\n', f);
}

/* What write_state prints: the outputs in key order, the parts and skips by input. */
struct saving {
	const struct state *s;
	const struct state_output **outs;
	const size_t *order, *skip_order;
};

static void write_state(FILE *f, void *ctx)
{
	const struct saving *sv = ctx;
	const struct state *s = sv->s;

	fprintf(f, "%s\n", STATE_MAGIC);
	/* In key order, whatever order the conversions finished in. */
	for (size_t i = 0; i < s->noutputs; i++) {
		const struct state_output *o = sv->outs[i];
		const struct state_remote *r = &o->remote;

		fprintf(f, "O\t%s\t%d\t%s\n", o->key, o->level, o->dynsym_only ? "d" : "-");
		if (r->etag[0])
			fprintf(f, "R\t%s\t%s\t%d\t%d\t%zu\t%zu\t%zu\t%llu\t%s\n", o->key, r->etag,
				r->valid, r->level, r->functions, r->inline_ranges, r->line_rows,
				(unsigned long long)r->size, r->sha[0] ? r->sha : "-");
	}
	for (size_t i = 0, k = 0, j = 0; i < s->ninputs; i++) {
		const struct state_input *in = &s->inputs[i];
		size_t end = k, skip_end = j;

		while (end < s->nparts && s->parts[sv->order[end]].input == i)
			end++;
		while (skip_end < s->nskips && s->skips[sv->skip_order[skip_end]].input == i)
			skip_end++;
		if (in->kind != INPUT_UNKNOWN) { /* else not read to the end: nothing to remember */
			fprintf(f, "I\t%llu\t%lld\t%d\t", (unsigned long long)in->size,
				(long long)in->mtime, in->kind);
			put_escaped(f, in->path);
			fputc('\n', f);
			for (; k < end; k++)
				write_part(f, &s->parts[sv->order[k]]);
			for (; j < skip_end; j++)
				write_skip(f, &s->skips[sv->skip_order[j]]);
		}
		k = end;
		j = skip_end;
	}
}

int state_save(struct state *s, const char *path)
{
	const struct state_output **outs = malloc((s->noutputs + 1) * sizeof(*outs));
	size_t *order = state_order_by_input(s, false);
	size_t *skip_order = state_order_by_input(s, true);
	struct saving sv = { s, outs, order, skip_order };
	int err = -ENOMEM;

	if (outs && order && skip_order) {
		for (size_t i = 0; i < s->noutputs; i++)
			outs[i] = &s->outputs[i];
		qsort(outs, s->noutputs, sizeof(*outs), cmp_output);
		err = write_file(path, write_state, &sv);
	}
	free(outs);
	free(order);
	free(skip_order);
	return err;
}

/* An "R" line's fields (state_save): what was at the key in the bucket. */
static int load_remote(struct state *s, char **field)
{
	struct state_remote r = { .valid = atoi(field[3]) != 0, .level = atoi(field[4]) };

	if (strlen(field[2]) >= sizeof(r.etag) || strlen(field[9]) >= sizeof(r.sha))
		return -EINVAL;
	snprintf(r.etag, sizeof(r.etag), "%s", field[2]);
	r.functions = strtoull(field[5], NULL, 10);
	r.inline_ranges = strtoull(field[6], NULL, 10);
	r.line_rows = strtoull(field[7], NULL, 10);
	r.size = strtoull(field[8], NULL, 10);
	if (strcmp(field[9], "-"))
		snprintf(r.sha, sizeof(r.sha), "%s", field[9]);
	return state_set_remote(s, field[1], &r);
}

void state_load(struct state *s, const char *path, bool ignore)
{
	struct state *old;
	char *line = NULL;
	size_t cap = 0;
	ssize_t cur = -1;
	FILE *f;

	if (ignore || !(f = fopen(path, "r")))
		return;
	old = calloc(1, sizeof(*old));
	if (!old || getline(&line, &cap, f) < 0 ||
	    strncmp(line, STATE_MAGIC "\n", sizeof(STATE_MAGIC)))
		goto bad;
	while (getline(&line, &cap, f) > 0) {
		char *field[11], *save = NULL, *t;
		int n = 0;

		line[strcspn(line, "\n")] = '\0';
		for (t = strtok_r(line, "\t", &save); t && n < 11; t = strtok_r(NULL, "\t", &save))
			field[n++] = t;
		if (n == 10 && !strcmp(field[0], "R")) {
			if (!lidia_store_build_id_valid(field[1]) || load_remote(old, field))
				goto bad;
		} else if (n == 4 && !strcmp(field[0], "O")) {
			if (!lidia_store_build_id_valid(field[1]) ||
			    state_set_output(old, field[1], atoi(field[2]), !strcmp(field[3], "d")))
				goto bad;
		} else if (n == 5 && !strcmp(field[0], "I")) {
			unescape(field[4]);
			cur = push_input(old, field[4], strtoull(field[1], NULL, 10),
					 strtoll(field[2], NULL, 10));
			if (cur < 0)
				goto bad;
			old->inputs[cur].kind = (enum input_kind)atoi(field[3]);
		} else if ((n == 7 || n == 8) && !strcmp(field[0], "P") && cur >= 0) {
			const char *at = strcmp(field[5], "-") ? field[5] : NULL;
			struct lidia_elf_info info = { 0 };

			info.debug_file = strchr(field[2], 'd') != NULL;
			info.has_symtab = strchr(field[2], 's') != NULL;
			info.has_dwarf = strchr(field[2], 'w') != NULL;
			info.has_go = strchr(field[2], 'g') != NULL;
			unescape(field[4]);
			if (strcmp(field[4], "-"))
				snprintf(info.go_build_id, sizeof(info.go_build_id), "%s",
					 field[4]);
			unescape(field[6]);
			if (n == 8)
				unescape(field[7]);
			/* A member has its position (and a name, maybe empty), a file neither. */
			if (!lidia_store_build_id_valid(field[1]) || (n == 8 && !at) ||
			    (at && !state_position_valid(at)) ||
			    state_add_part(old, (size_t)cur, field[6],
					   n == 8 ? field[7]
					   : at	  ? ""
						  : NULL,
					   at, field[1], &info, strtoull(field[3], NULL, 10)))
				goto bad;
			old->inputs[cur].nparts++; /* an input's P lines follow its I line */
		} else if (n == 5 && !strcmp(field[0], "S") && cur >= 0) {
			int reason = atoi(field[1]);

			unescape(field[4]);
			if (reason < SKIP_NO_KEY || reason >= SKIP_REASONS ||
			    state_add_skip(old, (size_t)cur, field[4], (enum skip_reason)reason,
					   strcmp(field[3], "-") ? field[3] : "",
					   !strcmp(field[2], "g")))
				goto bad;
			old->skips[old->nskips - 1].dwz = !strcmp(field[2], "z");
			old->inputs[cur].nskips++; /* and its S lines */
		} else {
			goto bad;
		}
	}
	free(line);
	fclose(f);
	s->saved = old;
	return;
bad:
	/* Anything unexpected: read every input again, as if there were no state. */
	free(line);
	fclose(f);
	if (old) {
		release_parts(old);
		free(old);
	}
}
