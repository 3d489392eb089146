/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --index (batch_internal.h): what a shard opens. Its groups name the
 * parts they read, and so the inputs: those are checked to be the files the
 * index describes before any is opened, and inside an archive only the
 * members on the way to those parts, by their positions, are looked at (the
 * others are streamed past, neither identified nor copied). Also the count of what each input
 * cost to read, which the manifest's "read" lines give.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch_internal.h"
#include "open_regular.h"
#include "sha256.h"

void input_opened(struct batch *b, size_t input, uint64_t bytes)
{
	b->state.inputs[input].opened++;
	b->state.inputs[input].bytes_read += bytes;
}

/* Whether the file at in->path is the one the index describes; else why not, in why. */
static bool unchanged(struct batch *b, size_t input, char *why, size_t why_size)
{
	const struct state_input *in = &b->state.inputs[input];
	char sha[65];
	struct stat st;
	int err;

	if (stat(in->path, &st)) {
		snprintf(why, why_size, "indexed, but now %s", strerror(errno));
		return false;
	}
	/* An index names paths: what is there now is opened only if it is a regular file. */
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, why_size, "indexed, but now %s",
			 open_regular_error(OPEN_NOT_REGULAR));
		return false;
	}
	if ((uint64_t)st.st_size != in->size) {
		snprintf(why, why_size, "changed since the index (%llu bytes, the index says %llu)",
			 (unsigned long long)st.st_size, (unsigned long long)in->size);
		return false;
	}
	if ((int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec == in->mtime)
		return true;
	/* Another mtime (a fresh checkout, a downloaded artifact): the contents decide. */
	if (!in->sha256[0]) {
		snprintf(why, why_size, "changed since the index (another mtime, and no SHA-256)");
		return false;
	}
	err = sha256_file(in->path, sha);
	pthread_mutex_lock(&b->lock);
	input_opened(b, input, in->size);
	pthread_mutex_unlock(&b->lock);
	if (err || strcmp(sha, in->sha256)) {
		snprintf(why, why_size, "%s",
			 err ? strerror(-err) : "changed since the index (another SHA-256)");
		return false;
	}
	return true;
}

void check_inputs_unchanged(struct batch *b)
{
	struct state *s = &b->state;
	bool *used = calloc(s->ninputs + 1, sizeof(*used));
	char why[256];

	if (!used) {
		for (size_t k = 0; k < s->ninputs; k++)
			s->inputs[k].changed = true; /* none is used unchecked */
		input_problem(b, b->o->index, "out of memory checking the inputs");
		return;
	}
	for (size_t i = 0; i < b->ngroups; i++) {
		const struct group *g = &b->groups[i];

		if (g->done)
			continue; /* another shard's */
		used[s->parts[g->main].input] = true;
		if (g->bin >= 0)
			used[s->parts[g->bin].input] = true;
	}
	for (size_t k = 0; k < s->ninputs; k++) {
		if (!used[k] || unchanged(b, k, why, sizeof(why)))
			continue;
		s->inputs[k].changed = true;
		input_problem(b, s->inputs[k].path, why);
	}
	free(used);
}

/* One position more (len bytes of at). */
static int push_position(struct position_set *ps, size_t *cap, const char *at, size_t len)
{
	if (ps->n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		void *p = realloc(ps->at, c * sizeof(*ps->at));

		if (!p)
			return -ENOMEM;
		ps->at = p;
		*cap = c;
	}
	if (!(ps->at[ps->n] = strndup(at, len)))
		return -ENOMEM;
	ps->n++;
	return 0;
}

int position_set_build(struct position_set *ps, const struct state *s, const size_t *parts,
		       size_t n)
{
	size_t cap = 0, k = 0;

	*ps = (struct position_set){ 0 };
	for (size_t i = 0; i < n; i++) {
		const char *at = s->parts[parts[i]].at;

		/* Every prefix that ends before a '.', and the whole. */
		for (const char *end = at;; end++) {
			if ((*end == '.' || !*end) &&
			    push_position(ps, &cap, at, (size_t)(end - at)))
				return -ENOMEM;
			if (!*end)
				break;
		}
	}
	if (ps->n > 1)
		qsort(ps->at, ps->n, sizeof(*ps->at), cmp_str_ptrs);
	/* Once each: a prefix shared by many parts (a .deb's data.tar) is there once. */
	for (size_t i = 0; i < ps->n; i++) {
		if (k && !strcmp(ps->at[k - 1], ps->at[i]))
			free(ps->at[i]);
		else
			ps->at[k++] = ps->at[i];
	}
	ps->n = k;
	return 0;
}

