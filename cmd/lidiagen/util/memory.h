/* SPDX-License-Identifier: Apache-2.0 */
/* The memory this process may use: the default of --max-memory. */
#ifndef LIDIAGEN_MEMORY_H
#define LIDIAGEN_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The bytes the process may keep resident: the physical memory, at most
 * its cgroup's limit (cgroup v2 memory.max, or v1 memory.limit_in_bytes,
 * the lowest of the cgroup and its ancestors). *cgroup tells whether the
 * cgroup's limit is the one (may be NULL). A CI container given 7 GB on a
 * 256 GB host gets 7 GB.
 */
uint64_t usable_memory(bool *cgroup);

/*
 * The cgroup memory limit of the process whose /proc/PID/cgroup text is
 * in self_cgroup, the cgroup file systems mounted at root; 0 when there is
 * none or it cannot be read (tests give files of theirs).
 */
uint64_t cgroup_memory_limit(const char *root, const char *self_cgroup);

#endif
