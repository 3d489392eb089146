/* SPDX-License-Identifier: Apache-2.0 */
/* Messages, usage errors and verbosity (usage.h), as git's usage.c beside git.c. */
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lidia.h"
#include "usage.h"

int verbosity = 1;

static void vmsg(const char *kind, const char *what, const char *fmt, va_list ap)
{
	fputs("lidiagen: ", stderr);
	if (kind)
		fprintf(stderr, "%s: ", kind);
	if (what)
		fprintf(stderr, "%s: ", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void error(const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(NULL, what, fmt, ap);
	va_end(ap);
}

void warning(const char *what, const char *fmt, ...)
{
	va_list ap;

	if (verbosity < 1)
		return;
	va_start(ap, fmt);
	vmsg("warning", what, fmt, ap);
	va_end(ap);
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(NULL, NULL, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'lidiagen%s%s --help' for more information.\n", cmd ? " " : "",
		cmd ? cmd : "");
	return EXIT_USAGE;
}

/* ---- did you mean --------------------------------------------------------- */

/* Longer words are only compared by prefix: no one misspells 40 letters. */
#define SUGGEST_MAX_LEN 48

/* Optimal string alignment distance: insertions, deletions, substitutions, swaps of two. */
static unsigned edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	unsigned short d[SUGGEST_MAX_LEN + 1][SUGGEST_MAX_LEN + 1];

	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned short)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned short)j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			unsigned v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1u < v)
				v = d[i - 1][j] + 1u;
			if (d[i][j - 1] + 1u < v)
				v = d[i][j - 1] + 1u;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1u < v)
				v = d[i - 2][j - 2] + 1u;
			d[i][j] = (unsigned short)v;
		}
	}
	return d[la][lb];
}

const char *suggest(const char *word, size_t word_len, const char *const *names, size_t n)
{
	const char *best = NULL, *prefixed = NULL;
	unsigned best_d = ~0u;
	size_t ties = 0, nprefixed = 0;

	if (!word_len)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);

		if (len > word_len && !strncmp(names[i], word, word_len)) {
			prefixed = names[i];
			nprefixed++;
		}
		if (word_len > SUGGEST_MAX_LEN || len > SUGGEST_MAX_LEN)
			continue;
		unsigned d = edit_distance(word, word_len, names[i], len);

		if (d < best_d) {
			best_d = d;
			best = names[i];
			ties = 1;
		} else if (d == best_d) {
			ties++;
		}
	}
	if (nprefixed == 1 && word_len >= 2)
		return prefixed;
	if (best && best_d <= 2 && best_d < word_len && ties == 1)
		return best;
	return NULL;
}

/* ---- options getopt_long refused ------------------------------------------ */

#define MAX_LONGOPTS 128

static size_t long_names(const struct option *longopts, const char **names)
{
	size_t n = 0;

	while (longopts && longopts[n].name && n < MAX_LONGOPTS) {
		names[n] = longopts[n].name;
		n++;
	}
	return n;
}

static const char *name_of_val(const struct option *longopts, int val)
{
	for (size_t i = 0; longopts && longopts[i].name; i++)
		if (longopts[i].val == val)
			return longopts[i].name;
	return NULL;
}

/*
 * The argument holding the refused short option c: getopt_long has moved
 * optind past it if c was its last letter, not otherwise. A guess, used
 * only to see a long option written with one dash (-recursive).
 */
static const char *short_group(char **argv, int c)
{
	const char *prev = optind > 0 ? argv[optind - 1] : NULL;
	const char *cur = argv[optind];

	if (prev && prev[0] == '-' && prev[1] && prev[1] != '-' && prev[strlen(prev) - 1] == c)
		return prev;
	if (cur && cur[0] == '-' && cur[1] && cur[1] != '-' && strchr(cur + 1, c))
		return cur;
	return NULL;
}

