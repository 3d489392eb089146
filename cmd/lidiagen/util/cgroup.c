/* SPDX-License-Identifier: Apache-2.0 */
/* The cgroup a process is in (cgroup.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"

uint64_t cgroup_lowest(const char *self_cgroup,
		       uint64_t (*fn)(void *ctx, const char *controllers, const char *path),
		       void *ctx)
{
	FILE *f = fopen(self_cgroup, "re");
	char *line = NULL;
	size_t cap = 0;
	uint64_t limit = 0;

	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		char *controllers = strchr(line, ':'), *path;

		line[strcspn(line, "\n")] = '\0';
		if (!controllers || !(path = strchr(controllers + 1, ':')))
			continue;
		*path++ = '\0';
		*controllers++ = '\0';
		if (!strcmp(path, "/"))
			path = "";
		if (!strcmp(line, "0") && !*controllers)
			limit = limit_lower(limit, fn(ctx, NULL, path));
		else if (*controllers)
			limit = limit_lower(limit, fn(ctx, controllers, path));
	}
	free(line);
	fclose(f);
	return limit;
}

bool cgroup_has_controller(const char *controllers, const char *name)
{
	size_t n, len = strlen(name);

	for (const char *c = controllers; *c; c += n + (c[n] == ',')) {
		n = strcspn(c, ",");
		if (n == len && !strncmp(c, name, len))
			return true;
	}
	return false;
}

uint64_t cgroup_along(const char *root, const char *path, const char *file,
		      uint64_t (*read_file)(const char *path))
{
	char dir[PATH_MAX], name[PATH_MAX + 32];
	uint64_t limit = 0;
	char *slash;

	if ((size_t)snprintf(dir, sizeof(dir), "%s%s", root, path) >= sizeof(dir))
		return 0;
	for (;;) {
		snprintf(name, sizeof(name), "%s/%s", dir, file);
		limit = limit_lower(limit, read_file(name));
		if (strlen(dir) <= strlen(root) || !(slash = strrchr(dir, '/')))
			break;
		*slash = '\0';
	}
	return limit;
}
