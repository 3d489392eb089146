/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Phase 1 of the batch (batch_internal.h): identify. Every file the walk
 * finds is read once, on the pool: an ELF file becomes a part, an archive
 * is streamed and each ELF member becomes a part, with its key and what it
 * holds; its bytes are let go. An input the state knows unchanged is not
 * read again.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_internal.h"
#include "dwz_file.h"
#include "image.h"
#include "index.h"
#include "oci_dir.h"
#include "open_regular.h"
#include "part_key.h"
#include "sha256.h"
#include "usage.h"

/* What identifying one ELF image gives (read_part). */
struct part_read {
	struct batch *b;
	const char *path;
	void *data; /* the member's bytes; NULL: map the file at path */
	size_t size;
	int err;
	struct lidia_elf_info info;
	struct image_key k;
};

/*
 * Open the image, and read its key and what it holds: a file changed
 * meanwhile (its reads came back short, or mixed two files) fails.
 */
static void read_part(struct part_read *pr)
{
	struct lidia_elf *e = NULL;

	pr->err = pr->data ? lidia_elf_open_mem(&e, pr->data, pr->size, pr->path)
			   : lidia_elf_open(&e, pr->path);
	if (pr->err)
		return;
	lidia_elf_info(e, &pr->info);
	image_key(pr->b->o->fallback, e, &pr->info, pr->data, pr->size, pr->path, &pr->k);
	pr->err = lidia_elf_check(e);
	lidia_elf_close(e);
}

/*
 * An ELF image passed over: counted, and said, each run the same (from the
 * state too): a warning with its fix when it lacks a usable key, a line
 * with -v when it is no program (under the lock).
 */
static void say_skipped(struct batch *b, const struct state_skip *k)
{
	b->skipped[k->reason]++;
	switch (k->reason) {
	case SKIP_NO_KEY:
		if (k->go)
			batch_warning(b, k->path,
				      "no GNU build ID (a Go binary), skipped: build with "
				      "-ldflags=-B=gobuildid or use --fallback-key go");
		else
			batch_warning(b, k->path, "no GNU build ID, skipped: " FIX_NO_KEY);
		break;
	case SKIP_DEGENERATE_KEY:
		batch_warning(b, k->path,
			      "build ID %.16s... is degenerate (all %s), skipped: " FIX_NO_KEY,
			      k->key, k->key[0] == '0' ? "zeros" : "0xff");
		break;
	case SKIP_MACHINE: /* the index keeps no machine number: then not said */
		batch_warning(
			b, k->path,
			"ELF machine%s%s is not an architecture lidiagen reads right, skipped: "
			"doc/architectures.md lists those it reads",
			k->key[0] ? " " : "", k->key);
		break;
	case SKIP_SHORT_KEY:
		batch_warning(b, k->path,
			      "build ID '%.32s' is too short to be a key (under %d bytes), "
			      "skipped: " FIX_NO_KEY,
			      k->key, LIDIA_BUILD_ID_MIN);
		break;
	default:
		if (verbosity >= 2) {
			end_progress(b);
			fprintf(stderr, "lidiagen: %s: %s, skipped\n", k->path,
				k->reason == SKIP_NOT_LINKED
					? "not linked (a relocatable object)"
					: "neither an executable nor a shared object");
		}
	}
}

/* The first n bytes of the image: data's, or the file's; false when it is shorter. */
static bool elf_head(const char *path, const unsigned char *data, size_t size, unsigned char *h,
		     size_t n)
{
	ssize_t got;
	int fd;

	if (data) {
		if (size < n)
			return false;
		memcpy(h, data, n);
		return true;
	}
	if ((fd = open_regular(path)) < 0)
		return false;
	got = pread(fd, h, n, 0);
	close(fd);
	return got == (ssize_t)n;
}

/* A half-word of an ELF header, in the byte order of e_ident[EI_DATA] (2: big-endian). */
static unsigned elf_half(const unsigned char *h, size_t at)
{
	return h[5] == 2 ? (unsigned)h[at] << 8 | h[at + 1] : (unsigned)h[at + 1] << 8 | h[at];
}

