/* SPDX-License-Identifier: Apache-2.0 */
/* Identify: a DWARF package (.dwp) beside the images, which is not read (dwp.h says why). */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdio.h>
#include <sys/stat.h>

#include "dwarf_begin.h"
#include "dwp.h"
#include "internal.h"
#include "split_paths.h"

/* path + ".dwp" when it is a regular file. */
static bool dwp_at(const char *stem, size_t stem_len, char *path, size_t size)
{
	struct stat st;
	int n = snprintf(path, size, "%.*s.dwp", (int)stem_len, stem);

	return n > 0 && (size_t)n < size && !stat(path, &st) && S_ISREG(st.st_mode);
}

bool dwp_beside(const struct lidia_elf *const *images, size_t n, char *path, size_t size)
{
	static const char debug[] = ".debug";

	for (size_t i = 0; i < n; i++) {
		const char *name = images[i]->name;
		size_t len = strlen(name);

		if (dwp_at(name, len, path, size))
			return true;
		if (len > sizeof(debug) - 1 && !strcmp(name + len - (sizeof(debug) - 1), debug) &&
		    dwp_at(name, len - (sizeof(debug) - 1), path, size))
			return true;
	}
	return false;
}

/* The skeleton units of dw, and those libdw found no split unit of (not looked for: all). */
static void count_skeletons(Dwarf *dw, bool find_split, size_t *skeletons, size_t *missing)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t unit_type;

	*skeletons = *missing = 0;
	while (dwarf_get_units(dw, cu, &next, &version, &unit_type, &cudie,
			       find_split ? &subdie : NULL) == 0) {
		cu = next;
		if (unit_type != DW_UT_skeleton)
			continue;
		(*skeletons)++;
		/* Found, subdie is the split unit's DIE (as lib/dwarf reads it). */
		if (!find_split || dwarf_tag(&subdie) != DW_TAG_compile_unit)
			(*missing)++;
	}
}

void dwp_warn_unread(const struct lidia_elf *dwarf_image, const char *dwp_path, bool find_split)
{
	Dwarf *dw = dwarf_begin_image(dwarf_image->elf, NULL);
	size_t skeletons, missing;

	if (!dw)
		return;
	find_split = find_split && split_paths_safe(dw, dwarf_image->name, NULL);
	count_skeletons(dw, find_split, &skeletons, &missing);
	dwarf_end_image(dw);
	if (missing)
		lidia_log(LIDIA_LOG_WARN,
			  "%s: DWARF package '%s' is not read: %zu of %zu split units have "
			  "symbols and line tables, no inline frames: keep the .dwo files "
			  "where the build wrote them",
			  dwarf_image->name, dwp_path, missing, skeletons);
}
