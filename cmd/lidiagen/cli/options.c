/* SPDX-License-Identifier: Apache-2.0 */
/* The convert command's options: one table, and the setters its rows name (see options.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usage.h"
#include "options.h"

/* "NAME: " and the reason, in err; returns -1. */
__attribute__((format(printf, 4, 5))) static int bad(const struct opt_def *d, char *err,
						     size_t err_size, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, err_size, "%s: ", d->name);

	if (n >= 0 && (size_t)n < err_size) {
		va_start(ap, fmt);
		vsnprintf(err + n, err_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* The field of o at d->off (and d->off_count), as a type. */
#define FIELD(o, d, type) ((type *)(void *)((char *)(o) + (d)->off))
#define COUNT(o, d) ((size_t *)(void *)((char *)(o) + (d)->off_count))

/* ---- the generic setters, for rows that only store a value ---------------- */

static int set_bool(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
		    char *err, size_t err_size)
{
	*FIELD(o, d, bool) = on;
	return 0;
}

static int set_string(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
		      char *err, size_t err_size)
{
	*FIELD(o, d, const char *) = v;
	return 0;
}

static int set_list(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
		    char *err, size_t err_size)
{
	size_t *n = COUNT(o, d);

	if (*n >= d->max)
		return bad(d, err, err_size, "more than %u %s", d->max, d->what);
	FIELD(o, d, const char *)[(*n)++] = v;
	return 0;
}

/* A size with an optional K, M, G or T suffix (powers of 1024), and B. */
static int set_size(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
		    char *err, size_t err_size)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || v[0] == '-')
		goto fail;
	switch (*end) {
	case 'T':
	case 't':
		n <<= 10; /* fall through */
	case 'G':
	case 'g':
		n <<= 10; /* fall through */
	case 'M':
	case 'm':
		n <<= 10; /* fall through */
	case 'K':
	case 'k':
		n <<= 10;
		end++;
		break;
	case '\0':
		break;
	default:
		goto fail;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || n == 0)
		goto fail;
	*FIELD(o, d, uint64_t) = n;
	return 0;
fail:
	return bad(d, err, err_size, "'%s' is not a size (like %s)", v, d->what);
}

/* A number from d->min to d->max, into *out. */
static int parse_uint(const struct opt_def *d, const char *v, unsigned *out, char *err,
		      size_t err_size)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-' || n < d->min || n > d->max)
		return bad(d, err, err_size, "'%s' is not a number from %u to %u", v, d->min,
			   d->max);
	*out = (unsigned)n;
	return 0;
}

static int set_uint(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
		    char *err, size_t err_size)
{
	return parse_uint(d, v, FIELD(o, d, unsigned), err, err_size);
}

/* ---- the setters of rows that check or set more --------------------------- */

static int set_layout(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
		      char *err, size_t err_size)
{
	if (!strcmp(v, "template"))
		o->store.layout = LIDIA_LAYOUT_TEMPLATE;
	else if (lidia_store_layout_parse(v, &o->store.layout))
		return bad(d, err, err_size,
			   "unknown layout '%s' (pyroscope, debuginfod, flat, template)", v);
	return 0;
}

static int set_layout_template(struct batch_opts *o, const struct opt_def *d, const char *v,
			       bool on, char *err, size_t err_size)
{
	size_t at, len;
	const char *why = lidia_store_template_problem(v, &at, &len);

	/* Checked whole here, so that no output fails on it at run time. */
	if (why)
		return len && len < strlen(v)
			       ? bad(d, err, err_size, "'%s': '%.*s': %s", v, (int)len, v + at, why)
			       : bad(d, err, err_size, "'%s': %s", v, why);
	o->store.key_template = v;
	o->store.layout = LIDIA_LAYOUT_TEMPLATE;
	return 0;
}

static int set_tenant(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
		      char *err, size_t err_size)
{
	if (!lidia_store_tenant_valid(v))
		return bad(d, err, err_size,
			   "invalid tenant '%s' (letters, digits, '_', '-', '.', not first)", v);
	o->store.tenant = v;
	return 0;
}

