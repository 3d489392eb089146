/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What became of a group's output (enum verdict, batch_internal.h), in
 * words, in one place: its status, its -v line, and the manifest's status
 * and reason. keep.c and convert.c decide; nothing else words a decision.
 */
#include <stdio.h>
#include <string.h>

#include "batch_internal.h"

static const struct {
	enum status status;
	const char *tree, *bucket; /* the manifest's status */
	const char *reason;	   /* the manifest's reason, NULL: none */
} verdicts[V_COUNT] = {
	[V_WRITTEN] = { ST_CONVERTED, "converted", "uploaded", NULL },
	[V_REPLACED] = { ST_REPLACED, "replaced", "replaced", NULL },
	[V_SAME] = { ST_KEPT, "kept", "exists", NULL },
	[V_KEPT] = { ST_KEPT, "kept", "exists", NULL },
	[V_KEPT_MORE] = { ST_KEPT, "kept", "exists", NULL },
	[V_RACED_MORE] = { ST_KEPT, "kept", "exists", "a stronger object was published meanwhile" },
	[V_RACED_EQUAL] = { ST_KEPT, "kept", "exists",
			    "an object holding as much was published meanwhile" },
	[V_NOTHING] = { ST_NOTHING, "skipped", "skipped", "nothing to symbolize" },
	[V_DYNSYM_ONLY] = { ST_DYNSYM_ONLY, "skipped", "skipped", "only .dynsym" },
	[V_MIXED] = { ST_MIXED, "skipped", "skipped", "debug file laid out apart" },
	[V_WOULD_WRITE] = { ST_PLANNED, "would-write", "would-upload", NULL },
	[V_WOULD_REPLACE] = { ST_PLANNED, "would-replace", "would-replace", NULL },
};

const char *verdict_status(const struct batch *b, const struct group *g)
{
	return b->o->bucket ? verdicts[g->verdict].bucket : verdicts[g->verdict].tree;
}

const char *verdict_reason(const struct group *g)
{
	return verdicts[g->verdict].reason;
}

/* What was there, for the lines that replace it: not ours, not readable, or what it held. */
static const char *there_word(const struct batch *b, const struct group *g)
{
	if (!g->there.valid)
		return b->o->bucket ? "not written by lidiagen" : "no valid lidia file";
	return level_name[g->there.level];
}

/* The note of an output now at the key: what it replaced, or why it stayed. */
static void written_note(const struct batch *b, const struct group *g, char *buf, size_t size)
{
	switch (g->verdict) {
	case V_REPLACED:
		if (!g->there.valid)
			snprintf(buf, size, " (%s)",
				 b->o->bucket ? "not written by lidiagen"
					      : "it was no valid lidia file");
		else
			snprintf(buf, size, "%s",
				 g->there.level < g->level ? " (it had less)" : "");
		break;
	case V_SAME:
		snprintf(buf, size, " (the same bytes, not rewritten)");
		break;
	case V_RACED_MORE:
	case V_RACED_EQUAL:
		snprintf(buf, size, " (%s)", verdicts[g->verdict].reason);
		break;
	default:
		buf[0] = '\0';
	}
}

/*
 * "VERB OUT/KEY <- binary, debug file (counts)NOTE": what the inputs made,
 * now at the key. The verb is the manifest's status ("wrote": a tree's new one).
 */
static void written_line(const struct batch *b, struct group *g)
{
	const char *main = b->state.parts[g->main].path;
	const char *bin = g->bin >= 0 ? b->state.parts[g->bin].path : NULL;

	/* The debug file fetched is the second image, after the one the inputs gave. */
	if (g->fetched_from) {
		bin = bin ? bin : main;
		main = g->fetched_from;
	}
	const char *verb =
		g->verdict == V_WRITTEN && !b->o->bucket ? "wrote" : verdict_status(b, g);
	char note[160];

	written_note(b, g, note, sizeof(note));
	group_message(
		g, false, "%s %s/%s <- %s%s%s (%zu functions, %zu inline ranges, %zu line rows)%s",
		verb, b->o->out_dir, g->out_key, bin ? bin : main, bin ? ", " : "", bin ? main : "",
		g->counts.functions, g->counts.inline_ranges, g->counts.line_rows, note);
}

/* The group's -v line: none for an output to stdout, nor for nothing written (a warning says). */
static void say(const struct batch *b, struct group *g)
{
	const char *out = b->o->out_dir, *key = g->out_key;
	const char *kept = b->o->bucket ? "exists" : "kept";

	switch (g->verdict) {
	case V_KEPT:
		group_message(g, false, "%s %s/%s: it has %s already", kept, out, key,
			      level_name[g->there.level]);
		break;
	case V_KEPT_MORE:
		group_message(g, false, "%s %s/%s: it has %s, the inputs only %s", kept, out, key,
			      level_name[g->there.level], level_name[g->inputs]);
		break;
	case V_WOULD_WRITE:
		group_message(g, false, "would %s %s/%s (%s)", b->o->bucket ? "upload" : "write",
			      out, key, level_name[g->inputs]);
		break;
	case V_WOULD_REPLACE:
		group_message(g, false, "would replace %s/%s (%s): %s%s", out, key,
			      level_name[g->inputs], g->there.valid ? "it has " : "",
			      there_word(b, g));
		break;
	case V_NOTHING:
	case V_DYNSYM_ONLY:
	case V_MIXED:
	case V_NONE:
	case V_COUNT:
		break;
	default:
		if (strcmp(out, "-"))
			written_line(b, g);
	}
}

void decide(struct batch *b, struct group *g, enum verdict v, enum level inputs)
{
	g->verdict = v;
	g->inputs = inputs;
	g->status = verdicts[v].status;
	say(b, g);
}
