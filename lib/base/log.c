/* SPDX-License-Identifier: Apache-2.0 */
/* The log callback: the library's only way to say anything. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static lidia_log_fn log_fn;
static void *log_ctx;

void lidia_set_log(lidia_log_fn fn, void *ctx)
{
	log_fn = fn;
	log_ctx = ctx;
}

int lidia_log_enabled(void)
{
	return log_fn != NULL;
}

void lidia_log(enum lidia_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!log_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(level, msg, log_ctx);
}
