/* SPDX-License-Identifier: Apache-2.0 */
/* The convert command's options: one table, one place that applies each (see options.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"

const struct opt_def convert_opts[] = {
	{ "output", 'o', OPT_STRING, "DIR" },
	{ "recursive", 'r', OPT_FLAG, NULL },
	{ "follow-symlinks", 0, OPT_FLAG, NULL },
	{ "include", 0, OPT_LIST, "GLOB" },
	{ "exclude", 0, OPT_LIST, "GLOB" },
	{ "layout", 0, OPT_STRING, "NAME" },
	{ "layout-template", 0, OPT_STRING, "TEMPLATE" },
	{ "tenant", 0, OPT_STRING, "NAME" },
	{ "jobs", 'j', OPT_STRING, "N" },
	{ "force", 0, OPT_FLAG, NULL },
	{ "manifest", 0, OPT_STRING, "FILE" },
	{ "fallback-key", 0, OPT_STRING, "SCHEME" },
	{ "shard", 0, OPT_STRING, "K/N" },
	{ "symbols-only", 0, OPT_FLAG, NULL },
	{ "no-inlines", 0, OPT_FLAG, NULL },
	{ "no-lines", 0, OPT_FLAG, NULL },
	{ "no-files", 0, OPT_FLAG, NULL },
	{ "no-go", 0, OPT_FLAG, NULL },
	{ "no-dwarf", 0, OPT_FLAG, NULL },
	{ "no-demangle", 0, OPT_FLAG, NULL },
	{ "no-symtab", 0, OPT_FLAG, NULL },
	{ "no-dynsym", 0, OPT_FLAG, NULL },
	{ "debug-dir", 0, OPT_LIST, "DIR" },
	{ "no-debug-search", 0, OPT_FLAG, NULL },
	{ "max-member-size", 0, OPT_STRING, "SIZE" },
	{ "max-expansion", 0, OPT_STRING, "SIZE" },
	{ "max-depth", 0, OPT_STRING, "N" },
	{ "state", 0, OPT_STRING, "FILE" },
	{ "no-state", 0, OPT_FLAG, NULL },
	{ "quiet", 'q', OPT_FLAG, NULL },
	{ "verbose", 'v', OPT_FLAG, NULL },
};
const size_t nconvert_opts = sizeof(convert_opts) / sizeof(convert_opts[0]);

void options_defaults(struct batch_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->store = LIDIA_STORE_OPTS(.layout = LIDIA_LAYOUT_PYROSCOPE, .tenant = "anonymous");
	o->extract = LIDIA_EXTRACT_OPTS();
	o->limits = (struct lidia_archive_limits){ .max_member = BATCH_DEFAULT_MAX_MEMBER,
						   .max_total = BATCH_DEFAULT_MAX_TOTAL,
						   .max_depth = BATCH_DEFAULT_MAX_DEPTH };
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "off") || !strcmp(v, "0"))
		*out = false;
	else
		return -1;
	return 0;
}

/* A size with an optional K, M, G or T suffix (powers of 1024). */
static int parse_size(const char *v, uint64_t *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || v[0] == '-')
		return -1;
	switch (*end) {
	case 'T': case 't': n <<= 10; /* fall through */
	case 'G': case 'g': n <<= 10; /* fall through */
	case 'M': case 'm': n <<= 10; /* fall through */
	case 'K': case 'k': n <<= 10; end++; break;
	case '\0': break;
	default: return -1;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || n == 0)
		return -1;
	*out = n;
	return 0;
}

static int parse_uint(const char *v, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-' || n < min || n > max)
		return -1;
	*out = (unsigned)n;
	return 0;
}

static int add_to(const char **list, size_t *n, size_t max, const char *v)
{
	if (*n >= max)
		return -1;
	list[(*n)++] = v;
	return 0;
}

#define BAD(...) (snprintf(err, err_size, __VA_ARGS__), -1)

int option_apply(struct batch_opts *o, const char *name, const char *value, bool from_cli,
		 struct opt_seen *seen, char *err, size_t err_size)
{
	const struct opt_def *def = NULL;
	size_t idx = 0;
	bool on = true;

	for (; idx < nconvert_opts; idx++)
		if (!strcmp(convert_opts[idx].name, name)) {
			def = &convert_opts[idx];
			break;
		}
	if (!def)
		return BAD("unknown option '%s'", name);
	if (def->kind == OPT_FLAG && parse_bool(value, &on))
		return BAD("%s: '%s' is not true or false", name, value);
	if (def->kind == OPT_LIST && from_cli && seen && idx < 64 && !seen->list[idx]) {
		/* The command line's list replaces the config file's. */
		seen->list[idx] = true;
		if (!strcmp(name, "include"))
			o->ninclude = 0;
		else if (!strcmp(name, "exclude"))
			o->nexclude = 0;
		else if (!strcmp(name, "debug-dir"))
			o->ndebug_dirs = 0;
	}