static int set_fallback_key(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
			    char *err, size_t err_size)
{
	static const char *const names[] = {
		[FALLBACK_NONE] = "none",
		[FALLBACK_GO] = "go",
		[FALLBACK_SHA256] = "sha256",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(v, names[i])) {
			o->fallback = (enum fallback_key)i;
			return 0;
		}
	return bad(d, err, err_size, "unknown scheme '%s' (none, go, sha256)", v);
}

static int set_shard_by(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
			char *err, size_t err_size)
{
	if (strcmp(v, "key") && strcmp(v, "input"))
		return bad(d, err, err_size, "unknown way '%s' (key, input)", v);
	o->shard_by_input = !strcmp(v, "input");
	o->shard_by_set = true;
	return 0;
}

static int set_shard(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
		     char *err, size_t err_size)
{
	unsigned k, n;
	char c;

	if (sscanf(v, "%u/%u%c", &k, &n, &c) != 2 || n == 0 || k == 0 || k > n)
		return bad(d, err, err_size, "'%s' is not K/N with 1 <= K <= N", v);
	o->shard_k = k;
	o->shard_n = n;
	return 0;
}

/* --max-depth 0 opens no archive inside an archive: the library's -1 (its 0 is its default). */
static int set_max_depth(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
			 char *err, size_t err_size)
{
	unsigned n;

	if (parse_uint(d, v, &n, err, err_size))
		return -1;
	o->archive.max_depth = n ? (int)n : -1;
	return 0;
}

/* OLD=NEW, OLD not empty (NEW may be): one more rule of the list. */
static int set_prefix_map(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
			  char *err, size_t err_size)
{
	const char *eq = strchr(v, '=');

	if (!eq || eq == v)
		return bad(d, err, err_size, "'%s' is not OLD=NEW (OLD not empty)", v);
	return set_list(o, d, v, on, err, err_size);
}

static int set_symbols_only(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
			    char *err, size_t err_size)
{
	o->extract.no_inlines = o->extract.no_lines = o->extract.no_files = on;
	return 0;
}

static int set_quiet(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
		     char *err, size_t err_size)
{
	verbosity = on ? 0 : 1;
	return 0;
}

static int set_verbose(struct batch_opts *o, const struct opt_def *d, const char *v, bool on,
		       char *err, size_t err_size)
{
	/* -v: a line per output; twice (-vv), the internals too (threads, memory, the library's). */
	verbosity = !on ? 1 : verbosity >= 2 ? 3 : 2;
	return 0;
}

/* ---- the table ------------------------------------------------------------ */

#define OFF(field) offsetof(struct batch_opts, field)

/* A flag that sets a bool field of struct batch_opts. */
#define ROW_BOOL(s, l, field, sec, h)                                                              \
	{                                                                                          \
		.name = l, .short_name = s, .kind = OPT_FLAG, .section = sec, .help = h,           \
		.set = set_bool, .off = OFF(field)                                                 \
	}
/* A string kept as given (it lives as long as argv or the config). */
#define ROW_STRING(s, l, a, field, sec, h)                                                         \
	{                                                                                          \
		.name = l, .short_name = s, .kind = OPT_VALUE, .arg = a, .section = sec,           \
		.help = h, .set = set_string, .off = OFF(field)                                    \
	}
/* Repeatable: up to n strings in the array field, counted by count. */
#define ROW_LIST(l, a, field, count, n, noun, sec, h)                                              \
	{                                                                                          \
		.name = l, .kind = OPT_LIST, .arg = a, .section = sec, .help = h, .set = set_list, \
		.off = OFF(field), .off_count = OFF(count), .max = n, .what = noun                 \
	}
/* The same, with its own setter (which checks each element, then stores it with set_list). */
#define ROW_LIST_FN(l, a, fn, field, count, n, noun, sec, h)                                       \
	{                                                                                          \
		.name = l, .kind = OPT_LIST, .arg = a, .section = sec, .help = h, .set = fn,       \
		.off = OFF(field), .off_count = OFF(count), .max = n, .what = noun                 \
	}
/* A uint64_t size with a K, M, G or T suffix. */
#define ROW_SIZE(l, a, field, like, sec, h)                                                        \
	{                                                                                          \
		.name = l, .kind = OPT_VALUE, .arg = a, .section = sec, .help = h,                 \
		.set = set_size, .off = OFF(field), .what = like                                   \
	}
