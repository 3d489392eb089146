/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A plain driver for libFuzzer-style targets, so that every `make test` (gcc,
 * and gcc with SANITIZE=address,undefined) replays each target's corpus:
 *
 *   fuzz_X DIR_OR_FILE...
 *
 * calls LLVMFuzzerTestOneInput() once per file, directories' files in sorted
 * (byte-wise) order, each from a heap buffer of exactly its size so that a
 * sanitizer catches a read past the end. Per argument it prints
 * "ok - replayed N inputs from ARG", or "not ok - ..." when the argument is
 * missing, unreadable or an empty directory. If the target crashes, the input
 * being replayed is named on stdout first (where the sanitizers allow).
 * An input that runs longer than LIDIA_FUZZ_TIMEOUT seconds (default 60; 0:
 * no limit) is a hang: "not ok - timed out after N s on FILE", exit 1, so
 * that a regression never blocks `make test`.
 * LLVMFuzzerInitialize() is called when the target defines it.
 * Exit status: 0 when every argument was ok, 1 otherwise, 2 for bad usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);
/* From the sanitizer runtime, when one is linked in. */
__attribute__((weak)) void __sanitizer_set_death_callback(void (*callback)(void));

static char current[4096]; /* the input being replayed, for crash reports */
static unsigned timeout_s = 60;

static void say_crash(void)
{
	static const char pre[] = "not ok - crashed on ";
	ssize_t r;

	if (!current[0])
		return;
	fflush(stdout);
	r = write(STDOUT_FILENO, pre, sizeof(pre) - 1);
	r = write(STDOUT_FILENO, current, strlen(current));
	r = write(STDOUT_FILENO, "\n", 1);
	(void)r;
}

static void on_signal(int sig)
{
	say_crash();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_alarm(int sig)
{
	static const char pre[] = "not ok - timed out after ", on[] = " s on ";
	char num[24];
	size_t n = sizeof(num);
	unsigned v = timeout_s;
	ssize_t r;

	(void)sig;
	do /* async-signal-safe: no printf */
		num[--n] = (char)('0' + v % 10);
	while ((v /= 10) && n);
	r = write(STDOUT_FILENO, pre, sizeof(pre) - 1);
	r = write(STDOUT_FILENO, num + n, sizeof(num) - n);
	r = write(STDOUT_FILENO, on, sizeof(on) - 1);
	r = write(STDOUT_FILENO, current, strlen(current));
	r = write(STDOUT_FILENO, "\n", 1);
	(void)r;
	_exit(1);
}

static void install_crash_report(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };

	/* Under a sanitizer keep its own handlers, which print the better report. */
	if (__sanitizer_set_death_callback) {
		__sanitizer_set_death_callback(say_crash);
		return;
	}
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_signal);
}

/* Replay one file; 0, or -errno when it cannot be read. */
static int replay_file(const char *path)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	struct stat st;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto out;
	}
	/* Exactly the file's size (1 byte for an empty one: never a NULL data pointer). */
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			goto out;
		}
		len += (size_t)n;
	}
	snprintf(current, sizeof(current), "%s", path);
	alarm(timeout_s);
	LLVMFuzzerTestOneInput(buf, len);
	alarm(0);
	current[0] = 0;
out:
	free(buf);
	close(fd);
	return err;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replay every regular file of dir, sorted; the number replayed or -errno. */
static long replay_dir(const char *dir)
{
	char **names = NULL, path[4096];
	size_t n = 0, cap = 0;
	struct dirent *de;
	long done = 0;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			char **p = realloc(names, (cap ? cap * 2 : 64) * sizeof(*names));

			if (!p) {
				err = -ENOMEM;
				break;
			}
			names = p;
			cap = cap ? cap * 2 : 64;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			err = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (names)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n && !err; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue; /* subdirectories and the like are not inputs */
		err = replay_file(path);
		if (err)
			printf("# %s: %s\n", path, strerror(-err));
		else
			done++;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return err ? err : done;
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
		return 2;
	}
	if (getenv("LIDIA_FUZZ_TIMEOUT"))
		timeout_s = (unsigned)strtoul(getenv("LIDIA_FUZZ_TIMEOUT"), NULL, 10);
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	install_crash_report();
	signal(SIGALRM, on_alarm);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		long n;

		if (stat(argv[i], &st)) {
			printf("not ok - replay %s: %s\n", argv[i], strerror(errno));
			failed = 1;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			n = replay_dir(argv[i]);
		} else {
			int err = replay_file(argv[i]);

			n = err ? err : 1;
		}
		if (n < 0) {
			printf("not ok - replay %s: %s\n", argv[i], strerror((int)-n));
			failed = 1;
		} else if (n == 0) {
			printf("not ok - replayed no input from %s (empty corpus)\n", argv[i]);
			failed = 1;
		} else {
			printf("ok - replayed %ld input%s from %s\n", n, n == 1 ? "" : "s",
			       argv[i]);
		}
		fflush(stdout);
	}
	return failed;
}
