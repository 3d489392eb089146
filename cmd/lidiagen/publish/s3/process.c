/* SPDX-License-Identifier: Apache-2.0 */
/*
 * credential_process, as the AWS CLI runs it: the profile's command split
 * into words by the rules of Python's shlex.split (what botocore uses on
 * POSIX), run with no shell between (posix_spawnp, the PATH searched), its
 * standard output read whole (64 KiB at most) within a deadline, after
 * which it is killed. Its standard error stays the user's terminal's: it
 * is where such helpers say what went wrong (a login needed...).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aws_json.h"
#include "process.h"

#define OUT_MAX (64 * 1024)
#define ARGS_MAX 64

extern char **environ;

/* One character of a word: into buf, when not a separator. */
static int split_char(const char **p, char *quote, char **o, bool *in_word)
{
	char ch = **p;

	if (*quote && ch == *quote) {
		*quote = 0;
	} else if (*quote == '\'' || (*quote == '"' && ch != '\\')) {
		*(*o)++ = ch;
	} else if (*quote) { /* a backslash in "...": \" and \\ escape, others stay */
		if ((*p)[1] == '"' || (*p)[1] == '\\')
			*(*o)++ = *++*p;
		else
			*(*o)++ = ch;
	} else if (ch == '\'' || ch == '"') {
		*quote = ch;
		*in_word = true;
	} else if (ch == '\\') {
		if (!(*p)[1])
			return -EINVAL; /* shlex: "No escaped character" */
		*(*o)++ = *++*p;
		*in_word = true;
	} else {
		*(*o)++ = ch;
		*in_word = true;
	}
	return 0;
}

int process_split(const char *command, char *buf, char **argv, int max)
{
	char quote = 0, *o = buf;
	bool in_word = false;
	int n = 0;

	for (const char *p = command;; p++) {
		if (!*p || (!quote && strchr(" \t\r\n", *p))) {
			if (in_word) {
				if (n == max)
					return -E2BIG;
				*o++ = '\0';
				argv[n++] = buf;
				buf = o;
				in_word = false;
			}
			if (!*p)
				break;
			continue;
		}
		if (split_char(&p, &quote, &o, &in_word))
			return -EINVAL;
	}
	return quote || !n ? -EINVAL : n;
}

/* The child's whole standard output into out, until it closes it or the deadline. */
static int read_output(int fd, char *out, size_t *len, long timeout_s)
{
	struct timespec now, end;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout_s;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (end.tv_sec - now.tv_sec) * 1000 + (end.tv_nsec - now.tv_nsec) / 1000000;

		if (ms <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(ms > 60000 ? 60000 : ms)) < 0 && errno != EINTR)
			return -errno;
		if (!(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(fd, out + *len, OUT_MAX - *len);
		if (n == 0)
			return 0;
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			return -errno;
		if (n > 0 && (*len += (size_t)n) == OUT_MAX)
			return -EFBIG;
	}
}

/* Run argv, its output in out: 0, or how it failed, said in err. */
static int run(char **argv, const char *shown, long timeout_s, char *out, size_t *len, char *err,
	       size_t err_size)
{
	posix_spawn_file_actions_t fa;
	int fds[2], status = 0, ret;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	ret = -posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (ret) {
		close(fds[0]);
		snprintf(err, err_size, "cannot run '%s': %s", shown, strerror(-ret));
		return ret;
	}
	ret = read_output(fds[0], out, len, timeout_s);
	close(fds[0]);
	if (ret)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (ret == -ETIMEDOUT)
		snprintf(err, err_size, "'%s' gave no answer within %ld s: killed", shown,
			 timeout_s);
	else if (ret)
		snprintf(err, err_size, "'%s': %s", shown,
			 ret == -EFBIG ? "more than 64 KiB of output" : strerror(-ret));
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		snprintf(err, err_size, "'%s' %s %d", shown,
			 WIFEXITED(status) ? "exited with status" : "was killed by signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return ret ? ret : WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -ECHILD;
}

static void free_all(char **v, int n)
{
	for (int i = 0; i < n; i++) {
		if (v[i]) {
			explicit_bzero(v[i], strlen(v[i]));
			free(v[i]);
			v[i] = NULL;
		}
	}
}

/* The JSON's members into cr, all or none. */
static int take_json(const char *out, size_t len, const char *shown, struct s3_credentials *cr,
		     char *err, size_t err_size)
{
	static const char *const names[] = { "AccessKeyId", "SecretAccessKey", "SessionToken",
					     "Expiration" };
	char *v[4] = { NULL };
	long version = 0;
	int ret = aws_json_integer(out, len, "Version", &version);

	if (ret || version != 1) {
		snprintf(err, err_size, "'%s': not a JSON object with \"Version\": 1", shown);
		return -EBADMSG;
	}
	for (int i = 0; i < 4 && (!ret || ret == -ENOENT); i++)
		ret = aws_json_string(out, len, names[i], &v[i]);
	if ((ret && ret != -ENOENT) || !v[0] || !v[1] ||
	    (v[3] && aws_parse_time(v[3], &cr->expires))) {
		snprintf(err, err_size, "'%s': %s", shown,
			 ret == -ENOMEM ? "out of memory"
			 : v[0] && v[1] ? "Expiration is not a time"
					: "no AccessKeyId and SecretAccessKey strings in its JSON");
		free_all(v, 4);
		return ret == -ENOMEM ? ret : -EBADMSG;
	}
	cr->access_key = v[0];
	cr->secret_key = v[1];
	cr->session_token = v[2];
	free_all(v + 3, 1);
	return 0;
}

int process_credentials(const char *command, long timeout_s, struct s3_credentials *cr, char *err,
			size_t err_size)
{
	char *buf = malloc(strlen(command) + 1), *out = malloc(OUT_MAX), *argv[ARGS_MAX + 1];
	char shown[160];
	size_t len = 0;
	int n = -ENOMEM, ret = -ENOMEM;

	snprintf(err, err_size, "out of memory");
	/* Only the program is named: the arguments may hold a secret. */
	if (buf && out && (n = process_split(command, buf, argv, ARGS_MAX)) < 0)
		snprintf(err, err_size, "credential_process: %s",
			 n == -E2BIG ? "more than 64 words"
				     : "an unclosed quote or a '\\' at the end");
	if (n > 0) {
		argv[n] = NULL;
		snprintf(shown, sizeof(shown), "%s%s", argv[0], n > 1 ? " ..." : "");
		ret = run(argv, shown, timeout_s, out, &len, err, err_size);
		if (!ret)
			ret = take_json(out, len, shown, cr, err, err_size);
	}
	if (out)
		explicit_bzero(out, OUT_MAX);
	free(out);
	free(buf);
	return n < 0 ? n : ret;
}