/* An unknown or ambiguous --word[=value]: getopt_long leaves optopt 0. */
static int long_error(const char *cmd, const char **names, size_t n, const char *arg)
{
	const char *word = arg + 2, *s;
	size_t len = strcspn(word, "="), nprefixed = 0;
	char could[256] = "";

	for (size_t i = 0; i < n; i++) {
		if (len && !strncmp(names[i], word, len)) {
			size_t used = strlen(could);

			if (nprefixed++ < 4)
				snprintf(could + used, sizeof(could) - used, "%s'--%s'",
					 used ? ", " : "", names[i]);
			else if (nprefixed == 5)
				snprintf(could + used, sizeof(could) - used, ", ...");
		}
	}
	if (nprefixed >= 2)
		return usage_error(cmd, "option '--%.*s' is ambiguous: %s", (int)len, word, could);
	s = suggest(word, len, names, n);
	if (s)
		return usage_error(cmd, "unknown option '--%.*s'; did you mean '--%s'?", (int)len,
				   word, s);
	return usage_error(cmd, "unknown option '--%.*s'", (int)len, word);
}

/* The error of an option getopt_long refused, returning ret ('?' or ':'). */
static int option_error(const char *cmd, const struct option *longopts, char **argv, int ret)
{
	const char *names[MAX_LONGOPTS], *arg = optind > 0 ? argv[optind - 1] : "", *name, *group;
	size_t n = long_names(longopts, names);
	bool long_arg = !strncmp(arg, "--", 2);

	if (ret == ':') {
		name = name_of_val(longopts, optopt);
		if (long_arg && name)
			return usage_error(cmd, "option '--%s' needs a value", name);
		return usage_error(cmd, "option '-%c' needs a value", optopt);
	}
	if (!optopt && long_arg)
		return long_error(cmd, names, n, arg);
	name = name_of_val(longopts, optopt);
	if (name && long_arg && strchr(arg, '='))
		return usage_error(cmd, "option '--%s' takes no value", name);
	if (optopt > 0 && optopt < 256) {
		group = short_group(argv, optopt);
		if (group && strlen(group + 1) >= 3 &&
		    (name = suggest(group + 1, strcspn(group + 1, "="), names, n)))
			return usage_error(cmd,
					   "unknown option '-%c' (in '%s'); did you mean '--%s'?",
					   optopt, group, name);
		return usage_error(cmd, "unknown option '-%c'", optopt);
	}
	return usage_error(cmd, "unknown option '%s'", arg);
}

/*
 * The argument that held the long option getopt_long just took: the one
 * before its value when the value came apart (optarg is then that whole
 * argument), else the last one taken.
 */
static const char *long_arg_taken(char **argv, const struct option *o)
{
	if (o->has_arg != no_argument && optarg && optind >= 2 && optarg == argv[optind - 1])
		return argv[optind - 2];
	return argv[optind - 1];
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	char quiet[256]; /* shortopts after ':', so that a missing value returns ':' */
	const char *arg;
	int opt, li = -1;
	size_t len;

	snprintf(quiet, sizeof(quiet), "%s%s", shortopts[0] == ':' ? "" : ":", shortopts);
	opterr = 0; /* getopt says nothing: option_error() does, as "lidiagen: ..." */
	opt = getopt_long(argc, argv, quiet, longopts, &li);
	if (opt == '?' || opt == ':')
		return option_error(cmd, longopts, argv, opt), OPT_USAGE_ERROR;
	if (opt == -1 || li < 0)
		return opt;
	arg = long_arg_taken(argv, &longopts[li]);
	len = strcspn(arg + 2, "=");
	if (!strncmp(arg, "--", 2) && len != strlen(longopts[li].name)) {
		const char *names[MAX_LONGOPTS];
		size_t n = long_names(longopts, names);

		return long_error(cmd, names, n, arg), OPT_USAGE_ERROR;
	}
	return opt;
}

/* ---- the library's log ------------------------------------------------------ */

static void log_cb(enum lidia_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == LIDIA_LOG_WARN && verbosity >= 1)
		fprintf(stderr, "lidiagen: warning: %s\n", msg);
	else if ((level == LIDIA_LOG_INFO && verbosity >= 2) || verbosity >= 3)
		fprintf(stderr, "lidiagen: %s\n", msg);
}

void install_log(void)
{
	lidia_set_log(log_cb, NULL);
}
