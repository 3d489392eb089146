/* SPDX-License-Identifier: Apache-2.0 */
/* SHA-256 of buffers and files, by nettle (sha256.h). */
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sha256.h"

static void digest_hex(struct sha256_ctx *c, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256_digest(c, sizeof(d), d);
	for (size_t i = 0; i < sizeof(d); i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[64] = '\0';
}

void sha256_hex(const void *buf, size_t len, char out[65])
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, len, buf);
	digest_hex(&c, out);
}

void sha256_pieces_init(struct sha256_pieces *p)
{
	sha256_init(&p->c);
	p->bytes = 0;
}

void sha256_pieces_add(struct sha256_pieces *p, const void *buf, size_t len)
{
	sha256_update(&p->c, len, buf);
	p->bytes += len;
}

void sha256_pieces_hex(struct sha256_pieces *p, char out[65])
{
	digest_hex(&p->c, out);
}

int sha256_fd(int fd, char out[65])
{
	enum { CHUNK = 1 << 18 };
	struct sha256_ctx c;
	unsigned char *buf = malloc(CHUNK);
	off_t at = 0;

	if (!buf)
		return -ENOMEM;
	sha256_init(&c);
	for (;;) {
		ssize_t n = pread(fd, buf, CHUNK, at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			free(buf);
			return err;
		}
		if (n == 0)
			break;
		sha256_update(&c, (size_t)n, buf);
		at += n;
	}
	free(buf);
	digest_hex(&c, out);
	return 0;
}

int sha256_file(const char *path, char out[65])
{
	/* Not blocking: a FIFO where a file was (an index's path, say) must not hang the run. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err;
	struct stat st;

	if (fd < 0)
		return -errno;
	/* Only a regular file's bytes are hashed. */
	err = fstat(fd, &st) ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : 0;
	if (!err)
		err = sha256_fd(fd, out);
	close(fd);
	return err;
}