bool position_set_has(const struct position_set *ps, const char *at)
{
	return ps->n && bsearch(&at, ps->at, ps->n, sizeof(*ps->at), cmp_str_ptrs);
}

void position_set_release(struct position_set *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->at[i]);
	free(ps->at);
	*ps = (struct position_set){ 0 };
}

/* ---- --shard-by input ------------------------------------------------------------------- */

static size_t find(size_t *parent, size_t i)
{
	while (parent[i] != i)
		i = parent[i] = parent[parent[i]];
	return i;
}

/* One set of inputs: its root, its bytes, and its first input by path (for a stable order). */
struct input_set {
	size_t root;
	uint64_t bytes;
	const char *first;
};

static int cmp_set(const void *pa, const void *pb)
{
	const struct input_set *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return strcmp(a->first, b->first);
}

/* The sets of inputs the groups join, into sets[0..*n), each with its bytes; parent joins them. */
static void input_sets(const struct batch *b, size_t *parent, struct input_set *sets, size_t *n)
{
	const struct state *s = &b->state;
	size_t *slot = parent + s->ninputs; /* the set of each root + 1, 0: none yet */

	for (size_t i = 0; i < s->ninputs; i++) {
		parent[i] = i;
		slot[i] = 0;
	}
	for (size_t i = 0; i < b->ngroups; i++) {
		const struct group *g = &b->groups[i];

		if (g->bin >= 0)
			parent[find(parent, s->parts[g->bin].input)] =
				find(parent, s->parts[g->main].input);
	}
	*n = 0;
	for (size_t i = 0; i < b->ngroups; i++) {
		size_t in = s->parts[b->groups[i].main].input, r = find(parent, in);

		if (!slot[r]) {
			sets[*n] = (struct input_set){ r, 0, s->inputs[in].path };
			slot[r] = ++*n;
		}
	}
	/* Each input's bytes once, to the set it is in (if a group reads it). */
	for (size_t i = 0; i < s->ninputs; i++) {
		size_t r = find(parent, i);

		if (slot[r]) {
			struct input_set *set = &sets[slot[r] - 1];

			set->bytes += s->inputs[i].size;
			if (strcmp(s->inputs[i].path, set->first) < 0)
				set->first = s->inputs[i].path;
		}
	}
}

int assign_by_input(struct batch *b)
{
	const struct batch_opts *o = b->o;
	size_t n = 0, *parent = malloc((2 * b->state.ninputs + 1) * sizeof(*parent));
	struct input_set *sets = malloc((b->ngroups + 1) * sizeof(*sets));
	uint64_t *load = calloc(o->shard_n, sizeof(*load));
	unsigned *shard = malloc((b->state.ninputs + 1) * sizeof(*shard));

	int err = -ENOMEM;

	if (!parent || !sets || !load || !shard)
		goto out;
	input_sets(b, parent, sets, &n);
	qsort(sets, n, sizeof(*sets), cmp_set);
	for (size_t i = 0; i < n; i++) { /* largest first, to the shard with least so far */
		unsigned k = 0;

		for (unsigned j = 1; j < o->shard_n; j++)
			if (load[j] < load[k])
				k = j;
		load[k] += sets[i].bytes;
		shard[sets[i].root] = k;
	}
	for (size_t i = 0; i < b->ngroups; i++) {
		struct group *g = &b->groups[i];

		if (!g->done &&
		    shard[find(parent, b->state.parts[g->main].input)] != o->shard_k - 1) {
			g->status = ST_OTHER_SHARD;
			g->done = true;
			b->skipped_shard++;
		}
	}
	err = 0;
out:
	free(parent);
	free(sets);
	free(load);
	free(shard);
	return err;
}
