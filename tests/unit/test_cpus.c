/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The default -j (cmd/lidiagen/util/cpus.c): the cgroup CPU quota read from
 * cgroup v2's cpu.max along the cgroup's ancestors, and from v1's cfs quota
 * and period, in file trees made here as the kernel lays them out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../cmd/lidiagen/util/cpus.c"
#include "../../cmd/lidiagen/util/cgroup.c"
#include "cgroup_tree.h"
#include "unit.h"

static uint64_t ask_quota(const char *mount, const char *self)
{
	return cgroup_cpu_quota(mount, self);
}

static uint64_t quota(const char *self)
{
	return cg_ask(self, ask_quota);
}

int main(void)
{
	if (cg_begin())
		return 1;
	cg_put("fs/cpu.max", "max 100000\n");
	cg_put("fs/ci/cpu.max", "max 100000\n");
	cg_put("fs/ci/job/cpu.max", "150000 100000\n");
	CHECK(quota("0::/ci/job\n") == 2, "cgroup v2: 150000/100000 is 2 CPUs (rounded up)");
	CHECK(quota("0::/ci\n") == 0, "cgroup v2: max is no limit");
	cg_put("fs/ci/cpu.max", "100000 100000\n");
	CHECK(quota("0::/ci/job\n") == 1, "cgroup v2: an ancestor's lower quota applies");
	cg_put("fs/cpu.max", "400000 100000\n");
	CHECK(quota("0::/\n") == 4, "cgroup v2: a container's own cgroup is the mount's root");
	CHECK(quota("0::/gone/elsewhere\n") == 4,
	      "cgroup v2: a path not mounted here falls back to the root's quota");
	cg_put("fs/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
	cg_put("fs/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
	cg_put("fs/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "300000\n");
	cg_put("fs/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
	CHECK(quota("12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n") == 3,
	      "cgroup v1: cfs quota 300000 over period 100000 is 3 CPUs");
	CHECK(quota("12:cpuacct,cpu:/elsewhere\n") == 0,
	      "cgroup v1: no quota at the mount's root (-1) is no limit");
	CHECK(quota("12:cpuset:/docker/abc\n") == 0, "cgroup v1: cpuset is not the cpu controller");
	CHECK(quota("garbage\n::\n") == 0, "nonsense in /proc/self/cgroup is no limit");
	CHECK(usable_cpus() >= 1, "usable_cpus: at least one");
	cg_end();
	return unit_exit();
}
