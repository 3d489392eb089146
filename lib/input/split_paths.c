/* SPDX-License-Identifier: Apache-2.0 */
/* Identify: the paths libdw would open for split units, looked at first (split_paths.h). */
#include <dwarf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "split_paths.h"

/* A string attribute of die (the DWARF 5 name, else the GNU one), or NULL. */
static const char *die_string(Dwarf_Die *die, unsigned name, unsigned gnu_name)
{
	Dwarf_Attribute attr;

	if (dwarf_attr(die, name, &attr) || (gnu_name && dwarf_attr(die, gnu_name, &attr)))
		return dwarf_formstring(&attr);
	return NULL;
}

/* False (said) when path is there and no regular file: what libdw must not open. */
static bool path_ok(const char *image, const char *path)
{
	struct stat st;

	if (!stat(path, &st)) {
		if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
			return true; /* a directory fails libdw's open at once */
	} else if (errno == ENOENT || errno == ENOTDIR || errno == ENAMETOOLONG) {
		return true;
	}
	lidia_log(LIDIA_LOG_WARN,
		  "%s: split DWARF unit '%s' is not a regular file, not opened: its split units "
		  "are not read",
		  image, path);
	return false;
}

/* The paths libdw's __libdw_filepath() makes of (debugdir, comp_dir, name), each looked at. */
static bool skeleton_ok(const char *image, const char *debugdir, const char *comp_dir,
			const char *name)
{
	char path[PATH_MAX];

	if (name[0] == '/')
		return path_ok(image, name);
	if (comp_dir && comp_dir[0] == '/' &&
	    (size_t)snprintf(path, sizeof(path), "%s/%s", comp_dir, name) < sizeof(path) &&
	    !path_ok(image, path))
		return false;
	if (!debugdir)
		return true;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", debugdir, name) < sizeof(path) &&
	    !path_ok(image, path))
		return false;
	if (comp_dir && comp_dir[0] != '/' &&
	    (size_t)snprintf(path, sizeof(path), "%s/%s/%s", debugdir, comp_dir, name) <
		    sizeof(path) &&
	    !path_ok(image, path))
		return false;
	return true;
}

bool split_paths_safe(Dwarf *dw, const char *image, const char *debugdir)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t unit_type;

	while (dwarf_get_units(dw, cu, &next, &version, &unit_type, &cudie, NULL) == 0) {
		const char *name;

		cu = next;
		if (unit_type != DW_UT_skeleton)
			continue;
		name = die_string(&cudie, DW_AT_dwo_name, DW_AT_GNU_dwo_name);
		if (name &&
		    !skeleton_ok(image, debugdir, die_string(&cudie, DW_AT_comp_dir, 0), name))
			return false;
	}
	return true;
}
