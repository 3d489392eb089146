/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz target: the index reader (index_load_stream, cmd/lidiagen/index/index_read.c)
 * on arbitrary bytes. Built with libFuzzer by `make fuzz` and with
 * tests/fuzz/replay.c by `make test`, which replays tests/fuzz/corpus/index/
 * (seeds written by hand from tests/t_shard_index.sh's indexes and hostile
 * lines).
 *
 * The reader lives in the command, not in liblidia: its files are compiled
 * in here, as fuzz_config.c does with the config's.
 *
 * Besides "never crash", it asserts what the reader promises: on failure the
 * message starts with "NAME:LINE: "; on success every input path is free of
 * '..' elements, every part's path starts with its input's, and every key is
 * a valid build ID.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cmd/lidiagen/util/json.c"
#include "../../cmd/lidiagen/index/names.c"
#include "../../cmd/lidiagen/index/state.c"
#include "../../cmd/lidiagen/util/problems.c"
#include "../../cmd/lidiagen/util/tempfile.c"
#include "../../cmd/lidiagen/index/index_read.c"

static void check(const struct index *ix)
{
	const struct state *s = &ix->st;

	for (size_t i = 0; i < s->ninputs; i++)
		if (!path_ok(s->inputs[i].path))
			abort();
	for (size_t k = 0; k < s->nparts; k++) {
		const struct state_part *p = &s->parts[k];
		const char *in = s->inputs[p->input].path;

		if (p->input >= s->ninputs || strncmp(p->path, in, strlen(in)) ||
		    !lidia_store_build_id_valid(p->key))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "r");
	struct index ix;
	char err[1024];

	if (!f)
		return 0;
	index_init(&ix);
	if (index_load_stream(&ix, f, "fuzz", err, sizeof(err))) {
		if (strncmp(err, "fuzz:", 5))
			abort();
	} else {
		check(&ix);
	}
	index_release(&ix);
	fclose(f);
	return 0;
}
