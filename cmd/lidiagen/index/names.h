/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The words the manifest, the index writer and the index reader give the
 * state's enums: one table each, so that what one writes the other reads
 * back (doc/index.md, the MANIFEST section of doc/lidiagen.1).
 */
#ifndef LIDIAGEN_NAMES_H
#define LIDIAGEN_NAMES_H

#include "state.h"

/* What kind of image a part is: the index's "kind". */
enum part_kind { PART_BINARY, PART_DEBUG, PART_DWZ, PART_GO, PART_KINDS };

/* A dwz file, a debug file, a Go program, or another binary: in that order of precedence. */
enum part_kind part_kind_of(const struct state_part *p);

/* Each word, and back: -1 for a word that is none of them. */
const char *part_kind_name(enum part_kind k);
int part_kind_parse(const char *s);
const char *skip_reason_name(enum skip_reason r);
int skip_reason_parse(const char *s);
const char *input_kind_name(enum input_kind k);
int input_kind_parse(const char *s);
const char *fallback_name(enum fallback_key f);
int fallback_parse(const char *s);

#endif
