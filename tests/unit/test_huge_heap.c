/* SPDX-License-Identifier: Apache-2.0 */
/*
 * huge_heap_setup() (cmd/lidiagen/util/huge_heap.c): the process executed
 * again has glibc.malloc.hugetlb=1 in GLIBC_TUNABLES, glibc then puts
 * malloc()'s memory on transparent huge pages (seen in /proc/self/smaps_rollup,
 * not taken from our code), and GLIBC_TUNABLES is put back as it was; a
 * user's own setting, a preloaded library or a sanitizer's malloc leave the
 * process as it is. The process keeps its name (/proc/self/comm), not "exe".
 * A request sized by huge_fit() (lib/base/huge_pages.h) is mapped by glibc
 * on huge pages whole, and its sizes are what glibc's chunks make them.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../cmd/lidiagen/util/huge_heap.c"
#include "huge_pages.h"
#include "unit.h"

#define CHILD_FLAG "--report-from-exec"
/* The name run_child() gives its child, which the process executed again must keep. */
#define CHILD_NAME "lidia-name-kept"

/* AnonHugePages of this process, in KiB; -1 when unknown. */
static long anon_huge_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* This process's name as the kernel shows it to ps and pgrep (/proc/self/comm). */
static void print_name(void)
{
	char name[64] = "";
	FILE *f = fopen("/proc/self/comm", "r");

	if (f) {
		if (!fgets(name, sizeof(name), f))
			name[0] = '\0';
		fclose(f);
	}
	printf("name %s", name);
}

/* A worker's allocations: 16 MiB in 4 KiB pieces, written, kept (the process ends soon). */
static void *small_pieces(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4096; i++) {
		unsigned char *p = malloc(4096);

		if (p)
			memset(p, 1, 4096);
		__asm__ volatile("" : : "r"(p) : "memory");
	}
	return NULL;
}

/*
 * Huge pages gained by a request of 3 MiB rounded by huge_fit(), written
 * whole: made first, while glibc still maps requests of 128 KiB and more
 * apart from its heap (a free() of one raises that threshold).
 */
static long fitted_huge_kib(void)
{
	size_t size = huge_fit((size_t)3 << 20, false);
	long before = anon_huge_kib(), after;
	unsigned char *p = malloc(size);

	if (!p)
		return -1;
	memset(p, 1, size);
	__asm__ volatile("" : : "r"(p) : "memory");
	after = anon_huge_kib();
	free(p);
	return after - before;
}

/*
 * In the process executed again: what it was started with, then what is
 * left after huge_heap_setup() put things back, and whether malloc()'s
 * memory of 16 MiB, written whole, came on huge pages.
 */
static int report_from_exec(int argc, char **argv)
{
	const char *t = getenv(TUNABLES), *b = getenv(BEFORE);
	size_t size = (size_t)16 << 20;
	unsigned char *p;

	printf("started %s|%s\n", t ? t : "(unset)", b ? b : "(unset)");
	huge_heap_setup(argv);
	t = getenv(TUNABLES);
	printf("after %s|%s|%s\n", t ? t : "(unset)", getenv(BEFORE) ? "set" : "(unset)",
	       getenv(NAME_BEFORE) ? "set" : "(unset)");
	print_name();
	printf("fitted %ld\n", fitted_huge_kib());
	p = malloc(size);
	if (p)
		memset(p, 1, size);
	__asm__ volatile("" : : "r"(p) : "memory"); /* the writes are made, not optimised away */
	printf("huge %ld\n", anon_huge_kib());
	free(p);
	if (argc > 2) { /* a worker thread's arena too, after huge_heap_threads() */
		long before = anon_huge_kib();
		pthread_t worker;

		huge_heap_threads(2);
		if (!pthread_create(&worker, NULL, small_pieces, NULL))
			pthread_join(worker, NULL);
		printf("thread %ld\n", anon_huge_kib() - before);
	}
	return 0;
}

/* Runs huge_heap_setup() in a child with TUNABLES as given (NULL: unset); its report into out. */
static bool run_child(const char *self, const char *tunables, const char *preload, char *out,
		      size_t cap)
{
	int fds[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(fds))
		return false;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		char *argv[] = { (char *)self, CHILD_FLAG, "thread", NULL };

		dup2(fds[1], 1);
		close(fds[0]);
		prctl(PR_SET_NAME, CHILD_NAME, 0, 0, 0);
		tunables ? setenv(TUNABLES, tunables, 1) : unsetenv(TUNABLES);
		preload ? setenv("LD_PRELOAD", preload, 1) : unsetenv("LD_PRELOAD");
		huge_heap_setup(argv);
		printf("not executed\n");
		fflush(stdout);
		_exit(0);
	}
	close(fds[1]);
	while (got < (ssize_t)cap - 1 && (n = read(fds[0], out + got, cap - 1 - (size_t)got)) > 0)
		got += n;
	out[got] = '\0';
	close(fds[0]);
	for (const char *l = out; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != '\0'))
		printf("# child: %.*s\n", (int)strcspn(l, "\n"), l);
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status);
}