/* Why an image of a type lidia files are not for is passed over: .o, or another (a core dump). */
static enum skip_reason type_reason(const char *path, const unsigned char *data, size_t size)
{
	unsigned char h[18];

	if (!elf_head(path, data, size, h, sizeof(h)))
		return SKIP_NOT_PROGRAM;
	return elf_half(h, 16) == 1 /* ET_REL */ ? SKIP_NOT_LINKED : SKIP_NOT_PROGRAM;
}

/* The image's e_machine in decimal, into buf (LIDIA_KEY_MAX bytes): "?" when unread. */
static void machine_of(const char *path, const unsigned char *data, size_t size, char *buf)
{
	unsigned char h[20];

	if (elf_head(path, data, size, h, sizeof(h)))
		snprintf(buf, LIDIA_KEY_MAX, "%u", elf_half(h, 18));
	else
		snprintf(buf, LIDIA_KEY_MAX, "?");
}

/*
 * Record one ELF image found at path (a file, or a member of the input file
 * at position at: state_position()'s, NULL for a file).
 */
static void add_part(struct batch *b, size_t input, const char *path, const char *member,
		     const char *at, void *data, size_t size)
{
	struct part_read pr = { .b = b, .path = path, .data = data, .size = size };
	enum skip_reason why = 0;
	char dwz_id[LIDIA_KEY_MAX];
	bool dwz;

	read_part(&pr);
	if (pr.err == LIDIA_E_ELF_TYPE) {
		/* Object files and core dumps: not what symbol files are for. */
		why = type_reason(path, data, size);
	} else if (pr.err == LIDIA_E_ELF_MACHINE) {
		why = SKIP_MACHINE; /* better no file than one with wrong addresses */
	} else if (pr.err) {
		input_problem(b, path, lidia_strerror(pr.err));
		return;
	} else if (!pr.k.has_key) {
		why = pr.k.degenerate ? SKIP_DEGENERATE_KEY : SKIP_NO_KEY;
	} else if (!lidia_store_build_id_valid(pr.k.key)) {
		why = SKIP_SHORT_KEY;
	}
	/*
	 * A dwz file (dwz writes it as ET_REL) is gathered for the debug files
	 * that name it (dwz_pool.c), and the index says what it is (looking at
	 * every image with DWARF: one read more of each, for the index only).
	 */
	dwz = (why == SKIP_NOT_LINKED || (b->o->indexing && !why && pr.info.has_dwarf)) &&
	      dwz_file_id(path, data, size, dwz_id, sizeof(dwz_id));
	if (dwz && !b->o->indexing) /* the index converts nothing */
		dwz_pool_add(b, path, data, size, dwz_id);

	pthread_mutex_lock(&b->lock);
	b->elves++;
	if (why) {
		struct state_skip k = { .path = (char *)path,
					.reason = why,
					.go = pr.info.go_build_id[0] != '\0' };

		snprintf(k.key, sizeof(k.key), "%s",
			 why == SKIP_SHORT_KEY	      ? pr.k.key
			 : why == SKIP_DEGENERATE_KEY ? pr.k.build_id
						      : "");
		if (why == SKIP_MACHINE)
			machine_of(path, data, size, k.key);
		if (!state_add_skip(&b->state, input, path, why, k.key, k.go))
			b->state.skips[b->state.nskips - 1].dwz = dwz;
		say_skipped(b, &k);
	} else if (!state_add_part(&b->state, input, path, member, at, pr.k.key, &pr.info, size)) {
		b->state.parts[b->state.nparts - 1].dwz = dwz;
		progress_key(b, pr.k.key);
	}
	progress_input(b, path);
	pthread_mutex_unlock(&b->lock);
}

/*
 * A task of phase 1. It holds its own copy of what it reads of its input:
 * the walker keeps adding inputs while workers run, and adding may move the
 * inputs array, so workers never touch it but through state_* under the lock.
 */
struct identify_task {
	struct batch *b;
	size_t input;
	bool explicit;
	uint64_t size;
	char path[];
};

