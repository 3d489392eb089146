/* SPDX-License-Identifier: Apache-2.0 */
/* Write: what extractors may do to a builder beyond the public API. */
#ifndef LIDIA_BUILDER_H
#define LIDIA_BUILDER_H

#include "lidia.h"

/*
 * Drop the ranges added after the first nranges (and their lines), so an
 * extractor can take back what a malformed function added. Not after finalize.
 */
void builder_truncate(struct lidia_builder *b, size_t nranges);

/*
 * Make room for n more ranges, a new name each, and string bytes at once
 * (an estimate: it may still grow).
 */
int builder_reserve(struct lidia_builder *b, size_t ranges, size_t string_bytes);

/* Threads finalize may use (the extraction's: lidia_extract_opts.threads); 0 or 1: one. */
void builder_use_threads(struct lidia_builder *b, unsigned threads);

/*
 * Add src's ranges to dst after dst's own, in src's order, as if each had
 * been given to lidia_builder_add() on dst: the same strings interned in the
 * same order, dst's prefix rules applied to the file names. So ranges made
 * on other threads, each into a builder of its own, join dst with the bytes
 * that adding them there would have given. src (without prefix rules) is
 * left as it was.
 */
int builder_append(struct lidia_builder *dst, const struct lidia_builder *src);

#endif
