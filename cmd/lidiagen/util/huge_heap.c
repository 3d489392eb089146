/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Support: glibc's malloc on transparent huge pages for a conversion.
 *
 * A conversion fills hundreds of MiB of fresh memory (libceph-common's debug
 * file: 450 MiB), and each first touch of a 4 KiB page is a page fault; on
 * a virtual machine a fault costs several microseconds, more than the bytes
 * it makes room for. Our own big buffers already ask for huge pages
 * (lib/base/huge_pages.h); the rest is malloc()'s, whose heap glibc puts on
 * huge pages itself when its tunable glibc.malloc.hugetlb is 1 and the
 * kernel's THP mode is "madvise" (Debian's default). Measured side by side
 * (bench/README.md, "glibc's malloc on huge pages"): libceph-common 0.79x
 * CPU, ld.gold about 0.9x, libLLVM-16's symbols 0.97x (a short run, of
 * which executing again is a few ms), peak RSS 2% more at most.
 *
 * glibc reads its tunables only as a process starts, from GLIBC_TUNABLES,
 * and has no call to set one later: the process executes itself again,
 * once (about 4 ms), with the tunable added. That process puts the
 * variable back as it was, so that nothing it starts inherits our choice,
 * and takes back its name: executing /proc/self/exe names a process "exe",
 * which pgrep, top and the OOM killer's log would show instead of ours.
 * A user's own glibc.malloc.hugetlb (0 to keep malloc as it is) wins.
 */
#include <fcntl.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <sys/auxv.h>
#endif

#include "huge_heap.h"

#define TUNABLES "GLIBC_TUNABLES"
#define HUGETLB "glibc.malloc.hugetlb"
/* Set in the process executed again: "u" when TUNABLES was unset, else "s" and its value. */
#define BEFORE "LIDIAGEN_TUNABLES_BEFORE"
/* Set there too: the process's name (its comm, at most 15 bytes) before. */
#define NAME_BEFORE "LIDIAGEN_NAME_BEFORE"

/* A malloc() arena made this big is advised whole: glibc's most (HEAP_MAX_SIZE on 64-bit). */
#define ARENA_PAD ((size_t)64 << 20)

/* Whether this process was executed again with the tunable. */
static bool tuned;

/* Sanitizers bring a malloc of their own, which the tunable does not touch. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define OWN_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
	__has_feature(memory_sanitizer)
#define OWN_MALLOC 1
#endif
#endif

/* Whether the kernel's transparent huge pages are in "madvise" mode, the one glibc acts in. */
static bool thp_madvise(void)
{
	char buf[128];
	ssize_t n;
	int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, "[madvise]") != NULL;
}

/* In the process executed again: GLIBC_TUNABLES and the name as they were before. */
static void put_back(const char *before)
{
	const char *name = getenv(NAME_BEFORE);

	if (name && name[0])
		prctl(PR_SET_NAME, name, 0, 0, 0);
	if (before[0] == 's')
		setenv(TUNABLES, before + 1, 1);
	else
		unsetenv(TUNABLES);
	unsetenv(BEFORE);
	unsetenv(NAME_BEFORE);
}

/* Whether executing again with the tunable could change anything. */
static bool worth_it(const char *tunables)
{
#if !defined(__GLIBC__) || defined(OWN_MALLOC)
	(void)tunables;
	(void)thp_madvise;
	return false;
#else
	const char *preload = getenv("LD_PRELOAD");

	if (getauxval(AT_SECURE))
		return false; /* glibc ignores the variable there */
	/*
	 * Started as "ld.so lidiagen ARGS" (a hermetic toolchain's way): there
	 * /proc/self/exe is the loader, which would run our first argument as
	 * the program. Only then has the kernel loaded no interpreter (AT_BASE 0).
	 */
	if (!getauxval(AT_BASE))
		return false;
	if (preload && preload[0])
		return false; /* an allocator or a tool (valgrind) preloaded: leave it be */
	if (tunables && strstr(tunables, HUGETLB))
		return false; /* the user's choice */
	return thp_madvise();
#endif
}

void huge_heap_setup(char **argv)
{
	const char *tunables = getenv(TUNABLES), *before = getenv(BEFORE);
	char *value, *mark, name[16] = "";
	size_t n;

	if (before) {
		put_back(before);
		tuned = true;
		return;
	}
	if (!worth_it(tunables))
		return;
	n = tunables ? strlen(tunables) : 0;
	value = malloc(n + sizeof(":" HUGETLB "=1"));
	mark = malloc(n + 2);
	if (!value || !mark)
		goto out;
	strcpy(value, tunables ? tunables : "");
	strcat(value, n ? ":" HUGETLB "=1" : HUGETLB "=1");
	mark[0] = tunables ? 's' : 'u';
	strcpy(mark + 1, tunables ? tunables : "");
	prctl(PR_GET_NAME, name, 0, 0, 0);
	if (setenv(BEFORE, mark, 1) || setenv(NAME_BEFORE, name, 1) || setenv(TUNABLES, value, 1))
		goto undo;
	execv("/proc/self/exe", argv);
	/* Not executed (no /proc, a sandbox): go on as we are. */
undo:
	put_back(mark);
out:
	free(value);
	free(mark);
}

/*
 * glibc advises a thread's arena only as far as the arena is made at first,
 * not as it grows (libceph-common at -j 2: 33k faults against 10.6k at
 * -j 1). Padding each growth by 64 MiB (M_TOP_PAD) makes a worker's arena
 * whole at once, and all of it advised: only what is touched is resident,
 * but a 2 MiB page at a time, so one thread keeps its own malloc() as it is
 * (libc6-dbg's libc: 18.7 MiB peak, 20.3 MiB padded).
 */
void huge_heap_threads(unsigned threads)
{
	if (tuned && threads >= 2)
		mallopt(M_TOP_PAD, (int)ARENA_PAD);
}
