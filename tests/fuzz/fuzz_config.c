/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: the YAML config (config_parse) on arbitrary bytes, into a
 * fresh batch_opts each time. Built with libFuzzer by `make fuzz`
 * (build/fuzz/fuzz_config) and with tests/fuzz/replay.c by `make test`,
 * which replays tests/fuzz/corpus/config/ (made by
 * tests/lib/batch_fuzz_corpus.py).
 *
 * The config and the options table live in the command (cmd/lidiagen/), not
 * in liblidia, and the Makefile links a fuzz target with the library only:
 * the two files are compiled in here, with the one symbol they need from the
 * rest of the command (verbosity), and libyaml loaded at run time.
 *
 * Besides "never crash", it asserts what config_parse promises: on success
 * the options are within their ranges; on failure the message starts with
 * "NAME:LINE:COLUMN: " (a line no further than the input's bytes go: YAML
 * has line breaks other than '\n', and UTF-16).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/*
 * libyaml is the command's dependency, not the library's, and the Makefile's
 * fuzz rules link the library's only: config.c's five libyaml calls go
 * through dlopen here, so the target builds whatever the link line holds.
 */
static struct {
	int (*parser_initialize)(yaml_parser_t *);
	void (*parser_set_input_string)(yaml_parser_t *, const unsigned char *, size_t);
	int (*parser_parse)(yaml_parser_t *, yaml_event_t *);
	void (*event_delete)(yaml_event_t *);
	void (*parser_delete)(yaml_parser_t *);
} yl;

static void yaml_load(void)
{
	void *h;

	if (yl.parser_initialize)
		return;
	h = dlopen("libyaml-0.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!h || !(*(void **)&yl.parser_set_input_string = dlsym(h, "yaml_parser_set_input_string")) ||
	    !(*(void **)&yl.parser_parse = dlsym(h, "yaml_parser_parse")) ||
	    !(*(void **)&yl.event_delete = dlsym(h, "yaml_event_delete")) ||
	    !(*(void **)&yl.parser_delete = dlsym(h, "yaml_parser_delete")) ||
	    !(*(void **)&yl.parser_initialize = dlsym(h, "yaml_parser_initialize"))) {
		fprintf(stderr, "fuzz_config: cannot load libyaml-0.so.2: %s\n", dlerror());
		exit(1);
	}
}

static int fz_parser_initialize(yaml_parser_t *p)
{
	yaml_load();
	return yl.parser_initialize(p);
}

static void fz_parser_set_input_string(yaml_parser_t *p, const unsigned char *in, size_t size)
{
	yl.parser_set_input_string(p, in, size);
}

static int fz_parser_parse(yaml_parser_t *p, yaml_event_t *ev)
{
	return yl.parser_parse(p, ev);
}

static void fz_event_delete(yaml_event_t *ev)
{
	yl.event_delete(ev);
}

static void fz_parser_delete(yaml_parser_t *p)
{
	yl.parser_delete(p);
}

#define yaml_parser_initialize fz_parser_initialize
#define yaml_parser_set_input_string fz_parser_set_input_string
#define yaml_parser_parse fz_parser_parse
#define yaml_event_delete fz_event_delete
#define yaml_parser_delete fz_parser_delete

/*
 * The strings a config sets live until the process ends (config.h), and a
 * value applied but not kept is not freed either: by design for a command
 * that reads one config, a leak for a fuzzer that reads millions. config.c's
 * strdup() and free() are tracked here, and what is left is freed after
 * each input, so that any other leak still shows.
 */
static void **owned;
static size_t nowned, cap_owned;

static char *fz_strdup(const char *s)
{
	char *p = strdup(s);

	if (p && nowned == cap_owned) {
		void **n = realloc(owned, (cap_owned = cap_owned ? 2 * cap_owned : 256) * sizeof(*owned));

		if (!n)
			abort();
		owned = n;
	}
	if (p)
		owned[nowned++] = p;
	return p;
}

static void fz_free(void *p)
{
	for (size_t i = 0; i < nowned; i++)
		if (owned[i] == p) {
			owned[i] = owned[--nowned];
			break;
		}
	free(p);
}

static void free_owned(void)
{
	while (nowned)
		free(owned[--nowned]);
}

#undef strdup
#undef free
#define strdup fz_strdup
#define free fz_free
#include "../../cmd/lidiagen/cli/config.c"
#include "../../cmd/lidiagen/cli/options.c"
#undef strdup
#undef free

int verbosity = 1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct batch_opts o;
	char err[512];

	options_defaults(&o);
	err[0] = '\0';
	if (config_parse(&o, "cfg", data, size, err, sizeof(err)) == 0) {
		if (o.ninclude > 64 || o.nexclude > 64 || o.ndebug_dirs > 64)
			abort();
		if (o.jobs > 256 || o.archive.max_depth > 16)
			abort();
		if (o.shard_n && (o.shard_k < 1 || o.shard_k > o.shard_n))
			abort();
		if (o.store.tenant && !lidia_store_tenant_valid(o.store.tenant))
			abort();
		if (o.store.key_template && !lidia_store_template_valid(o.store.key_template))
			abort();
		options_check(&o, err, sizeof(err));
	} else {
		unsigned long line, col;
		char *end;

		if (strncmp(err, "cfg:", 4))
			abort();
		/* "out of memory" has no position; everything else has LINE:COLUMN. */
		if (!strstr(err, "out of memory")) {
			line = strtoul(err + 4, &end, 10);
			if (*end != ':')
				abort();
			col = strtoul(end + 1, &end, 10);
			if (*end != ':' || line < 1 || col < 1 || line > size + 1)
				abort();
		}
	}
	verbosity = 1; /* quiet/verbose set it */
	free_owned();
	nkept = 0; /* config.c's list of kept values: they were freed just now */
	return 0;
}