struct member_ctx {
	struct batch *b;
	size_t input;
	const char *path;	    /* the input's */
	struct image_view *img;	    /* a container image: its visible entries alone; NULL: none */
	struct sha256_pieces *hash; /* the index: the input's bytes as the walk reads them */
};

static int identify_member(void *ctx, const struct lidia_archive_member *m, unsigned char *data,
			   size_t size)
{
	struct member_ctx *c = ctx;
	char at[STATE_POSITION_MAX], named[4096];
	const char *shown =
		oci_dir_name(c->path); /* an OCI layout directory's tar: the directory */
	const char *path =
		c->img ? image_view_name(c->img, c->path, shown, m, named, sizeof(named)) : m->path;

	if (state_position(at, sizeof(at), m->at, m->depth))
		input_problem(c->b, path, "archives nested too deep to say where it is");
	else
		add_part(c->b, c->input, path, m->name, at, data, size);
	lidia_archive_data_free(data, size, m->mapped);
	return 0;
}

static void hash_bytes(void *ctx, const unsigned char *data, size_t size)
{
	sha256_pieces_add(((struct member_ctx *)ctx)->hash, data, size);
}

/* A problem inside an archive, reported from the member walk's context. */
static void member_problem(void *ctx, const char *path, const char *msg)
{
	input_problem(((struct member_ctx *)ctx)->b, path, msg);
}

static bool want_member(void *ctx, const struct lidia_archive_member *m)
{
	struct member_ctx *c = ctx;

	if (c->img && !image_view_wants(c->img, m))
		return false; /* deleted, hidden or replaced by a later layer, or not applied */
	return walk_wanted(&c->b->walk, m->name);
}

/*
 * A tar that looks like a container image is read as one (image.h): its
 * JSON and its layers' names first, into *v. False when it is none.
 */
static bool read_image(struct identify_task *t, int fd, struct image_view *v)
{
	struct batch *b = t->b;
	int err;

	if (!image_candidate(fd))
		return false;
	err = image_view_read(v, fd, t->path, &b->o->archive, b->o->platform);
	if (lseek(fd, 0, SEEK_SET) != 0 && !err) {
		image_view_release(v);
		err = 1;
	}
	pthread_mutex_lock(&b->lock);
	input_opened(b, t->input, t->size); /* read twice: its names, then its members */
	pthread_mutex_unlock(&b->lock);
	if (err < 0)
		input_problem(b, t->path, "out of memory reading it as a container image");
	if (err)
		return false; /* read as an archive */
	if (!v->nlayers)
		batch_warning(b, t->path,
			      "a container image, but none of platform %s: "
			      "see its platforms with tar -xOf IMAGE index.json",
			      b->o->platform ? b->o->platform : "(any)");
	return true;
}

/*
 * Walk the archive at fd. The index hashes it in the same read, into sha
 * (left empty when the bytes read were not all of its t->size: hash_input
 * reads it again).
 */
static void walk_archive(struct identify_task *t, int fd, struct member_ctx *m, char sha[65],
			 unsigned *problems, int *err)
{
	struct lidia_archive_opts ao = t->b->o->archive;
	struct sha256_pieces hash;

	ao.elf_member = identify_member;
	ao.spill_over = t->b->spill_over; /* big members mapped, not on the heap */
	ao.want_member = want_member;
	ao.problem = member_problem;
	ao.ctx = m;
	if (t->b->o->indexing) {
		sha256_pieces_init(&hash);
		m->hash = &hash;
		ao.file_bytes = hash_bytes;
	}
	*err = lidia_archive_walk_fd(fd, t->path, &ao, problems);
	if (m->hash && hash.bytes == t->size)
		sha256_pieces_hex(&hash, sha);
	m->hash = NULL;
}

static enum input_kind identify_fd(struct identify_task *t, int fd, char sha[65])
{
	struct batch *b = t->b;
	unsigned char head[512];
	ssize_t n = pread(fd, head, sizeof(head), 0);