	if (!strcmp(name, "output")) {
		o->out_dir = value;
	} else if (!strcmp(name, "recursive")) {
		o->recursive = on;
	} else if (!strcmp(name, "follow-symlinks")) {
		o->follow_symlinks = on;
	} else if (!strcmp(name, "include")) {
		if (add_to(o->include, &o->ninclude, 64, value))
			return BAD("include: more than 64 patterns");
	} else if (!strcmp(name, "exclude")) {
		if (add_to(o->exclude, &o->nexclude, 64, value))
			return BAD("exclude: more than 64 patterns");
	} else if (!strcmp(name, "layout")) {
		if (!strcmp(value, "template"))
			o->store.layout = LIDIA_LAYOUT_TEMPLATE;
		else if (lidia_layout_parse(value, &o->store.layout))
			return BAD("layout: unknown layout '%s' (pyroscope, debuginfod, flat, template)",
				   value);
	} else if (!strcmp(name, "layout-template")) {
		if (!lidia_template_valid(value))
			return BAD("layout-template: '%s' is not a relative path with {build_id} "
				   "(and maybe {tenant}) of letters, digits, '_', '-', '.'",
				   value);
		o->store.key_template = value;
		o->store.layout = LIDIA_LAYOUT_TEMPLATE;
	} else if (!strcmp(name, "tenant")) {
		if (!lidia_tenant_valid(value))
			return BAD("tenant: invalid tenant '%s' (letters, digits, '_', '-', '.', not first)",
				   value);
		o->store.tenant = value;
	} else if (!strcmp(name, "jobs")) {
		if (parse_uint(value, 1, 256, &o->jobs))
			return BAD("jobs: '%s' is not a number from 1 to 256", value);
	} else if (!strcmp(name, "force")) {
		o->force = on;
	} else if (!strcmp(name, "manifest")) {
		o->manifest = value;
	} else if (!strcmp(name, "fallback-key")) {
		if (!strcmp(value, "none"))
			o->fallback = FALLBACK_NONE;
		else if (!strcmp(value, "go"))
			o->fallback = FALLBACK_GO;
		else if (!strcmp(value, "sha256"))
			o->fallback = FALLBACK_SHA256;
		else
			return BAD("fallback-key: unknown scheme '%s' (none, go, sha256)", value);
	} else if (!strcmp(name, "shard")) {
		unsigned k, n;
		char c;

		if (sscanf(value, "%u/%u%c", &k, &n, &c) != 2 || n == 0 || k == 0 || k > n)
			return BAD("shard: '%s' is not K/N with 1 <= K <= N", value);
		o->shard_k = k;
		o->shard_n = n;
	} else if (!strcmp(name, "symbols-only")) {
		o->extract.no_inlines = o->extract.no_lines = o->extract.no_files = on;
	} else if (!strcmp(name, "no-inlines")) {
		o->extract.no_inlines = on;
	} else if (!strcmp(name, "no-lines")) {
		o->extract.no_lines = on;
	} else if (!strcmp(name, "no-files")) {
		o->extract.no_files = on;
	} else if (!strcmp(name, "no-go")) {
		o->extract.no_go = on;
	} else if (!strcmp(name, "no-dwarf")) {
		o->extract.no_dwarf = on;
	} else if (!strcmp(name, "no-demangle")) {
		o->extract.no_demangle = on;
	} else if (!strcmp(name, "no-symtab")) {
		o->extract.no_symtab = on;
	} else if (!strcmp(name, "no-dynsym")) {
		o->extract.no_dynsym = on;
	} else if (!strcmp(name, "debug-dir")) {
		if (add_to(o->debug_dirs, &o->ndebug_dirs, 64, value))
			return BAD("debug-dir: more than 64 directories");
	} else if (!strcmp(name, "no-debug-search")) {
		o->extract.no_debug_search = on;
	} else if (!strcmp(name, "max-member-size")) {
		if (parse_size(value, &o->limits.max_member))
			return BAD("max-member-size: '%s' is not a size (like 512M or 4G)", value);
	} else if (!strcmp(name, "max-expansion")) {
		if (parse_size(value, &o->limits.max_total))
			return BAD("max-expansion: '%s' is not a size (like 16G)", value);
	} else if (!strcmp(name, "max-depth")) {
		if (parse_uint(value, 0, 16, &o->limits.max_depth))
			return BAD("max-depth: '%s' is not a number from 0 to 16", value);
	} else if (!strcmp(name, "state")) {
		o->state = value;
	} else if (!strcmp(name, "no-state")) {
		o->no_state = on;
	} else if (!strcmp(name, "quiet")) {
		verbosity = on ? 0 : 1;
	} else if (!strcmp(name, "verbose")) {
		verbosity = on ? 2 : 1;
	}
	return 0;
}

int options_check(struct batch_opts *o, char *err, size_t err_size)
{
	if (o->store.layout == LIDIA_LAYOUT_TEMPLATE && !o->store.key_template)
		return BAD("--layout template needs --layout-template");
	o->debug_dirs[o->ndebug_dirs] = NULL;
	o->extract.debug_dirs = o->ndebug_dirs ? o->debug_dirs : NULL;
	return 0;
}
