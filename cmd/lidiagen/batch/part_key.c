/* SPDX-License-Identifier: Apache-2.0 */
/* An ELF image's key (part_key.h). */
#include <stdio.h>
#include <string.h>

#include "part_key.h"
#include "sha256.h"

static void go_key(const char *go_build_id, char *key, size_t key_size)
{
	size_t n = strlen(go_build_id);

	if (2 * n + 1 > key_size)
		n = (key_size - 1) / 2;
	for (size_t i = 0; i < n; i++)
		snprintf(key + 2 * i, 3, "%02x", (unsigned char)go_build_id[i]);
	key[2 * n] = '\0';
}

void image_key(enum fallback_key fallback, struct lidia_elf *e, const struct lidia_elf_info *info,
	       const void *data, size_t size, const char *path, struct image_key *out)
{
	char sha[65];

	*out = (struct image_key){ 0 };
	if (lidia_elf_build_id(e, out->build_id, sizeof(out->build_id)))
		out->build_id[0] = '\0';
	/* A degenerate build ID is shared by unrelated programs: as good as none. */
	out->degenerate = out->build_id[0] && lidia_build_id_degenerate(out->build_id);
	if (out->build_id[0] && !out->degenerate) {
		memcpy(out->key, out->build_id, sizeof(out->key));
		out->has_key = true;
	} else if (fallback == FALLBACK_GO && info->go_build_id[0]) {
		go_key(info->go_build_id, out->key, sizeof(out->key));
		out->has_key = true;
	} else if (fallback == FALLBACK_SHA256 && (data || path)) {
		if (data)
			sha256_hex(data, size, sha);
		else if (sha256_file(path, sha)) /* streamed; a regular file only */
			return;
		snprintf(out->key, sizeof(out->key), "%.40s", sha);
		out->has_key = true;
	}
}