	if (n >= 4 && !memcmp(head,
			      "\x7f"
			      "ELF",
			      4)) {
		add_part(b, t->input, t->path, NULL, NULL, NULL, (size_t)t->size);
		return INPUT_ELF;
	}
	if (n > 0 && lidia_archive_magic(head, (size_t)n)) {
		struct image_view img;
		struct member_ctx m = { b, t->input, t->path, NULL, NULL };
		unsigned problems = 0;
		int err;

		if (read_image(t, fd, &img))
			m.img = &img;
		walk_archive(t, fd, &m, sha, &problems, &err);
		if (m.img)
			image_view_release(m.img);

		if (err == LIDIA_E_NOT_ELF) {
			/* Compressed, but neither an archive nor ELF inside: as below. */
			if (t->explicit)
				input_problem(b, t->path, "not an ELF file or an archive");
			return INPUT_OTHER;
		}
		if (err && !problems)
			input_problem(b, t->path, "not an archive lidiagen can read");
		return INPUT_ARCHIVE;
	}
	/* Found by --recursive, any file that is neither is passed over quietly. */
	if (t->explicit)
		input_problem(b, t->path, "not an ELF file or an archive");
	return INPUT_OTHER;
}

/*
 * An input whose parts and passed-over images are known without reading it
 * (from the state, or an index): counted and shown as if read. Under b->lock.
 */
static void take_known(struct batch *b, const struct state_input *in)
{
	b->files++;
	for (size_t k = in->part0; k < in->part0 + in->nparts; k++)
		progress_key(b, b->state.parts[k].key);
	for (size_t k = in->skip0; k < in->skip0 + in->nskips; k++)
		say_skipped(b, &b->state.skips[k]);
}

/*
 * The index (--reuse): an input of the old index with the same size but
 * another mtime (a fresh checkout, a downloaded artifact) is taken from it
 * when its contents hash the same; sha is then the hash, computed once.
 */
static bool reuse_by_hash(struct identify_task *t, char sha[65])
{
	struct batch *b = t->b;
	const struct state *old = b->state.saved;
	ssize_t i = old ? state_find_input(old, t->path) : -1;
	bool same;

	if (i < 0 || old->inputs[i].size != t->size || !old->inputs[i].sha256[0] ||
	    sha256_file(t->path, sha))
		return false;
	same = !strcmp(sha, old->inputs[i].sha256);
	pthread_mutex_lock(&b->lock);
	input_opened(b, t->input, t->size);
	if (same && state_copy_input(&b->state, t->input, old, (size_t)i)) {
		pthread_mutex_unlock(&b->lock);
		input_problem(b, t->path, "out of memory");
		return true; /* failed: not read again */
	}
	if (same) {
		b->state.inputs[t->input].from_state = true;
		take_known(b, &b->state.inputs[t->input]);
	}
	pthread_mutex_unlock(&b->lock);
	return same;
}

/*
 * The index: the input's SHA-256, for a later --reuse (and convert) to tell
 * it unchanged. An archive was hashed as it was walked; an ELF file, of
 * which identifying reads the headers alone, is read here.
 */
static void hash_input(struct identify_task *t, enum input_kind kind, char sha[65])
{
	struct batch *b = t->b;

	if (!b->o->indexing || sha[0] || (kind != INPUT_ELF && kind != INPUT_ARCHIVE))
		return;
	if (sha256_file(t->path, sha)) {
		sha[0] = '\0';
		input_problem(b, t->path, "cannot be read again to hash it");
		return;
	}
	pthread_mutex_lock(&b->lock);
	input_opened(b, t->input, t->size);
	pthread_mutex_unlock(&b->lock);
}

static void identify_input(void *arg)
{
	struct identify_task *t = arg;
	struct batch *b = t->b;
	enum input_kind kind = INPUT_UNKNOWN;
	char sha[65] = "";
	int fd;

	pthread_mutex_lock(&b->lock);
	progress_input(b, t->path);
	pthread_mutex_unlock(&b->lock);
	if (b->o->indexing && reuse_by_hash(t, sha)) {
		free(t);
		return;
	}
	fd = open_regular(t->path);
	if (fd < 0) {
		input_problem(b, t->path, open_regular_error(fd));
	} else {
		kind = identify_fd(t, fd, sha);
		close(fd);
	}
	hash_input(t, kind, sha);
	pthread_mutex_lock(&b->lock);
	b->state.inputs[t->input].kind = kind;
	memcpy(b->state.inputs[t->input].sha256, sha, sizeof(sha));
	/* An ELF file is mapped, an archive streamed to its end; of others, the head. */
	if (fd >= 0)
		input_opened(b, t->input, kind == INPUT_OTHER && t->size > 512 ? 512 : t->size);
	b->files++;
	b->bytes += t->size;
	progress(b);
	pthread_mutex_unlock(&b->lock);
	free(t);
}