/* An unsigned from lo to hi. */
#define ROW_UINT(s, l, a, field, lo, hi, sec, h)                                                   \
	{                                                                                          \
		.name = l, .short_name = s, .kind = OPT_VALUE, .arg = a, .section = sec,           \
		.help = h, .set = set_uint, .off = OFF(field), .min = lo, .max = hi                \
	}
/* An unsigned from lo to hi that its own function stores. */
#define ROW_UINT_FN(s, l, a, fn, lo, hi, sec, h)                                                   \
	{                                                                                          \
		.name = l, .short_name = s, .kind = OPT_VALUE, .arg = a, .section = sec,           \
		.help = h, .set = fn, .min = lo, .max = hi                                         \
	}
/* A flag, or an option with an argument, that its own function sets. */
#define ROW_FLAG_FN(s, l, fn, sec, h)                                                              \
	{                                                                                          \
		.name = l, .short_name = s, .kind = OPT_FLAG, .section = sec, .help = h, .set = fn \
	}
#define ROW_VALUE_FN(s, l, a, fn, sec, h)                                                          \
	{                                                                                          \
		.name = l, .short_name = s, .kind = OPT_VALUE, .arg = a, .section = sec,           \
		.help = h, .set = fn                                                               \
	}

#define OUTPUT OPT_SEC_OUTPUT
#define S3 OPT_SEC_S3
#define INPUTS OPT_SEC_INPUTS
#define CONTENT OPT_SEC_CONTENT
#define RUNNING OPT_SEC_RUNNING

