/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading back an output (cmd/lidiagen/publish/holdings.c, existing_read_fd):
 * a file made here with a known number of functions, inline ranges and
 * line rows, big enough that two threads check its CRCs beside the
 * counting, read back with one thread and with two: the counts it was made
 * with, and, once one byte of a table is changed, nothing valid (only the
 * file's identity) either way, as with the CRCs checked at open.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../cmd/lidiagen/publish/holdings.c"
#include "../../cmd/lidiagen/util/json.c"
#include "unit.h"

#define FUNCS 200000u /* with one inline range each: 400,000 ranges, 18 MB: past SHARED_MIN */

static int make_file(const char *path)
{
	struct lidia_builder *b;
	struct lidia_line lines[2] = { { 0, 10 }, { 4, 11 } };
	int err, fd;

	if (lidia_builder_new(&b))
		return -1;
	for (uint32_t i = 0; i < FUNCS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "f%u", i);
		err = lidia_builder_add(b,
					&(struct lidia_range_desc){ .va = 0x1000 + 16 * (uint64_t)i,
								    .length = 16,
								    .func = name,
								    .file = "a.c",
								    .lines = lines,
								    .line_count = 2 });
		err = err
			      ?: lidia_builder_add(b, &(struct lidia_range_desc){
							      .va = 0x1000 + 16 * (uint64_t)i + 4,
							      .length = 8,
							      .depth = 1,
							      .func = "inl",
							      .call_file = "a.c",
							      .call_line = 10 });
		if (err)
			break;
	}
	fd = err ? -1 : open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	err = fd < 0 || lidia_builder_finalize(b) || lidia_builder_write_fd(b, fd);
	if (fd >= 0)
		close(fd);
	lidia_builder_free(b);
	return err ? -1 : 0;
}

static struct existing read_back(const char *path, unsigned threads)
{
	struct existing ex;
	int fd = open(path, O_RDONLY);

	existing_read_fd(fd, false, threads, &ex);
	if (fd >= 0)
		close(fd);
	return ex;
}

/* One byte of the file at off flipped in place. */
static void flip(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	unsigned char c;

	if (fd < 0 || pread(fd, &c, 1, off) != 1)
		return;
	c ^= 0x5a;
	if (pwrite(fd, &c, 1, off) != 1)
		c = 0;
	close(fd);
}

int main(void)
{
	char path[] = "/tmp/lidiagen-holdings.XXXXXX";
	int fd = mkstemp(path);
	struct lidia_reader *r;
	struct lidia_file_info fi;
	struct stat st;

	if (fd < 0)
		return 1;
	close(fd);
	CHECK(!make_file(path), "a file of %u functions made", FUNCS);
	CHECK(!stat(path, &st) && st.st_size >= SHARED_MIN,
	      "it is big enough to be read back on two threads (%lld bytes)",
	      (long long)st.st_size);
	for (unsigned threads = 1; threads <= 2; threads++) {
		struct existing ex = read_back(path, threads);

		CHECK(ex.valid && ex.counts.functions == FUNCS &&
			      ex.counts.inline_ranges == FUNCS &&
			      ex.counts.line_rows == 2 * FUNCS && ex.level == LEVEL_INLINES,
		      "%u thread(s): %zu functions, %zu inline ranges, %zu line rows", threads,
		      ex.counts.functions, ex.counts.inline_ranges, ex.counts.line_rows);
	}
	if (lidia_reader_open(&r, path, NULL) || lidia_reader_info(r, &fi)) {
		CHECK(0, "the file opens");
		return unit_exit();
	}
	lidia_reader_close(r);
	/* A byte of the strings table: offsets still in bounds, its CRC no longer holds. */
	flip(path, (off_t)(fi.strings.offset + fi.strings.size / 2));
	for (unsigned threads = 1; threads <= 2; threads++) {
		struct existing ex = read_back(path, threads);

		CHECK(!ex.valid && ex.level == LEVEL_NONE && !ex.counts.functions && ex.ino,
		      "%u thread(s): a CRC that fails leaves nothing valid, the identity kept",
		      threads);
	}
	unlink(path);
	return unit_exit();
}
