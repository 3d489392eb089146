/* SPDX-License-Identifier: Apache-2.0 */
/* The memory this process may use (memory.h), found the way cpus.c finds the CPUs. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
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

/* cgroup_lowest()'s step: v2's memory.max, or the v1 memory controller's limit. */
static uint64_t hierarchy_limit(void *ctx, const char *controllers, const char *path)
{
	const char *root = ctx;
	char v1[PATH_MAX];

	if (!controllers)
		return cgroup_along(root, path, "memory.max", read_limit);
	if (!cgroup_has_controller(controllers, "memory"))
		return 0;
	snprintf(v1, sizeof(v1), "%s/memory", root);
	return cgroup_along(v1, path, "memory.limit_in_bytes", read_limit);
}

uint64_t cgroup_memory_limit(const char *root, const char *self_cgroup)
{
	return cgroup_lowest(self_cgroup, hierarchy_limit, (void *)root);
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