/* huge_fit()'s sizes: glibc's chunk of k huge pages less 24 bytes is k huge pages long. */
static void check_fit_sizes(void)
{
	size_t mib = (size_t)1 << 20;

	CHECK(huge_fit(3 * mib, false) == 4 * mib - 24, "3 MiB: 4 MiB less glibc's 24 bytes");
	CHECK(huge_fit(4 * mib - 24, false) == 4 * mib - 24, "already fitted: kept");
	CHECK(huge_fit(4 * mib - 23, false) == 6 * mib - 24, "a byte more: the next huge page");
	CHECK(huge_fit(mib + mib / 2, false) == mib + mib / 2, "1.5 MiB growing: left as it is");
	CHECK(huge_fit(mib + mib / 2, true) == 2 * mib - 24, "1.5 MiB written whole: one huge page");
	CHECK(huge_fit(mib / 2, true) == mib / 2, "0.5 MiB: left to the kernel");
	CHECK(huge_fit(SIZE_MAX - 5, false) == SIZE_MAX - 5, "near SIZE_MAX: no overflow");
}

static void check_put_back(void)
{
	char *argv[] = { "x", NULL };

	setenv(BEFORE, "sglibc.malloc.arena_max=2", 1);
	setenv(TUNABLES, "glibc.malloc.arena_max=2:" HUGETLB "=1", 1);
	huge_heap_setup(argv);
	CHECK(getenv(TUNABLES) && !strcmp(getenv(TUNABLES), "glibc.malloc.arena_max=2") &&
		      !getenv(BEFORE),
	      "executed again, a variable that was set is put back as it was");
	setenv(BEFORE, "u", 1);
	setenv(TUNABLES, HUGETLB "=1", 1);
	huge_heap_setup(argv);
	CHECK(!getenv(TUNABLES) && !getenv(BEFORE), "one that was unset is unset again");
}

int main(int argc, char **argv)
{
	char out[1024];
	bool expect;

	if (argc > 1 && !strcmp(argv[1], CHILD_FLAG))
		return report_from_exec(argc, argv);
	check_put_back();
	check_fit_sizes();

	expect = worth_it(NULL);
#if defined(OWN_MALLOC)
	CHECK(!expect, "a sanitizer's malloc: never executed again");
#endif
	CHECK(run_child(argv[0], NULL, NULL, out, sizeof(out)), "child ran");
	if (expect) {
		long kib = -1;
		const char *h = strstr(out, "huge ");

		CHECK(strstr(out, "started " HUGETLB "=1|u\n") != NULL,
		      "no GLIBC_TUNABLES: executed again with " HUGETLB "=1");
		CHECK(strstr(out, "after (unset)|(unset)|(unset)\n") != NULL,
		      "then GLIBC_TUNABLES unset again, nothing left behind");
		CHECK(strstr(out, "name " CHILD_NAME "\n") != NULL,
		      "the process keeps its name (pgrep finds it), not exe");
		if (h)
			kib = strtol(h + 5, NULL, 10);
		CHECK(kib >= 2048, "glibc put 16 MiB malloc()ed on huge pages: %ld KiB", kib);
		h = strstr(out, "fitted ");
		kib = h ? strtol(h + 7, NULL, 10) : -1;
		CHECK(kib >= 4096, "3 MiB sized by huge_fit(): all 4 MiB on huge pages: %ld KiB", kib);
		h = strstr(out, "thread ");
		kib = h ? strtol(h + 7, NULL, 10) : -1;
		CHECK(kib >= 8192,
		      "after huge_heap_threads(2), a worker's 16 MiB in 4 KiB pieces on huge pages "
		      "too: %ld KiB",
		      kib);
	} else {
		CHECK(strstr(out, "not executed\n") != NULL,
		      "THP not in madvise mode here (or a sanitizer): not executed again");
	}

	CHECK(run_child(argv[0], "glibc.malloc.arena_max=2", NULL, out, sizeof(out)), "child ran");
	CHECK(!expect || strstr(out, "started glibc.malloc.arena_max=2:" HUGETLB
				     "=1|sglibc.malloc.arena_max=2\n"),
	      "other tunables kept, ours added after them");
	CHECK(!expect || strstr(out, "after glibc.malloc.arena_max=2|(unset)|(unset)\n"),
	      "and put back as they were");

	CHECK(run_child(argv[0], HUGETLB "=0", NULL, out, sizeof(out)) &&
		      !strcmp(out, "not executed\n"),
	      "the user's " HUGETLB "=0: not executed again");
	CHECK(run_child(argv[0], NULL, "libnothing-preloaded.so", out, sizeof(out)) &&
		      strstr(out, "not executed\n"),
	      "a preloaded library (an allocator, valgrind): not executed again");
	return unit_exit();
}