/* In the order of --help. */
const struct opt_def convert_opts[] = {
	ROW_STRING('o', "output", "DIR", out_dir, OUTPUT,
		   "write under DIR ('-': the one file to stdout), or\n"
		   "publish to s3://BUCKET[/PREFIX] (see Publishing)"),
	ROW_VALUE_FN(0, "layout", "NAME", set_layout, OUTPUT,
		     "pyroscope (default): DIR/symbolizer/TENANT/BUILD-ID\n"
		     "debuginfod: DIR/buildid/BUILD-ID/lidia\n"
		     "flat: DIR/BUILD-ID.lidia"),
	ROW_VALUE_FN(0, "layout-template", "T", set_layout_template, OUTPUT,
		     "DIR/T, T with {build_id} and {tenant}"),
	ROW_VALUE_FN(0, "tenant", "NAME", set_tenant, OUTPUT,
		     "tenant of the pyroscope layout (default anonymous)"),
	ROW_STRING(0, "manifest", "FILE", manifest, OUTPUT,
		   "JSON Lines: one line per build ID (inputs, counts, sha256);\n"
		   "outside DIR"),
	ROW_BOOL(0, "force", force, OUTPUT,
		 "rewrite every output (default: keep an output that\n"
		 "has as much as the inputs give)"),
	ROW_STRING(0, "state", "FILE", state, OUTPUT,
		   "remember the inputs in FILE, so that a re-run reads\n"
		   "only those that changed (keep it outside DIR)"),
	ROW_BOOL(0, "no-state", no_state, OUTPUT, "do not (undoes a config file's state)"),
	ROW_BOOL(0, "dry-run", dry_run, OUTPUT,
		 "say what would be written, replaced and kept (by\n"
		 "prediction, reading images only where it cannot\n"
		 "decide), change nothing"),
	ROW_VALUE_FN(0, "fallback-key", "SCHEME", set_fallback_key, OUTPUT,
		     "key for ELF files without a GNU build ID (or with\n"
		     "one of all zeros or 0xff): none (default: skip\n"
		     "them), go (hex of the Go build ID),\n"
		     "sha256 (the first 40 hex digits of the file's SHA-256)"),

	ROW_STRING(0, "region", "NAME", s3.region, S3,
		   "the bucket's region (default: AWS_REGION,\n"
		   "AWS_DEFAULT_REGION, the profile's, us-east-1)"),
	ROW_STRING(0, "endpoint-url", "URL", s3.endpoint_url, S3,
		   "an S3-compatible service (MinIO, Ceph, GCS...);\n"
		   "default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL,\n"
		   "the profile's, else AWS"),
	ROW_STRING(0, "profile", "NAME", s3.profile, S3,
		   "the AWS profile for credentials and settings\n"
		   "(default: AWS_PROFILE, default)"),
	ROW_BOOL(0, "path-style", s3.path_style, S3,
		 "https://HOST/BUCKET/KEY addresses (custom\n"
		 "endpoints have them anyway)"),
	ROW_UINT(0, "connect-timeout", "SECONDS", s3.connect_timeout, 1, 3600, S3,
		 "give up connecting after SECONDS (default 10;\n"
		 "as the AWS CLI's cli-connect-timeout)"),
	ROW_UINT(0, "read-timeout", "SECONDS", s3.read_timeout, 1, 3600, S3,
		 "cut a request that moves no byte for SECONDS\n"
		 "(default 30, or LIDIAGEN_S3_TIMEOUT; as the AWS CLI's\n"
		 "cli-read-timeout); a whole request may take\n"
		 "connect + 2 x read seconds, + 1 s per 32 KiB sent"),
	ROW_BOOL('r', "recursive", recursive, INPUTS, "descend into directories"),
	ROW_STRING(0, "index", "INDEX", index, INPUTS,
		   "the inputs and what they hold, from INDEX (lidiagen\n"
		   "index), instead of PATH...: with --shard, only the\n"
		   "inputs of the shard's build IDs are opened"),
	ROW_BOOL(0, "follow-symlinks", follow_symlinks, INPUTS,
		 "follow symbolic links found under directories"),
	ROW_LIST("include", "GLOB", include, ninclude, 64, "patterns", INPUTS,
		 "only paths (and archive members) matching GLOB"),
	ROW_LIST("exclude", "GLOB", exclude, nexclude, 64, "patterns", INPUTS,
		 "not paths (and archive members) matching GLOB"),
	ROW_SIZE("max-member-size", "SZ", archive.max_member, "512M or 4G", INPUTS,
		 "largest archive member read (default 4G)"),
	ROW_SIZE("max-expansion", "SZ", archive.max_total, "16G", INPUTS,
		 "most bytes read from one archive (default 64G)"),
	ROW_UINT_FN(0, "max-depth", "N", set_max_depth, 0, 16, INPUTS,
		    "archives inside archives (default 4)"),
	ROW_STRING(0, "platform", "OS/ARCH", platform, INPUTS,
		   "of a container image (docker save, OCI layout),\n"
		   "the manifest of this platform alone (linux/arm64);\n"
		   "default: every platform's"),

	ROW_FLAG_FN(0, "symbols-only", set_symbols_only, CONTENT,
		    "names and extents only: no inline frames, lines or\n"
		    "files (what Pyroscope's own writer gives)"),
	ROW_BOOL(0, "no-inlines", extract.no_inlines, CONTENT, "leave inline frames out"),
	ROW_BOOL(0, "no-lines", extract.no_lines, CONTENT, "leave line tables out"),
	ROW_BOOL(0, "no-files", extract.no_files, CONTENT, "leave file names out"),
	ROW_BOOL(0, "no-go", extract.no_go, CONTENT, "do not read Go's pclntab"),
	ROW_BOOL(0, "no-dwarf", extract.no_dwarf, CONTENT,
		 "do not read DWARF (symbols and Go only)"),
	ROW_BOOL(0, "no-demangle", extract.no_demangle, CONTENT,
		 "keep C++, Rust and D names mangled"),
	ROW_BOOL(0, "no-symtab", extract.no_symtab, CONTENT, "leave .symtab symbols out"),
	ROW_BOOL(0, "no-dynsym", extract.no_dynsym, CONTENT, "leave .dynsym symbols out"),
	/* One slot of debug_dirs is left for options_check's NULL. */
	ROW_LIST("debug-dir", "DIR", debug_dirs, ndebug_dirs, 64, "directories", CONTENT,
		 "where to look for separate debug files (by build ID,\n"
		 ".gnu_debuglink) and dwz files (repeatable; default\n"
		 "/usr/lib/debug)"),
	ROW_BOOL(0, "no-debug-search", extract.no_debug_search, CONTENT,
		 "use only the files given"),
	ROW_BOOL(0, "debuginfod", debuginfod, CONTENT,
		 "a build ID whose inputs give no DWARF (nor a debug\n"
		 "file found): its debug file from the debuginfod\n"
		 "servers of DEBUGINFOD_URLS (at most -j at once)"),
	ROW_LIST("debuginfod-url", "URL", debuginfod_urls, ndebuginfod_urls, 16, "servers", CONTENT,
		 "a debuginfod server, instead of DEBUGINFOD_URLS's\n"
		 "(repeatable; implies --debuginfod)"),
	ROW_LIST("build-id", "ID", build_ids, nbuild_ids, 64, "build IDs", INPUTS,
		 "convert build ID ID from the debuginfod servers alone:\n"
		 "its executable and debug file fetched (repeatable;\n"
		 "implies --debuginfod; no PATH then)"),
	ROW_STRING(0, "build-ids", "FILE", build_ids_file, INPUTS,
		   "as --build-id, for each build ID in FILE (one a line,\n"
		   "'#' comments; '-': standard input)"),
	ROW_BOOL(0, "allow-dynsym-only", allow_dynsym_only, CONTENT,
		 "write a build ID whose only symbols are the exported\n"
		 "ones (.dynsym): by default it is not written, so that\n"
		 "the profiler still looks for its debug file elsewhere"),
	/* One slot of prefix_map is left for options_check's NULL. */
	ROW_LIST_FN("prefix-map", "OLD=NEW", set_prefix_map, prefix_map, nprefix_map, 64, "maps",
		    CONTENT,
		    "write file names that begin with OLD with NEW\n"
		    "instead (repeatable; the first that matches wins)"),

	ROW_UINT('j', "jobs", "N", jobs, 1, 256, RUNNING,
		 "convert N inputs at a time (default: the CPUs its affinity\n"
		 "and cgroup quota allow);\n"
		 "a big input alone is read on the threads free"),
	ROW_SIZE("max-memory", "SZ", max_memory, "2G or 512M", RUNNING,
		 "the memory the run may hold (default: half of the\n"
		 "cgroup's limit, or of the physical memory): work\n"
		 "waits for it; big archive members are spilled to\n"
		 "an unnamed file in $TMPDIR, not held on the heap"),
	ROW_VALUE_FN(0, "shard", "K/N", set_shard, RUNNING,
		     "convert only the build IDs of shard K of N"),
	ROW_VALUE_FN(0, "shard-by", "HOW", set_shard_by, RUNNING,
		     "input (default with --index): whole sets of inputs\n"
		     "(a package and its -dbg) per shard, balanced by\n"
		     "size, each input read by one shard; key (default\n"
		     "without): by build ID, each shard reads every input\n"
		     "holding one of its build IDs"),
	ROW_BOOL(0, "strict", strict, RUNNING,
		 "warnings fail the run (exit 1), and so does a run\n"
		 "that leaves no output for any build ID"),
	/* The command line's own: read before the others (cmd_convert.c), not a YAML key. */
	ROW_VALUE_FN(0, "config", "FILE", NULL, RUNNING,
		     "read options from a YAML file (the command line wins)"),
	ROW_FLAG_FN('q', "quiet", set_quiet, RUNNING, "print errors and the summary only"),
	ROW_FLAG_FN('v', "verbose", set_verbose, RUNNING,
		    "say more: a line per output, skipped files,\n"
		    "a bucket's settings (never a secret);\n"
		    "twice (-vv), the internals too: threads, memory"),
	ROW_FLAG_FN('h', "help", NULL, RUNNING, "show this help"),
};
const size_t nconvert_opts = sizeof(convert_opts) / sizeof(convert_opts[0]);

