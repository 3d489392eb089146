/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The default -j (cmd/lidiagen/cpus.c): the cgroup CPU quota read from
 * cgroup v2's cpu.max along the cgroup's ancestors, and from v1's cfs quota
 * and period, in file trees made here as the kernel lays them out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../cmd/lidiagen/cpus.c"
#include "unit.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[512], dir[512], *slash;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + strlen(root) + 1; (slash = strchr(p, '/')); p = slash + 1) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static unsigned quota(const char *self)
{
	char path[512], mount[512];

	put("self", self);
	snprintf(path, sizeof(path), "%s/self", root);
	snprintf(mount, sizeof(mount), "%s/fs", root);
	return cgroup_cpu_quota(mount, path);
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/lidia-cpus.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	put("fs/cpu.max", "max 100000\n");
	put("fs/ci/cpu.max", "max 100000\n");
	put("fs/ci/job/cpu.max", "150000 100000\n");
	CHECK(quota("0::/ci/job\n") == 2, "cgroup v2: 150000/100000 is 2 CPUs (rounded up)");
	CHECK(quota("0::/ci\n") == 0, "cgroup v2: max is no limit");
	put("fs/ci/cpu.max", "100000 100000\n");
	CHECK(quota("0::/ci/job\n") == 1, "cgroup v2: an ancestor's lower quota applies");
	put("fs/cpu.max", "400000 100000\n");
	CHECK(quota("0::/\n") == 4, "cgroup v2: a container's own cgroup is the mount's root");
	CHECK(quota("0::/gone/elsewhere\n") == 4,
	      "cgroup v2: a path not mounted here falls back to the root's quota");
	put("fs/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
	put("fs/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
	put("fs/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "300000\n");
	put("fs/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
	CHECK(quota("12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n") == 3,
	      "cgroup v1: cfs quota 300000 over period 100000 is 3 CPUs");
	CHECK(quota("12:cpuacct,cpu:/elsewhere\n") == 0,
	      "cgroup v1: no quota at the mount's root (-1) is no limit");
	CHECK(quota("12:cpuset:/docker/abc\n") == 0, "cgroup v1: cpuset is not the cpu controller");
	CHECK(quota("garbage\n::\n") == 0, "nonsense in /proc/self/cgroup is no limit");
	CHECK(usable_cpus() >= 1, "usable_cpus: at least one");
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
		if (system(cmd))
			return 1;
	}
	return unit_exit();
}
