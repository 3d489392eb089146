/* SPDX-License-Identifier: Apache-2.0 */
/*
 * For the unit tests of what reads a cgroup (test_cpus, test_memory): a
 * tree of files under a temporary root, laid out as the kernel lays out
 * /proc/self/cgroup ("self") and the cgroup mount ("fs/...").
 */
#ifndef LIDIA_CGROUP_TREE_H
#define LIDIA_CGROUP_TREE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char cg_root[64];

/* The file rel under the root, holding text, its directories made. */
static void cg_put(const char *rel, const char *text)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cg_root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + strlen(cg_root) + 1; (slash = strchr(p, '/')); p = slash + 1) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	if ((f = fopen(path, "w"))) {
		fputs(text, f);
		fclose(f);
	}
}

/* /proc/self/cgroup's text self written; fn(mount, self's path) asked. */
static uint64_t cg_ask(const char *self, uint64_t (*fn)(const char *mount, const char *self))
{
	char path[512], mount[512];

	cg_put("self", self);
	snprintf(path, sizeof(path), "%s/self", cg_root);
	snprintf(mount, sizeof(mount), "%s/fs", cg_root);
	return fn(mount, path);
}

static int cg_begin(void)
{
	snprintf(cg_root, sizeof(cg_root), "/tmp/lidia-cgroup.XXXXXX");
	return mkdtemp(cg_root) ? 0 : -1;
}

static void cg_end(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", cg_root);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", cg_root);
}

#endif
