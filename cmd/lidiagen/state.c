/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The batch's state (state.h) and its file: a header line, then an "I" line
 * per input followed by a "P" line per ELF part in it, fields separated by
 * tabs, paths with tab, newline, backslash and percent escaped as %xx.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state.h"

#define STATE_MAGIC "lidiagen-state 1"

void state_init(struct state *s)
{
	memset(s, 0, sizeof(*s));
}

static void release_parts(struct state *s)
{
	for (size_t i = 0; i < s->nparts; i++) {
		free(s->parts[i].path);
		free(s->parts[i].member);
	}
	free(s->parts);
	for (size_t i = 0; i < s->ninputs; i++)
		free(s->inputs[i].path);
	free(s->inputs);
	free(s->outputs);
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
	s->inputs[s->ninputs] = (struct state_input){ .path = strdup(path), .size = size,
						      .mtime = mtime };
	if (!s->inputs[s->ninputs].path)
		return -ENOMEM;
	return (ssize_t)s->ninputs++;
}

int state_add_part(struct state *s, size_t input, const char *path, const char *member,
		   const char *key, const struct lidia_elf_info *info, uint64_t size)
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
	if (!p->path || (member && !p->member)) {
		free(p->path);
		free(p->member);
		return -ENOMEM;
	}
	p->input = input;
	snprintf(p->key, sizeof(p->key), "%s", key);
	p->info = *info;
	p->size = size;
	s->nparts++;
	return 0;
}

ssize_t state_add_input(struct state *s, const char *path, uint64_t size, int64_t mtime)
{
	ssize_t idx;

	for (size_t i = 0; i < s->ninputs; i++)
		if (!strcmp(s->inputs[i].path, path))
			return STATE_DUPLICATE;
	idx = push_input(s, path, size, mtime);
	if (idx < 0 || !s->saved)
		return idx;
	for (size_t i = 0; i < s->saved->ninputs; i++) {
		const struct state_input *old = &s->saved->inputs[i];

		if (strcmp(old->path, path) || old->size != size || old->mtime != mtime)
			continue;
		s->inputs[idx].kind = old->kind;
		s->inputs[idx].from_state = true;
		for (size_t k = 0; k < s->saved->nparts; k++) {
			const struct state_part *p = &s->saved->parts[k];

			if (p->input == i && state_add_part(s, (size_t)idx, p->path, p->member, p->key,
							    &p->info, p->size))
				return -ENOMEM;
		}
		break;
	}
	return idx;
}

int state_set_output(struct state *s, const char *key, int level)
{
	for (size_t i = 0; i < s->noutputs; i++)
		if (!strcmp(s->outputs[i].key, key)) {
			s->outputs[i].level = level;
			return 0;
		}
	if (s->noutputs == s->cap_outputs) {
		size_t cap = s->cap_outputs ? s->cap_outputs * 2 : 64;
		void *p = realloc(s->outputs, cap * sizeof(*s->outputs));

		if (!p)
			return -ENOMEM;
		s->outputs = p;
		s->cap_outputs = cap;
	}
	snprintf(s->outputs[s->noutputs].key, sizeof(s->outputs[0].key), "%s", key);
	s->outputs[s->noutputs++].level = level;
	return 0;
}

int state_output_level(const struct state *s, const char *key)
{
	if (!s)
		return -1;
	for (size_t i = 0; i < s->noutputs; i++)
		if (!strcmp(s->outputs[i].key, key))
			return s->outputs[i].level;
	return -1;
}

static int cmp_part(const void *pa, const void *pb)
{
	const struct state_part *a = pa, *b = pb;
	int c = strcmp(a->key, b->key);

	return c ? c : strcmp(a->path, b->path);
}

void state_sort_parts(struct state *s)
{
	if (s->nparts > 1)
		qsort(s->parts, s->nparts, sizeof(*s->parts), cmp_part);
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
	return strcmp(((const struct state_output *)a)->key, ((const struct state_output *)b)->key);
}

int state_save(struct state *s, const char *path)
{
	char tmp[PATH_MAX];
	FILE *f;
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return -ENOMEM;
	}
	fprintf(f, "%s\n", STATE_MAGIC);
	/* In key order, whatever order the conversions finished in. */
	if (s->noutputs > 1)
		qsort(s->outputs, s->noutputs, sizeof(*s->outputs), cmp_output);
	for (size_t i = 0; i < s->noutputs; i++)
		fprintf(f, "O\t%s\t%d\n", s->outputs[i].key, s->outputs[i].level);
	for (size_t i = 0; i < s->ninputs; i++) {
		const struct state_input *in = &s->inputs[i];

		if (in->kind == INPUT_UNKNOWN)
			continue; /* not read to the end: nothing to remember */
		fprintf(f, "I\t%llu\t%lld\t%d\t", (unsigned long long)in->size, (long long)in->mtime,
			in->kind);
		put_escaped(f, in->path);
		fputc('\n', f);
		for (size_t k = 0; k < s->nparts; k++) {
			const struct state_part *p = &s->parts[k];

			if (p->input != i)
				continue;
			fprintf(f, "P\t%s\t%s%s%s%s-\t%llu\t", p->key, p->info.debug_file ? "d" : "",
				p->info.has_symtab ? "s" : "", p->info.has_dwarf ? "w" : "",
				p->info.has_go ? "g" : "", (unsigned long long)p->size);
			put_escaped(f, p->info.go_build_id[0] ? p->info.go_build_id : "-");
			fputc('\t', f);
			put_escaped(f, p->path);
			fputc('\t', f);
			put_escaped(f, p->member ? p->member : "");
			fputc('\n', f);
		}
	}
	if (fclose(f) || rename(tmp, path)) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	return 0;
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
	if (!old || getline(&line, &cap, f) < 0 || strncmp(line, STATE_MAGIC "\n", sizeof(STATE_MAGIC)))
		goto bad;
	while (getline(&line, &cap, f) > 0) {
		char *field[8], *save = NULL, *t;
		int n = 0;

		line[strcspn(line, "\n")] = '\0';
		for (t = strtok_r(line, "\t", &save); t && n < 8; t = strtok_r(NULL, "\t", &save))
			field[n++] = t;
		if (n == 3 && !strcmp(field[0], "O")) {
			if (!lidia_build_id_valid(field[1]) ||
			    state_set_output(old, field[1], atoi(field[2])))
				goto bad;
		} else if (n == 5 && !strcmp(field[0], "I")) {
			unescape(field[4]);
			cur = push_input(old, field[4], strtoull(field[1], NULL, 10),
					 strtoll(field[2], NULL, 10));
			if (cur < 0)
				goto bad;
			old->inputs[cur].kind = (enum input_kind)atoi(field[3]);
		} else if ((n == 6 || n == 7) && !strcmp(field[0], "P") && cur >= 0) {
			struct lidia_elf_info info = { 0 };

			info.debug_file = strchr(field[2], 'd') != NULL;
			info.has_symtab = strchr(field[2], 's') != NULL;
			info.has_dwarf = strchr(field[2], 'w') != NULL;
			info.has_go = strchr(field[2], 'g') != NULL;
			unescape(field[4]);
			if (strcmp(field[4], "-"))
				snprintf(info.go_build_id, sizeof(info.go_build_id), "%s", field[4]);
			unescape(field[5]);
			if (n == 7)
				unescape(field[6]);
			if (!lidia_build_id_valid(field[1]) ||
			    state_add_part(old, (size_t)cur, field[5], n == 7 ? field[6] : NULL, field[1],
					   &info, strtoull(field[3], NULL, 10)))
				goto bad;
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
