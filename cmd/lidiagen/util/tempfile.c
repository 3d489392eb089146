/* SPDX-License-Identifier: Apache-2.0 */
/* Files written through stdio, and temporary files removed on signals (tempfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lidia.h"
#include "tempfile.h"

struct print_ctx {
	void (*print)(FILE *f, void *ctx);
	void *ctx;
};

static int fill_stdio(int fd, void *arg)
{
	struct print_ctx *p = arg;
	int dfd = dup(fd); /* the stream closes its own: fd stays the writer's */
	FILE *f;

	if (dfd < 0)
		return -errno;
	if (!(f = fdopen(dfd, "w"))) {
		close(dfd);
		return -ENOMEM;
	}
	p->print(f, p->ctx);
	errno = 0;
	if (ferror(f) | fclose(f))
		return errno ? -errno : -EIO;
	return 0;
}

int write_file(const char *path, void (*print)(FILE *f, void *ctx), void *ctx)
{
	struct print_ctx p = { print, ctx };

	return lidia_store_write_file(path, fill_stdio, &p);
}

int write_whole(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * The run's own files and directories outside its output (remove_on_signal),
 * each path copied here before the count that publishes it is raised: the
 * handler reads only what a thread finished writing.
 */
#define OWN_MAX 256
static char *own[OWN_MAX]; /* never freed: the handler may read them until the end */
static atomic_size_t nown;
static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;

void remove_on_signal(const char *path)
{
	size_t n;

	pthread_mutex_lock(&own_lock);
	n = atomic_load(&nown);
	if (n < OWN_MAX && (own[n] = strdup(path)))
		atomic_store(&nown, n + 1);
	pthread_mutex_unlock(&own_lock);
}

static void on_signal(int sig)
{
	/* Last made first: a file before its directory. */
	for (size_t i = atomic_load(&nown); i-- > 0;)
		if (unlink(own[i]))
			rmdir(own[i]);
	/* SA_RESETHAND made the action the default again: raised, it ends us once we return. */
	lidia_store_remove_temps();
	raise(sig);
}

void remove_temps_on_signal(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESETHAND };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;

		if (!sigaction(sigs[i], NULL, &old) && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

int unnamed_temp_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != ENOENT))
		return fd >= 0 ? fd : -errno;
	if (snprintf(path, sizeof(path), "%s/lidiagen-tmp.XXXXXX", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((fd = mkostemp(path, O_CLOEXEC)) < 0)
		return -errno;
	unlink(path);
	return fd;
}
