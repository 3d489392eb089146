/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every file the command writes goes through the library's one
 * temp-then-rename writer (lidia_store_write_file): the outputs, the state
 * and the manifest. Here: its stdio form, and the signal handler that
 * removes the temporary files of a killed run (git's tempfile.c).
 */
#ifndef LIDIAGEN_TEMPFILE_H
#define LIDIAGEN_TEMPFILE_H

#include <stdio.h>

/*
 * Write path atomically with print(f, ctx), f a stream on the temporary
 * file. Returns 0, or -errno (-EIO when a write failed without one).
 */
int write_file(const char *path, void (*print)(FILE *f, void *ctx), void *ctx);

/* write() all of buf to fd, through EINTR and short writes: 0 or -errno (-EIO: none written). */
int write_whole(int fd, const void *buf, size_t n);

/*
 * On SIGINT, SIGTERM, SIGHUP and SIGQUIT: remove the temporary files being
 * written, then die of the signal as without the handler. A signal the
 * process was started ignoring stays ignored. Once, before threads start.
 */
void remove_temps_on_signal(void);

/*
 * And path, a file or an empty directory the run made outside its output
 * (its own in $TMPDIR), removed too, after those named later (at most 256;
 * the run removes them itself when it ends).
 */
void remove_on_signal(const char *path);

/*
 * An unnamed file in $TMPDIR (/tmp when unset), open for reading and
 * writing: O_TMPFILE, or on a file system without it a named one unlinked
 * at once. Its space is given back when its last descriptor closes. -errno.
 */
int unnamed_temp_file(void);

#endif
