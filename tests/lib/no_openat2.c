/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test shim (LD_PRELOAD): a kernel before Linux 5.6, as far as openat2 goes.
 * syscall(SYS_openat2, ...) fails with ENOSYS, so that the store takes its
 * other way below an output tree (openat with O_NOFOLLOW, one element at a
 * time); every other system call goes through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef long (*syscall_fn)(long, ...);

long syscall(long n, ...)
{
	static syscall_fn real;
	long a[6];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
#ifdef SYS_openat2
	if (n == SYS_openat2) {
		errno = ENOSYS;
		return -1;
	}
#endif
	if (!real)
		real = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
	return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
