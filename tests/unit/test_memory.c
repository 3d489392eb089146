/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The default --max-memory (cmd/lidiagen/util/memory.c): the cgroup memory limit
 * read from cgroup v2's memory.max along the cgroup's ancestors, and from
 * v1's memory.limit_in_bytes, in file trees made here as the kernel lays
 * them out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../cmd/lidiagen/util/memory.c"
#include "../../cmd/lidiagen/util/cgroup.c"
#include "cgroup_tree.h"
#include "unit.h"

static uint64_t ask_limit(const char *mount, const char *self)
{
	return cgroup_memory_limit(mount, self);
}

static uint64_t limit(const char *self)
{
	return cg_ask(self, ask_limit);
}

int main(void)
{
	bool cgroup;

	if (cg_begin())
		return 1;
	cg_put("fs/memory.max", "max\n");
	cg_put("fs/ci/memory.max", "max\n");
	cg_put("fs/ci/job/memory.max", "7516192768\n");
	CHECK(limit("0::/ci/job\n") == 7516192768ull, "cgroup v2: memory.max of 7 GiB");
	CHECK(limit("0::/ci\n") == 0, "cgroup v2: max is no limit");
	cg_put("fs/ci/memory.max", "1073741824\n");
	CHECK(limit("0::/ci/job\n") == 1073741824ull,
	      "cgroup v2: an ancestor's lower limit applies");
	cg_put("fs/memory.max", "2147483648\n");
	CHECK(limit("0::/\n") == 2147483648ull,
	      "cgroup v2: a container's own cgroup is the mount's root");
	CHECK(limit("0::/gone/elsewhere\n") == 2147483648ull,
	      "cgroup v2: a path not mounted here falls back to the root's limit");
	cg_put("fs/memory/memory.limit_in_bytes", "9223372036854771712\n");
	cg_put("fs/memory/docker/abc/memory.limit_in_bytes", "3221225472\n");
	CHECK(limit("12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n") == 3221225472ull,
	      "cgroup v1: memory.limit_in_bytes of 3 GiB");
	CHECK(limit("4:memory:/elsewhere\n") == 0,
	      "cgroup v1: the mount root's 2^63 - 4096 is no limit");
	CHECK(limit("12:cpuset:/docker/abc\n") == 0,
	      "cgroup v1: cpuset is not the memory controller");
	CHECK(limit("garbage\n::\n") == 0, "nonsense in /proc/self/cgroup is no limit");
	CHECK(usable_memory(&cgroup) >= 1 << 20, "usable_memory: some");
	cg_end();
	return unit_exit();
}
