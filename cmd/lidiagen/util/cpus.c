/* SPDX-License-Identifier: Apache-2.0 */
/* The CPUs this process may use (cpus.h). */
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "cpus.h"

/* The first line of a small file, without its newline; false when it cannot be read. */
static bool read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	bool ok = f && fgets(buf, (int)size, f);

	if (f)
		fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/* quota / period CPUs, rounded up; 0 for no limit (a quota of "max" or -1) or nonsense. */
static unsigned whole_cpus(long long quota, long long period)
{
	if (quota <= 0 || period <= 0)
		return 0;
	return (unsigned)((quota + period - 1) / period);
}

/* cgroup v2's cpu.max ("QUOTA PERIOD", or "max PERIOD"), in whole CPUs; 0: none. */
static uint64_t read_cpu_max(const char *file)
{
	long long quota, period;
	char line[64];

	if (!read_line(file, line, sizeof(line)) || sscanf(line, "%lld %lld", &quota, &period) != 2)
		return 0;
	return whole_cpus(quota, period);
}

/* cgroup v1: the cpu controller's cfs quota and period, where the process's cgroup is. */
static unsigned v1_quota(const char *root, const char *path)
{
	static const char *const mounts[] = { "cpu,cpuacct", "cpu" };
	char base[PATH_MAX], file[PATH_MAX + 32], line[64];

	for (size_t m = 0; m < sizeof(mounts) / sizeof(*mounts); m++) {
		/* In a container the host's path is not there: its cgroup is the mount's root. */
		for (int at_root = 0; at_root < 2; at_root++) {
			long long quota, period;

			snprintf(base, sizeof(base), "%s/%s%s", root, mounts[m],
				 at_root ? "" : path);
			snprintf(file, sizeof(file), "%s/cpu.cfs_quota_us", base);
			if (!read_line(file, line, sizeof(line)) ||
			    sscanf(line, "%lld", &quota) != 1)
				continue;
			snprintf(file, sizeof(file), "%s/cpu.cfs_period_us", base);
			if (!read_line(file, line, sizeof(line)) ||
			    sscanf(line, "%lld", &period) != 1)
				continue;
			return whole_cpus(quota, period);
		}
	}
	return 0;
}

/* cgroup_lowest()'s step: v2's cpu.max up the ancestors, or the v1 cpu controller's quota. */
static uint64_t hierarchy_quota(void *ctx, const char *controllers, const char *path)
{
	const char *root = ctx;

	if (!controllers)
		return cgroup_along(root, path, "cpu.max", read_cpu_max);
	return cgroup_has_controller(controllers, "cpu") ? v1_quota(root, path) : 0;
}

unsigned cgroup_cpu_quota(const char *root, const char *self_cgroup)
{
	return (unsigned)cgroup_lowest(self_cgroup, hierarchy_quota, (void *)root);
}

/* The CPUs of the affinity mask, however many CPUs the host has. */
static unsigned affinity_cpus(void)
{
	for (size_t n = 1024; n <= 1u << 20; n *= 2) {
		cpu_set_t *set = CPU_ALLOC(n);
		size_t size = CPU_ALLOC_SIZE(n);
		int count = 0;

		if (!set)
			break;
		if (!sched_getaffinity(0, size, set))
			count = CPU_COUNT_S(size, set);
		CPU_FREE(set);
		if (count > 0)
			return (unsigned)count;
	}
	return 0;
}

unsigned usable_cpus(void)
{
	unsigned cpus = affinity_cpus();
	unsigned quota = cgroup_cpu_quota("/sys/fs/cgroup", "/proc/self/cgroup");

	if (!cpus) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);

		cpus = online > 0 ? (unsigned)online : 1;
	}
	return quota && quota < cpus ? quota : cpus;
}
