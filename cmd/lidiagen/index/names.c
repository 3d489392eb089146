/* SPDX-License-Identifier: Apache-2.0 */
/* The words of the state's enums, each in one table (names.h). */
#include <string.h>

#include "names.h"

static const char *const part_kinds[PART_KINDS] = {
	[PART_BINARY] = "binary",
	[PART_DEBUG] = "debug",
	[PART_DWZ] = "dwz",
	[PART_GO] = "go",
};

static const char *const skip_reasons[SKIP_REASONS] = {
	[SKIP_NO_KEY] = "no build ID",
	[SKIP_SHORT_KEY] = "too short",
	[SKIP_NOT_LINKED] = "not linked",
	[SKIP_NOT_PROGRAM] = "not a program",
	[SKIP_DEGENERATE_KEY] = "degenerate build ID",
	[SKIP_MACHINE] = "architecture not read",
};

static const char *const input_kinds[] = {
	[INPUT_UNKNOWN] = "unread",
	[INPUT_ELF] = "elf",
	[INPUT_ARCHIVE] = "archive",
	[INPUT_OTHER] = "other",
};

static const char *const fallbacks[] = {
	[FALLBACK_NONE] = "none",
	[FALLBACK_GO] = "go",
	[FALLBACK_SHA256] = "sha256",
};

/* The index of s in names[first .. n), -1 when none (or s is NULL). */
static int find(const char *const *names, int first, int n, const char *s)
{
	for (int i = first; s && i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	return -1;
}

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

enum part_kind part_kind_of(const struct state_part *p)
{
	return p->dwz		    ? PART_DWZ
	       : p->info.debug_file ? PART_DEBUG
	       : p->info.has_go	    ? PART_GO
				    : PART_BINARY;
}

const char *part_kind_name(enum part_kind k)
{
	return part_kinds[k];
}

int part_kind_parse(const char *s)
{
	return find(part_kinds, 0, COUNT(part_kinds), s);
}

const char *skip_reason_name(enum skip_reason r)
{
	return skip_reasons[r];
}

int skip_reason_parse(const char *s)
{
	return find(skip_reasons, SKIP_NO_KEY, COUNT(skip_reasons), s);
}

const char *input_kind_name(enum input_kind k)
{
	return input_kinds[k];
}

int input_kind_parse(const char *s)
{
	return find(input_kinds, 0, COUNT(input_kinds), s);
}

const char *fallback_name(enum fallback_key f)
{
	return fallbacks[f];
}

int fallback_parse(const char *s)
{
	return find(fallbacks, 0, COUNT(fallbacks), s);
}