/* The index's --shard K/N: an input's slice, by a hash of its path as walked (FNV-1a). */
static bool input_shard_of(const struct batch_opts *o, const char *path)
{
	return !o->shard_n || str_hash64(path) % o->shard_n == o->shard_k - 1;
}

static void found_file(void *ctx, const char *path, bool explicit)
{
	struct batch *b = ctx;
	struct identify_task *t;
	struct stat st;
	ssize_t idx;
	bool known;

	if (stat(path, &st) || (b->o->indexing && !input_shard_of(b->o, path)))
		return;
	pthread_mutex_lock(&b->lock);
	idx = state_add_input(&b->state, path, (uint64_t)st.st_size,
			      (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
	known = idx >= 0 && b->state.inputs[idx].from_state;
	if (known) {
		/* Unchanged since the last run: its parts and what was passed over are known. */
		take_known(b, &b->state.inputs[idx]);
		progress(b);
	}
	pthread_mutex_unlock(&b->lock);
	if (idx == STATE_DUPLICATE || known)
		return; /* named twice or reached twice; or read last run */
	if (idx < 0) {
		input_problem(b, path, "out of memory");
		return;
	}
	t = malloc(sizeof(*t) + strlen(path) + 1);
	if (!t) {
		input_problem(b, path, "out of memory");
		return;
	}
	*t = (struct identify_task){ b, (size_t)idx, explicit, (uint64_t)st.st_size };
	strcpy(t->path, path);
	pool_add(&b->pool, identify_input, t);
}

static void walk_problem(void *ctx, const char *path, const char *msg)
{
	input_problem(ctx, path, msg);
}

/* The output directory, met in a tree of inputs: not read (it holds no input, and would grow). */
static void output_met(void *ctx, const char *path)
{
	struct batch *b = ctx;

	pthread_mutex_lock(&b->lock);
	end_progress(b);
	if (verbosity >= 1)
		fprintf(stderr, "lidiagen: %s: the output directory (-o), not read as input\n",
			path);
	pthread_mutex_unlock(&b->lock);
}

void identify_inputs(struct batch *b, char **paths, size_t npaths)
{
	struct walk_calls calls = {
		.file = found_file, .problem = walk_problem, .skipped = output_met, .ctx = b
	};

	walk_paths(&b->walk, paths, npaths, &calls);
	pool_wait(&b->pool);
	/* Every ELF image: those read now, and those the state knew. */
	b->elves = b->state.nparts + b->state.nskips;
}

void identify_from_index(struct batch *b, const struct index *ix)
{
	const struct state *from = &ix->st;

	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < from->ninputs; i++) {
		const struct state_input *in = &from->inputs[i];
		ssize_t idx = state_add_input(&b->state, in->path, in->size, in->mtime);
		struct state_input *to;

		if (idx == STATE_DUPLICATE)
			continue;
		/* With --state, an input it knows unchanged came with its parts already. */
		if (idx < 0 || (!b->state.inputs[idx].from_state &&
				state_copy_input(&b->state, (size_t)idx, from, i))) {
			pthread_mutex_unlock(&b->lock);
			input_problem(b, in->path, "out of memory");
			pthread_mutex_lock(&b->lock);
			continue;
		}
		to = &b->state.inputs[idx];
		memcpy(to->sha256, in->sha256, sizeof(in->sha256));
		take_known(b, to);
	}
	b->elves = b->state.nparts + b->state.nskips;
	pthread_mutex_unlock(&b->lock);
	for (size_t e = 0; e < ix->errors.n; e++)
		input_problem(b, ix->errors.v[e].path, ix->errors.v[e].msg);
}
