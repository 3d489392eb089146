/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inputs that change underneath: reading a mapped file that another process
 * truncated raises SIGBUS. Work that reads mapped inputs runs inside
 * guard_run(), which turns that signal into a failure of the one input.
 */
#ifndef LIDIAGEN_GUARD_H
#define LIDIAGEN_GUARD_H

/* Install the SIGBUS handler; once, before any thread starts. */
void guard_install(void);

/*
 * Run fn(arg) on this thread. Returns 0, or -EFAULT when a SIGBUS cut it
 * short: whatever fn had allocated by then is abandoned (leaked), because
 * the structures it was building may be half made and unsafe to free.
 */
int guard_run(void (*fn)(void *arg), void *arg);

#endif
