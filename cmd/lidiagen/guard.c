/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A SIGBUS in a mapped input (guard.h). Each thread that runs guarded work
 * keeps its own jump buffer; the handler jumps back to it. A SIGBUS outside
 * guarded work is a bug, and ends the process as it would have.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include "guard.h"

static _Thread_local sigjmp_buf *guard_jump;

static void on_sigbus(int sig, siginfo_t *info, void *uctx)
{
	(void)info;
	(void)uctx;
	if (guard_jump)
		siglongjmp(*guard_jump, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

void guard_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

int guard_run(void (*fn)(void *arg), void *arg)
{
	sigjmp_buf here;
	sigjmp_buf *volatile outer = guard_jump;

	/* The signal mask is saved and restored, so SIGBUS is not left blocked. */
	if (sigsetjmp(here, 1)) {
		guard_jump = outer;
		return -EFAULT;
	}
	guard_jump = &here;
	fn(arg);
	guard_jump = outer;
	return 0;
}
