/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cgroup a process is in, read as the kernel lays it out: what cpus.c
 * (the default -j) and memory.c (the default --max-memory) share.
 */
#ifndef LIDIAGEN_CGROUP_H
#define LIDIAGEN_CGROUP_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Call fn for each hierarchy of the process whose /proc/PID/cgroup text is
 * in self_cgroup ("ID:CONTROLLERS:PATH"): v2's one line ("0::PATH") with
 * controllers NULL, v1's with their comma-separated controllers; PATH "/"
 * is given as "". fn returns a limit (0: none); the lowest is returned.
 */
uint64_t cgroup_lowest(const char *self_cgroup,
		       uint64_t (*fn)(void *ctx, const char *controllers, const char *path),
		       void *ctx);

/* Whether v1 comma-separated controllers include name. */
bool cgroup_has_controller(const char *controllers, const char *name);

/*
 * The lowest value read by read_file from file in the cgroup directory
 * root + path and in each of its ancestors up to root (a limit applies to
 * the cgroups below it; in a container the mount's root is its own cgroup,
 * and a host path not mounted there falls back to it). 0: none.
 */
uint64_t cgroup_along(const char *root, const char *path, const char *file,
		      uint64_t (*read_file)(const char *path));

/* The lower of two limits, 0 being none. */
static inline uint64_t limit_lower(uint64_t a, uint64_t b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

#endif