_Static_assert(sizeof(convert_opts) / sizeof(convert_opts[0]) <= OPTS_MAX,
	       "more options than OPTS_MAX");

#undef OUTPUT
#undef S3
#undef INPUTS
#undef CONTENT
#undef RUNNING

static const char *const section_titles[] = {
	[OPT_SEC_OUTPUT] = "Output",
	[OPT_SEC_S3] =
		"Publishing to S3 (-o s3://BUCKET[/PREFIX]; credentials as the AWS CLI finds them)",
	[OPT_SEC_INPUTS] = "Inputs",
	[OPT_SEC_CONTENT] = "What goes in",
	[OPT_SEC_RUNNING] = "Running",
};

/* The column the help text of every row starts at. */
#define HELP_COLUMN 28

void options_help(FILE *f)
{
	int section = -1;

	for (size_t i = 0; i < nconvert_opts; i++) {
		const struct opt_def *d = &convert_opts[i];
		const char *line = d->help, *nl;
		char left[64];

		if ((int)d->section != section) {
			section = (int)d->section;
			fprintf(f, "\n%s:\n", section_titles[section]);
		}
		snprintf(left, sizeof(left), "  %c%c%c --%s%s%s", d->short_name ? '-' : ' ',
			 d->short_name ? d->short_name : ' ', d->short_name ? ',' : ' ', d->name,
			 d->arg ? " " : "", d->arg ? d->arg : "");
		fprintf(f, "%-*s ", HELP_COLUMN - 1, left);
		while ((nl = strchr(line, '\n'))) {
			fprintf(f, "%.*s\n%*s", (int)(nl - line), line, HELP_COLUMN, "");
			line = nl + 1;
		}
		fprintf(f, "%s\n", line);
	}
}

