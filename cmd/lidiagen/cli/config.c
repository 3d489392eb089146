/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The YAML config (libyaml's event parser): a top-level mapping whose keys
 * are the long options of the command line and whose values are scalars,
 * or sequences of scalars for the repeatable options. Every error names the
 * file, line and column.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "config.h"
#include "options.h"

#define CONFIG_MAX_SIZE (1 << 20)

/* One parse: the parser, the event at hand, and where errors go. */
struct cfg {
	yaml_parser_t p;
	yaml_event_t ev;
	bool have_ev;
	const char *name; /* for messages */
	struct batch_opts *o;
	char *err;
	size_t err_size;
};

/* "NAME:LINE:COLUMN: what" in c->err; returns -1. */
__attribute__((format(printf, 3, 4))) static int bad_at(struct cfg *c, yaml_mark_t mark,
							const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(c->err, c->err_size, "%s:%zu:%zu: ", c->name, mark.line + 1,
			 mark.column + 1);

	if (n >= 0 && (size_t)n < c->err_size) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->err_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/*
 * The values the options point at live as long as the process: every copy
 * is remembered here (so nothing is lost, even for a flag's "true").
 */
static char **kept;
static size_t nkept, cap_kept;

static char *keep(const char *s)
{
	char *v = strdup(s);

	if (v && nkept == cap_kept) {
		size_t cap = cap_kept ? cap_kept * 2 : 64;
		char **p = realloc(kept, cap * sizeof(*kept));

		if (!p) {
			free(v);
			return NULL;
		}
		kept = p;
		cap_kept = cap;
	}
	if (v)
		kept[nkept++] = v;
	return v;
}

/* The next event into c->ev (the last one deleted). */
static int next(struct cfg *c)
{
	if (c->have_ev)
		yaml_event_delete(&c->ev);
	c->have_ev = yaml_parser_parse(&c->p, &c->ev) != 0;
	if (!c->have_ev)
		return bad_at(c, c->p.problem_mark, "%s",
			      c->p.problem ? c->p.problem : "invalid YAML");
	return 0;
}

/* Apply the scalar event at hand to option d. */
static int apply_scalar(struct cfg *c, const struct opt_def *d)
{
	char msg[256];
	char *v = keep((const char *)c->ev.data.scalar.value);

	if (!v)
		return bad_at(c, c->ev.start_mark, "%s", "out of memory");
	if (option_apply(c->o, d, v, NULL, msg, sizeof(msg)))
		return bad_at(c, c->ev.start_mark, "%s", msg);
	return 0;
}

/* The value of key d: a scalar, or a sequence of scalars. */
static int read_value(struct cfg *c, const struct opt_def *d)
{
	if (next(c))
		return -1;
	if (c->ev.type == YAML_SCALAR_EVENT) {
		/* A list option with no value ("include:") is an empty list. */
		if (d->kind == OPT_LIST && !c->ev.data.scalar.length)
			return 0;
		return apply_scalar(c, d);
	}
	if (c->ev.type != YAML_SEQUENCE_START_EVENT || d->kind != OPT_LIST)
		return bad_at(c, c->ev.start_mark, "%s: %s", d->name,
			      d->kind == OPT_LIST ? "expects a value or a list of values"
						  : "expects one value");
	for (;;) {
		if (next(c))
			return -1;
		if (c->ev.type == YAML_SEQUENCE_END_EVENT)
			return 0;
		if (c->ev.type != YAML_SCALAR_EVENT)
			return bad_at(c, c->ev.start_mark, "%s: the list holds a non-scalar",
				      d->name);
		if (apply_scalar(c, d))
			return -1;
	}
}

/*
 * The events around the keys: returns 1 at a key (a scalar in the mapping),
 * 0 at the end of the stream, -1 on an error.
 */
static int next_key(struct cfg *c, bool *in_map)
{
	for (;;) {
		if (next(c))
			return -1;
		switch (c->ev.type) {
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_START_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			continue;
		case YAML_STREAM_END_EVENT:
			return 0;
		case YAML_MAPPING_START_EVENT:
			if (*in_map)
				return bad_at(c, c->ev.start_mark,
					      "a mapping is not a value of any option");
			*in_map = true;
			continue;
		case YAML_MAPPING_END_EVENT:
			*in_map = false;
			continue;
		case YAML_SCALAR_EVENT:
			if (*in_map)
				return 1;
			if (!c->ev.data.scalar.length)
				continue; /* an empty document */
					  /* fall through */
		default:
			return bad_at(c, c->ev.start_mark,
				      "the config must be a mapping of option names");
		}
	}
}

int config_parse(struct batch_opts *o, const char *name, const unsigned char *buf, size_t size,
		 char *err, size_t err_size)
{
	struct cfg c = { .name = name, .o = o, .err = err, .err_size = err_size };
	bool in_map = false, seen[OPTS_MAX] = { false }; /* by index in convert_opts */
	int ret;

	if (!yaml_parser_initialize(&c.p)) {
		snprintf(err, err_size, "%s: out of memory", name);
		return -1;
	}
	yaml_parser_set_input_string(&c.p, buf, size);
	while ((ret = next_key(&c, &in_map)) == 1) {
		const char *key = (const char *)c.ev.data.scalar.value;
		const struct opt_def *d = option_find(key);

		/* --config and --help are the command line's, not keys. */
		if (!d || !d->set) {
			ret = bad_at(&c, c.ev.start_mark, "unknown key '%.127s'", key);
			break;
		}
		/* YAML leaves a repeated key undefined; taking the last would hide a mistake. */
		if (seen[d - convert_opts]) {
			ret = bad_at(&c, c.ev.start_mark, "'%s' is given twice", d->name);
			break;
		}
		seen[d - convert_opts] = true;
		if ((ret = read_value(&c, d)))
			break;
	}
	if (c.have_ev)
		yaml_event_delete(&c.ev);
	yaml_parser_delete(&c.p);
	return ret;
}

int config_load(struct batch_opts *o, const char *path, char *err, size_t err_size)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	int ret;

	if (!f) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			void *p = realloc(buf, cap = cap ? cap * 2 : 4096);

			if (!p) {
				free(buf);
				fclose(f);
				snprintf(err, err_size, "%s: out of memory", path);
				return -1;
			}
			buf = p;
		}
		n = fread(buf + len, 1, cap - len, f);
		if (!n)
			break;
		len += n;
		if (len > CONFIG_MAX_SIZE) {
			/* Not a config (/dev/zero, a binary named by mistake): stop reading. */
			free(buf);
			fclose(f);
			snprintf(err, err_size, "%s: larger than %d KiB: not a config file", path,
				 CONFIG_MAX_SIZE >> 10);
			return -1;
		}
	}
	fclose(f);
	ret = config_parse(o, path, buf, len, err, err_size);
	free(buf);
	return ret;
}
