/* SPDX-License-Identifier: Apache-2.0 */
/* The memory this process may use (memory.h), found the way cpus.c finds the CPUs. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memory.h"

/* A limit from a file of one number ("max", or v1's near 2^63 for none: 0). */
static uint64_t read_limit(const char *path)
{
	FILE *f = fopen(path, "re");
	unsigned long long n = 0;
	char line[64];

	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f) || sscanf(line, "%llu", &n) != 1 || n >= 1ull << 62)
		n = 0;
	fclose(f);
	return n;
}

/* The lower of two limits, 0 being none. */
static uint64_t lower(uint64_t a, uint64_t b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

/* The lowest of file in the cgroup dir root+path and its ancestors, up to root. */
static uint64_t along(const char *root, const char *path, const char *file)
{
	char dir[PATH_MAX], name[PATH_MAX + 32];
	uint64_t limit = 0;
	char *slash;

	if ((size_t)snprintf(dir, sizeof(dir), "%s%s", root, path) >= sizeof(dir))
		return 0;
	for (;;) {
		snprintf(name, sizeof(name), "%s/%s", dir, file);
		limit = lower(limit, read_limit(name));
		/* Up to the mount point, which holds the namespace's own cgroup in a container. */
		if (strlen(dir) <= strlen(root) || !(slash = strrchr(dir, '/')))
			break;
		*slash = '\0';
	}
	return limit;
}

/* Whether a v1 hierarchy's comma-separated controllers include "memory". */
static bool has_memory_controller(const char *controllers)
{
	size_t n;

	for (const char *c = controllers; *c; c += n + (c[n] == ',')) {
		n = strcspn(c, ",");
		if (n == 6 && !strncmp(c, "memory", 6))
			return true;
	}
	return false;
}

uint64_t cgroup_memory_limit(const char *root, const char *self_cgroup)
{
	FILE *f = fopen(self_cgroup, "re");
	char *line = NULL, v1[PATH_MAX];
	size_t cap = 0;
	uint64_t limit = 0;

	if (!f)
		return 0;
	/* "ID:CONTROLLERS:PATH": v2's one line is "0::PATH"; v1 has one per hierarchy. */
	while (getline(&line, &cap, f) > 0) {
		char *controllers = strchr(line, ':'), *path;

		line[strcspn(line, "\n")] = '\0';
		if (!controllers || !(path = strchr(controllers + 1, ':')))
			continue;
		*path++ = '\0';
		*controllers++ = '\0';
		if (!strcmp(path, "/"))
			path = "";
		if (!strcmp(line, "0") && !*controllers) {
			limit = lower(limit, along(root, path, "memory.max"));
		} else if (has_memory_controller(controllers)) {
			snprintf(v1, sizeof(v1), "%s/memory", root);
			/* In a container the host's path is not there: the mount's root is its own. */
			limit = lower(limit, along(v1, path, "memory.limit_in_bytes"));
		}
	}
	free(line);
	fclose(f);
	return limit;
}

uint64_t usable_memory(bool *cgroup)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t phys = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
	uint64_t limit = cgroup_memory_limit("/sys/fs/cgroup", "/proc/self/cgroup");
	bool by_cgroup = limit && (!phys || limit < phys);

	if (cgroup)
		*cgroup = by_cgroup;
	return by_cgroup ? limit : phys ? phys : 1ull << 30;
}
