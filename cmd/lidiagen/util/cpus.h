/* SPDX-License-Identifier: Apache-2.0 */
/* The CPUs this process may use: the default of -j. */
#ifndef LIDIAGEN_CPUS_H
#define LIDIAGEN_CPUS_H

/*
 * How many CPUs the process may keep busy: those of its affinity mask
 * (taskset, a container's cpuset), at most its cgroup's CPU quota rounded
 * up (cgroup v2 cpu.max, or v1's cfs quota and period, the lowest of the
 * cgroup and its ancestors); at least 1. A CI container limited to 2 CPUs
 * on a 64-core host gets 2, not 64.
 */
unsigned usable_cpus(void);

/*
 * The cgroup CPU quota, rounded up to whole CPUs, of the process whose
 * /proc/PID/cgroup text is in self_cgroup, with the cgroup file systems
 * mounted at root (/sys/fs/cgroup); 0 when there is none or it cannot be
 * read. usable_cpus() reads the process's own; tests give files of theirs.
 */
unsigned cgroup_cpu_quota(const char *root, const char *self_cgroup);

#endif