const struct opt_def *option_find(const char *name)
{
	for (size_t i = 0; i < nconvert_opts; i++)
		if (!strcmp(convert_opts[i].name, name))
			return &convert_opts[i];
	return NULL;
}

void options_defaults(struct batch_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->store = LIDIA_STORE_OPTS(.layout = LIDIA_LAYOUT_PYROSCOPE, .tenant = "anonymous");
	o->extract = LIDIA_EXTRACT_OPTS();
	o->archive = LIDIA_ARCHIVE_OPTS(.max_member = LIDIA_ARCHIVE_MAX_MEMBER,
					.max_total = LIDIA_ARCHIVE_MAX_TOTAL,
					.max_depth = LIDIA_ARCHIVE_MAX_DEPTH);
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

int option_apply(struct batch_opts *o, const struct opt_def *d, const char *value,
		 struct opt_seen *seen, char *err, size_t err_size)
{
	size_t idx = (size_t)(d - convert_opts);
	bool on = true;

	if (!d->set) { /* --config, --help: the command line's own */
		snprintf(err, err_size, "unknown option '%s'", d->name);
		return -1;
	}
	if (d->kind == OPT_FLAG && parse_bool(value, &on))
		return bad(d, err, err_size, "'%s' is not true or false", value);
	if (d->kind == OPT_LIST && seen && !seen->list[idx]) {
		/* The command line's list replaces the config file's. */
		seen->list[idx] = true;
		*COUNT(o, d) = 0;
	}
	return d->set(o, d, d->kind == OPT_FLAG ? NULL : value, on, err, err_size);
}

/* Whether the variable holds more than blanks (an empty one counts as unset). */
static bool env_has_words(const char *name)
{
	const char *v = getenv(name);

	return v && v[strspn(v, " \t")];
}

int options_check(struct batch_opts *o, char *err, size_t err_size)
{
	if (o->store.layout == LIDIA_LAYOUT_TEMPLATE && !o->store.key_template) {
		snprintf(err, err_size, "--layout template needs --layout-template");
		return -1;
	}
	o->debug_dirs[o->ndebug_dirs] = NULL;
	o->extract.debug_dirs = o->ndebug_dirs ? o->debug_dirs : NULL;
	o->debuginfod |= o->ndebuginfod_urls > 0 || o->nbuild_ids || o->build_ids_file;
	if (o->debuginfod && !o->ndebuginfod_urls && !env_has_words("DEBUGINFOD_URLS")) {
		snprintf(err, err_size,
			 "--debuginfod: no server: set DEBUGINFOD_URLS or give --debuginfod-url "
			 "URL");
		return -1;
	}
	o->prefix_map[o->nprefix_map] = NULL;
	o->extract.prefix_map = o->nprefix_map ? o->prefix_map : NULL;
	/*
	 * With an index, whole inputs per shard: each is read by one shard, and
	 * the outputs are one run's all the same (inputs that share a build ID
	 * go to one shard). Without one, every shard reads every input anyway:
	 * by key, as --shard always did.
	 */
	if (!o->shard_by_set)
		o->shard_by_input = o->index != NULL;
	return 0;
}
