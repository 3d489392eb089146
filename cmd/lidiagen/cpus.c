/* SPDX-License-Identifier: Apache-2.0 */
/* The CPUs this process may use (cpus.h). */
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The lower of two limits, 0 being none. */
static unsigned lower(unsigned a, unsigned b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

/* cgroup v2: cpu.max ("QUOTA PERIOD", or "max PERIOD") of dir and each of its ancestors. */
static unsigned v2_quota(const char *root, const char *path)
{
	char dir[PATH_MAX], file[PATH_MAX + 16], line[64];
	unsigned limit = 0;

	if ((size_t)snprintf(dir, sizeof(dir), "%s%s", root, path) >= sizeof(dir))
		return 0;
	for (;;) {
		long long quota, period;
		char *slash;

		snprintf(file, sizeof(file), "%s/cpu.max", dir);
		if (read_line(file, line, sizeof(line)) &&
		    sscanf(line, "%lld %lld", &quota, &period) == 2)
			limit = lower(limit, whole_cpus(quota, period));
		/* Up to the mount point, which holds the namespace's own cgroup in a container. */
		if (strlen(dir) <= strlen(root) || !(slash = strrchr(dir, '/')))
			break;
		*slash = '\0';
	}
	return limit;
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

/* Whether a v1 hierarchy's comma-separated controllers include "cpu". */
static bool has_cpu_controller(const char *controllers)
{
	size_t n;

	for (const char *c = controllers; *c; c += n + (c[n] == ',')) {
		n = strcspn(c, ",");
		if (n == 3 && !strncmp(c, "cpu", 3))
			return true;
	}
	return false;
}

unsigned cgroup_cpu_quota(const char *root, const char *self_cgroup)
{
	FILE *f = fopen(self_cgroup, "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned limit = 0;

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
		if (!strcmp(line, "0") && !*controllers)
			limit = lower(limit, v2_quota(root, strcmp(path, "/") ? path : ""));
		else if (has_cpu_controller(controllers))
			limit = lower(limit, v1_quota(root, path));
	}
	free(line);
	fclose(f);
	return limit;
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
