/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The YAML config (libyaml's event parser): a top-level mapping whose keys
 * are the long options of the command line and whose values are scalars,
 * or sequences of scalars for the repeatable options. Every error names the
 * file, line and column.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "config.h"
#include "options.h"

#define CONFIG_MAX_SIZE (1 << 20)

#define BAD_AT(mark, ...)                                                                    \
	do {                                                                                 \
		int n_ = snprintf(err, err_size, "%s:%zu:%zu: ", name, (mark).line + 1,      \
				  (mark).column + 1);                                        \
		if (n_ >= 0 && (size_t)n_ < err_size)                                        \
			snprintf(err + n_, err_size - (size_t)n_, __VA_ARGS__);              \
		goto fail;                                                                   \
	} while (0)

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

static const struct opt_def *find_opt(const char *key)
{
	for (size_t i = 0; i < nconvert_opts; i++)
		if (!strcmp(convert_opts[i].name, key))
			return &convert_opts[i];
	return NULL;
}

static bool next(yaml_parser_t *p, yaml_event_t *ev)
{
	return yaml_parser_parse(p, ev) != 0;
}

int config_parse(struct batch_opts *o, const char *name, const unsigned char *buf, size_t size,
		 char *err, size_t err_size)
{
	yaml_parser_t p;
	yaml_event_t ev;
	bool have_ev = false, in_map = false;
	bool seen[64] = { false }; /* by index in convert_opts */
	int ret = -1;

	if (!yaml_parser_initialize(&p)) {
		snprintf(err, err_size, "%s: out of memory", name);
		return -1;
	}
	yaml_parser_set_input_string(&p, buf, size);
	for (;;) {
		const struct opt_def *def;
		yaml_mark_t key_mark;
		char key[128], msg[256];

		if (have_ev)
			yaml_event_delete(&ev);
		if (!(have_ev = next(&p, &ev)))
			BAD_AT(p.problem_mark, "%s", p.problem ? p.problem : "invalid YAML");
		switch (ev.type) {
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_START_EVENT:
			continue;
		case YAML_STREAM_END_EVENT:
			ret = 0;
			goto fail;
		case YAML_DOCUMENT_END_EVENT:
			continue;
		case YAML_MAPPING_START_EVENT:
			if (in_map)
				BAD_AT(ev.start_mark, "a mapping is not a value of any option");
			in_map = true;
			continue;
		case YAML_MAPPING_END_EVENT:
			in_map = false;
			continue;
		case YAML_SCALAR_EVENT:
			if (!in_map) {
				if (!ev.data.scalar.length)
					continue; /* an empty document */
				BAD_AT(ev.start_mark, "the config must be a mapping of option names");
			}
			break;
		default:
			BAD_AT(ev.start_mark, "the config must be a mapping of option names");
		}

		/* A key, then its value: a scalar, or a sequence of scalars. */
		key_mark = ev.start_mark;
		snprintf(key, sizeof(key), "%s", (const char *)ev.data.scalar.value);
		def = find_opt(key);
		if (!def || !strcmp(key, "config")) {
			BAD_AT(key_mark, "unknown key '%s'", key);
		}
		/* YAML leaves a repeated key undefined; taking the last would hide a mistake. */
		if (seen[def - convert_opts])
			BAD_AT(key_mark, "'%s' is given twice", key);
		seen[def - convert_opts] = true;
		yaml_event_delete(&ev);
		if (!(have_ev = next(&p, &ev)))
			BAD_AT(p.problem_mark, "%s", p.problem ? p.problem : "invalid YAML");
		if (ev.type == YAML_SCALAR_EVENT) {
			char *v;

			/* A list option with no value ("include:") is an empty list. */
			if (def->kind == OPT_LIST && !ev.data.scalar.length)
				continue;
			v = keep((const char *)ev.data.scalar.value);
			if (!v || option_apply(o, key, v, false, NULL, msg, sizeof(msg)))
				BAD_AT(ev.start_mark, "%s", v ? msg : "out of memory");
		} else if (ev.type == YAML_SEQUENCE_START_EVENT && def->kind == OPT_LIST) {
			for (;;) {
				char *v;

				yaml_event_delete(&ev);
				if (!(have_ev = next(&p, &ev)))
					BAD_AT(p.problem_mark, "%s",
					       p.problem ? p.problem : "invalid YAML");
				if (ev.type == YAML_SEQUENCE_END_EVENT)
					break;
				if (ev.type != YAML_SCALAR_EVENT)
					BAD_AT(ev.start_mark, "%s: the list holds a non-scalar", key);
				v = keep((const char *)ev.data.scalar.value);
				if (!v || option_apply(o, key, v, false, NULL, msg, sizeof(msg)))
					BAD_AT(ev.start_mark, "%s", v ? msg : "out of memory");
			}
		} else {
			BAD_AT(ev.start_mark, "%s: %s", key,
			       def->kind == OPT_LIST ? "expects a value or a list of values"
						     : "expects one value");
		}
	}
fail:
	if (have_ev)
		yaml_event_delete(&ev);
	yaml_parser_delete(&p);
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
