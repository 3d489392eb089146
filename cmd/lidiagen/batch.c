/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The batch (see batch.h), in two phases:
 *
 *  1. Identify: every input file is read once (in parallel): an ELF file
 *     becomes a part, an archive is streamed and each ELF member becomes a
 *     part; a part records its key (GNU build ID) and what it holds, and its
 *     bytes are let go. Unchanged inputs of an earlier run are taken from the
 *     state file without reading them.
 *  2. Convert: parts are grouped by key; each group picks its best image
 *     (the one with DWARF, say) and its binary, and is converted unless the
 *     output already has as much. Plain files are mapped; archives are
 *     streamed again, one at a time, keeping only the members some group
 *     still needs, so memory follows the largest input, not the tree.
 *
 * Outputs depend on the parts alone, never on the thread count or the order
 * in which inputs were found: groups and their parts are sorted first.
 *
 * Threads: the walker (the calling thread) and the pool's workers share one
 * struct batch, and b->lock is its only lock. Under it, and only under it:
 * the state (inputs, parts, outputs: adding may move the arrays), the counts,
 * the groups' status/done/dispatched/data fields and message printing. A
 * task carries a copy of what it reads (identify_task's path and size); a
 * group's own fields (st, level, out_key, sha) belong to the one worker
 * converting it. Phase 2 starts after pool_wait, when the parts are fixed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "cli.h"
#include "guard.h"
#include "pool.h"
#include "sha256.h"
#include "state.h"
#include "walk.h"

/* How much an output holds: each level includes the ones below. */
enum level { LEVEL_NONE, LEVEL_SYMBOLS, LEVEL_LINES, LEVEL_INLINES };

static const char *const level_names[] = { "nothing", "symbols", "symbols+lines",
					   "symbols+lines+inlines" };

enum status { ST_PENDING, ST_CONVERTED, ST_KEPT, ST_FAILED, ST_OTHER_SHARD };

struct group {
	const char *key;
	size_t first, n;	/* its parts: parts[first .. first + n) */
	ssize_t main, bin;	/* the images read, indexes into parts, -1: none */
	enum level predicted;
	enum status status;
	bool done;		/* converted, kept or failed: its lines may be printed */
	bool dispatched;	/* handed to the pool (under the batch lock once threads run) */
	char out_key[512];
	struct lidia_extract_stats st;
	enum level level;
	uint64_t out_size;
	char sha[65];
	char *message;		/* what to print for it, in group order */
	bool message_is_error;
	unsigned char *data[2]; /* loaded archive members of main and bin */
	size_t size[2];
};

struct batch {
	const struct batch_opts *o;
	struct walk_opts walk;
	pthread_mutex_t lock;	/* guards all below but o and walk: see the top */
	struct state state;	/* parts and inputs, as identified */
	struct group *groups;
	size_t ngroups;
	size_t next_print;
	struct pool pool;
	/* counts for the progress line and the summary */
	size_t files, elves, no_key, failed_inputs, converted, kept, failed, skipped_shard;
	uint64_t bytes;
	bool tty;
	struct timespec last_progress;
};

/* ---- Messages and progress ---------------------------------------------------- */

static void progress(struct batch *b, bool force)
{
	struct timespec now;

	if (!b->tty || verbosity < 1)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!force && now.tv_sec * 1000 + now.tv_nsec / 1000000 <
			      b->last_progress.tv_sec * 1000 + b->last_progress.tv_nsec / 1000000 + 100)
		return;
	b->last_progress = now;
	fprintf(stderr,
		"\rlidiagen: %zu files, %zu ELF, %zu converted, %zu kept, %zu skipped, %zu failed, %.1f MiB\033[K",
		b->files, b->elves, b->converted, b->kept, b->no_key, b->failed + b->failed_inputs,
		(double)b->bytes / (1 << 20));
}

static void end_progress(struct batch *b)
{
	if (b->tty && verbosity >= 1)
		fprintf(stderr, "\r\033[K");
}

/* An input problem: one line naming it; the batch goes on. */
static void input_problem(void *ctx, const char *path, const char *msg)
{
	struct batch *b = ctx;

	pthread_mutex_lock(&b->lock);
	end_progress(b);
	error(path, "%s", msg);
	b->failed_inputs++;
	pthread_mutex_unlock(&b->lock);
}

/* ---- Phase 1: identify ---------------------------------------------------------- */

/* A part's key: its GNU build ID, or what --fallback-key makes of it. */
static bool part_key(struct batch *b, struct lidia_elf *e, const struct lidia_elf_info *info,
		     const void *data, size_t size, char *key, size_t key_size)
{
	if (!lidia_elf_build_id(e, key, key_size))
		return true;
	if (b->o->fallback == FALLBACK_GO && info->go_build_id[0]) {
		size_t n = strlen(info->go_build_id);

		if (2 * n + 1 > key_size)
			n = (key_size - 1) / 2;
		for (size_t i = 0; i < n; i++)
			snprintf(key + 2 * i, 3, "%02x", (unsigned char)info->go_build_id[i]);
		return true;
	}
	if (b->o->fallback == FALLBACK_SHA256 && data) {
		char sha[65];

		sha256_hex(data, size, sha);
		snprintf(key, key_size, "%.40s", sha);
		return true;
	}
	return false;
}

/* What identifying one ELF image gives (read_part). */
struct part_read {
	struct batch *b;
	const char *path;
	void *data;		/* the member's bytes; NULL: map the file at path */
	size_t size;
	int err;
	struct lidia_elf_info info;
	char key[LIDIA_KEY_MAX];
	bool has_key;
};

/* The file's bytes, for --fallback-key sha256 (the image maps them already). */
static bool file_sha_key(struct part_read *pr, struct lidia_elf *e)
{
	int fd = open(pr->path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *buf = NULL;
	bool has_key = false;

	if (fd >= 0 && !fstat(fd, &st) && (buf = malloc((size_t)st.st_size + 1)) &&
	    read(fd, buf, (size_t)st.st_size) == st.st_size)
		has_key = part_key(pr->b, e, &pr->info, buf, (size_t)st.st_size, pr->key,
				   sizeof(pr->key));
	free(buf);
	if (fd >= 0)
		close(fd);
	return has_key;
}

/* Open the image, and read its key and what it holds (under guard_run). */
static void read_part(void *arg)
{
	struct part_read *pr = arg;
	struct lidia_elf *e = NULL;

	pr->err = pr->data ? lidia_elf_open_mem(&e, pr->data, pr->size, pr->path)
			   : lidia_elf_open(&e, pr->path);
	if (pr->err)
		return;
	lidia_elf_info(e, &pr->info);
	if (!pr->data && pr->b->o->fallback == FALLBACK_SHA256 &&
	    lidia_elf_build_id(e, pr->key, sizeof(pr->key)))
		pr->has_key = file_sha_key(pr, e);
	else
		pr->has_key = part_key(pr->b, e, &pr->info, pr->data, pr->size, pr->key,
				       sizeof(pr->key));
	lidia_elf_close(e);
}

/* Record one ELF image found at path (a file, or a member of the input file). */
static void add_part(struct batch *b, size_t input, const char *path, const char *member,
		     void *data, size_t size)
{
	struct part_read pr = { .b = b, .path = path, .data = data, .size = size };

	if (guard_run(read_part, &pr)) {
		input_problem(b, path, "changed while being read (truncated by another process?)");
		return;
	}
	if (pr.err == LIDIA_E_ELF_TYPE) {
		/* Object files and core dumps: not what symbol files are for. */
		if (verbosity >= 2) {
			pthread_mutex_lock(&b->lock);
			fprintf(stderr, "lidiagen: %s: %s, skipped\n", path, lidia_strerror(pr.err));
			pthread_mutex_unlock(&b->lock);
		}
		return;
	}
	if (pr.err) {
		input_problem(b, path, lidia_strerror(pr.err));
		return;
	}

	pthread_mutex_lock(&b->lock);
	b->elves++;
	if (!pr.has_key) {
		b->no_key++;
		end_progress(b);
		warning(path, "no GNU build ID, skipped%s",
			pr.info.go_build_id[0] ? " (a Go binary: see --fallback-key)" : "");
	} else if (!lidia_build_id_valid(pr.key)) {
		b->no_key++;
		end_progress(b);
		warning(path, "build ID '%.32s' is too short to be a key (under %d bytes), skipped",
			pr.key, LIDIA_BUILD_ID_MIN);
	} else {
		state_add_part(&b->state, input, path, member, pr.key, &pr.info, size);
	}
	progress(b, false);
	pthread_mutex_unlock(&b->lock);
}

struct member_ctx {
	struct batch *b;
	size_t input;
};

static int identify_member(void *ctx, const char *path, const char *member, unsigned char *data,
			   size_t size)
{
	struct member_ctx *m = ctx;

	add_part(m->b, m->input, path, member, data, size);
	free(data);
	return 0;
}

/* A problem inside an archive, reported from the member walk's context. */
static void member_problem(void *ctx, const char *path, const char *msg)
{
	input_problem(((struct member_ctx *)ctx)->b, path, msg);
}

static bool want_member(void *ctx, const char *member)
{
	struct member_ctx *m = ctx;

	return walk_wanted(&m->b->walk, member);
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

static enum input_kind identify_fd(struct identify_task *t, int fd)
{
	struct batch *b = t->b;
	unsigned char head[512];
	ssize_t n = pread(fd, head, sizeof(head), 0);

	if (n >= 4 && !memcmp(head, "\x7f" "ELF", 4)) {
		add_part(b, t->input, t->path, NULL, NULL, (size_t)t->size);
		return INPUT_ELF;
	}
	if (n > 0 && lidia_archive_magic(head, (size_t)n)) {
		struct member_ctx m = { b, t->input };
		struct lidia_archive_cb cb = { .elf = identify_member, .want = want_member,
					       .problem = member_problem, .ctx = &m };
		unsigned problems = 0;
		int err = lidia_archive_walk_fd(fd, t->path, &b->o->limits, &cb, &problems);

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

static void identify_input(void *arg)
{
	struct identify_task *t = arg;
	struct batch *b = t->b;
	enum input_kind kind = INPUT_UNKNOWN;
	int fd;

	fd = open(t->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		input_problem(b, t->path, strerror(errno));
	} else {
		kind = identify_fd(t, fd);
		close(fd);
	}
	pthread_mutex_lock(&b->lock);
	b->state.inputs[t->input].kind = kind;
	b->files++;
	b->bytes += t->size;
	progress(b, false);
	pthread_mutex_unlock(&b->lock);
	free(t);
}

static void found_file(void *ctx, const char *path, bool explicit)
{
	struct batch *b = ctx;
	struct identify_task *t;
	struct stat st;
	ssize_t idx;
	bool known;

	if (stat(path, &st))
		return;
	pthread_mutex_lock(&b->lock);
	idx = state_add_input(&b->state, path, (uint64_t)st.st_size,
			      (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
	known = idx >= 0 && b->state.inputs[idx].from_state;
	if (known) {
		/* Unchanged since the last run: its parts are known already. */
		b->files++;
		progress(b, false);
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

/* ---- Phase 2: groups ---------------------------------------------------------------- */

/* The rank of a part as the image to read: more information first. */
static int part_rank(const struct state_part *p)
{
	return (p->info.has_dwarf ? 8 : 0) + (p->info.has_go ? 4 : 0) + (p->info.has_symtab ? 2 : 0) +
	       (p->member ? 0 : 1);
}

static bool shard_of(const struct batch_opts *o, const char *key)
{
	char head[9] = { 0 };

	if (!o->shard_n)
		return true;
	memcpy(head, key, strnlen(key, 8));
	return strtoul(head, NULL, 16) % o->shard_n == o->shard_k - 1;
}

static enum level predicted_level(const struct batch_opts *o, const struct state_part *p)
{
	bool rich = (p->info.has_dwarf && !o->extract.no_dwarf) || (p->info.has_go && !o->extract.no_go);

	if (!rich || o->extract.no_lines)
		return rich && !o->extract.no_inlines ? LEVEL_INLINES : LEVEL_SYMBOLS;
	return o->extract.no_inlines ? LEVEL_LINES : LEVEL_INLINES;
}

static int make_groups(struct batch *b)
{
	struct state *s = &b->state;

	state_sort_parts(s);
	for (size_t i = 0; i < s->nparts;) {
		struct group *g;
		size_t j = i;
		void *p;

		while (j < s->nparts && !strcmp(s->parts[j].key, s->parts[i].key))
			j++;
		p = realloc(b->groups, (b->ngroups + 1) * sizeof(*b->groups));
		if (!p)
			return -ENOMEM;
		b->groups = p;
		g = &b->groups[b->ngroups++];
		memset(g, 0, sizeof(*g));
		g->key = s->parts[i].key;
		g->first = i;
		g->n = j - i;
		g->main = g->bin = -1;
		/* Parts are sorted by key, then path: the first best one wins every run. */
		for (size_t k = i; k < j; k++) {
			const struct state_part *pt = &s->parts[k];

			if (g->main < 0 || part_rank(pt) > part_rank(&s->parts[g->main]))
				g->main = (ssize_t)k;
			if (!pt->info.debug_file &&
			    (g->bin < 0 || (!pt->member && s->parts[g->bin].member)))
				g->bin = (ssize_t)k;
		}
		if (g->bin == g->main)
			g->bin = -1;
		g->predicted = predicted_level(b->o, &s->parts[g->main]);
		if (g->bin >= 0 && predicted_level(b->o, &s->parts[g->bin]) > g->predicted)
			g->predicted = predicted_level(b->o, &s->parts[g->bin]);
		{
			/* Unchanged parts give what they gave last time (-O0: no inlines). */
			bool unchanged = true;
			int last = state_output_level(s->saved, g->key);

			for (size_t k = i; k < j; k++)
				unchanged &= s->inputs[s->parts[k].input].from_state;
			if (unchanged && last > 0 && last < (int)g->predicted)
				g->predicted = (enum level)last;
		}
		if (!shard_of(b->o, g->key)) {
			g->status = ST_OTHER_SHARD;
			g->done = true;
			b->skipped_shard++;
		}
		i = j;
	}
	return 0;
}

/* How much a file already in the tree holds. */
static enum level file_level(const char *path, struct lidia_extract_stats *st, uint64_t *size,
			     char sha[65])
{
	struct lidia_reader *r;
	struct lidia_file_info fi;
	enum level l = LEVEL_SYMBOLS;

	if (lidia_reader_open(&r, path, &LIDIA_READER_OPTS(.check_crc = true)))
		return LEVEL_NONE;
	lidia_reader_info(r, &fi);
	memset(st, 0, sizeof(*st));
	st->line_rows = fi.lines.count;
	for (size_t i = 0; i < lidia_reader_count(r); i++) {
		struct lidia_range_info ri;

		if (lidia_reader_range(r, i, &ri))
			continue;
		if (ri.depth)
			st->inline_ranges++;
		else
			st->functions++;
	}
	if (st->line_rows)
		l = LEVEL_LINES;
	if (st->inline_ranges)
		l = LEVEL_INLINES;
	*size = fi.file_size;
	lidia_reader_close(r);
	if (sha)
		sha256_file(path, sha);
	return l;
}

static enum level stats_level(const struct lidia_extract_stats *st)
{
	return st->inline_ranges ? LEVEL_INLINES : st->line_rows ? LEVEL_LINES : LEVEL_SYMBOLS;
}

/* Print the lines of the groups done, in group order. */
static void print_done(struct batch *b)
{
	while (b->next_print < b->ngroups && b->groups[b->next_print].done) {
		struct group *g = &b->groups[b->next_print++];

		if (g->message) {
			end_progress(b);
			if (g->message_is_error)
				fprintf(stderr, "lidiagen: %s\n", g->message);
			else if (verbosity >= 1)
				printf("%s\n", g->message);
			free(g->message);
			g->message = NULL;
		}
	}
	fflush(stdout);
	progress(b, false);
}

static void group_message(struct group *g, bool is_error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void group_message(struct group *g, bool is_error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&g->message, fmt, ap) < 0)
		g->message = NULL;
	va_end(ap);
	g->message_is_error = is_error;
}

static void convert_group(void *arg);

struct convert_task {
	struct batch *b;
	struct group *g;
};

static int open_part(struct batch *b, struct group *g, ssize_t idx, int slot,
		     struct lidia_elf **out)
{
	const struct state_part *p = &b->state.parts[idx];

	if (!p->member)
		return lidia_elf_open(out, p->path);
	if (!g->data[slot])
		return -ENOENT; /* the member was not found again: the archive changed */
	return lidia_elf_open_mem(out, g->data[slot], g->size[slot], p->path);
}

/* Reading a group's images into a builder (under guard_run). */
struct group_read {
	struct batch *b;
	struct group *g;
	struct lidia_builder *bld;
	int err;
};

static void extract_group(void *arg)
{
	struct group_read *gr = arg;
	struct group *g = gr->g;
	struct lidia_elf *elfs[2] = { NULL, NULL };
	size_t n = 0;

	/* The binary first, then the image with the most information. */
	if ((g->bin < 0 || !(gr->err = open_part(gr->b, g, g->bin, 1, &elfs[n++]))) &&
	    !(gr->err = open_part(gr->b, g, g->main, 0, &elfs[n++])) &&
	    !(gr->err = lidia_builder_new(&gr->bld)))
		gr->err = lidia_extract(gr->bld, elfs, n, &gr->b->o->extract, &g->st);
	/* The images are done with: their pages go before the tables are written. */
	lidia_elf_close(elfs[0]);
	lidia_elf_close(elfs[1]);
}

static void convert_group(void *arg)
{
	struct convert_task *t = arg;
	struct batch *b = t->b;
	struct group *g = t->g;
	const struct batch_opts *o = b->o;
	struct lidia_builder *bld = NULL;
	const struct state_part *mp = &b->state.parts[g->main];
	char path[PATH_MAX];
	enum level existing = LEVEL_NONE;
	struct lidia_extract_stats old_st;
	uint64_t old_size = 0;
	char old_sha[65] = "";
	int err;

	free(t);
	if (strcmp(o->out_dir, "-")) {
		err = lidia_store_key(g->out_key, sizeof(g->out_key), g->key, &o->store);
		if (err) {
			group_message(g, true, "%s: %s", mp->path, lidia_strerror(err));
			g->status = ST_FAILED;
			goto out;
		}
		snprintf(path, sizeof(path), "%s/%s", o->out_dir, g->out_key);
		if (!o->force && !access(path, F_OK)) {
			existing = file_level(path, &old_st, &old_size, o->manifest ? old_sha : NULL);
			if (existing >= g->predicted) {
				g->status = ST_KEPT;
				g->st = old_st;
				g->level = existing;
				g->out_size = old_size;
				memcpy(g->sha, old_sha, sizeof(g->sha));
				pthread_mutex_lock(&b->lock);
				state_set_output(&b->state, g->key,
						 state_output_level(b->state.saved, g->key) > 0
							 ? state_output_level(b->state.saved, g->key)
							 : (int)existing);
				pthread_mutex_unlock(&b->lock);
				group_message(g, false, "kept %s/%s: it has %s already", o->out_dir,
					      g->out_key, level_names[existing]);
				goto out;
			}
		}
	}

	{
		struct group_read gr = { .b = b, .g = g };

		if (guard_run(extract_group, &gr)) {
			/* What the reading had made is abandoned (guard.h). */
			group_message(g, true, "%s: changed while being read (truncated by another process?)",
				      mp->path);
			g->status = ST_FAILED;
			goto out;
		}
		if ((err = gr.err)) {
			lidia_builder_free(gr.bld);
			goto fail;
		}
		bld = gr.bld;
	}
	free(g->data[0]);
	free(g->data[1]);
	g->data[0] = g->data[1] = NULL;
	if ((err = lidia_builder_finalize(bld)))
		goto fail;
	g->level = stats_level(&g->st);
	if (existing > g->level) {
		/* What we predicted was more than the images gave: keep the richer file. */
		g->status = ST_KEPT;
		g->st = old_st;
		g->level = existing;
		g->out_size = old_size;
		memcpy(g->sha, old_sha, sizeof(g->sha));
		group_message(g, false, "kept %s/%s: it has %s, the inputs only %s", o->out_dir,
			      g->out_key, level_names[existing], level_names[stats_level(&g->st)]);
		goto out;
	}
	/* Streamed to the file (or stdout), not built in memory first. */
	g->out_size = lidia_builder_file_size(bld);
	if (!strcmp(o->out_dir, "-")) {
		if ((err = lidia_builder_write_fd(bld, STDOUT_FILENO)))
			goto fail;
	} else if ((err = lidia_store_write(bld, o->out_dir, g->out_key)) ||
		   (o->manifest && (err = sha256_file(path, g->sha)))) {
		group_message(g, true, "%s: cannot write '%s': %s", mp->path, path, lidia_strerror(err));
		g->status = ST_FAILED;
		goto out;
	}
	g->status = ST_CONVERTED;
	pthread_mutex_lock(&b->lock);
	state_set_output(&b->state, g->key, (int)g->level);
	pthread_mutex_unlock(&b->lock);
	if (strcmp(o->out_dir, "-")) {
		const char *why = existing ? " (replaced: it had less)" : "";

		group_message(g, false, "%s/%s <- %s%s%s (%zu functions, %zu inline ranges, %zu line rows)%s",
			      o->out_dir, g->out_key, b->state.parts[g->bin >= 0 ? g->bin : g->main].path,
			      g->bin >= 0 ? ", " : "", g->bin >= 0 ? mp->path : "", g->st.functions,
			      g->st.inline_ranges, g->st.line_rows, why);
	}
	goto out;
fail:
	group_message(g, true, "%s: %s", mp->path, lidia_strerror(err));
	g->status = ST_FAILED;
out:
	lidia_builder_free(bld);
	pthread_mutex_lock(&b->lock);
	if (g->status == ST_CONVERTED)
		b->converted++;
	else if (g->status == ST_KEPT)
		b->kept++;
	else if (g->status == ST_FAILED)
		b->failed++;
	g->done = true;
	print_done(b);
	pthread_mutex_unlock(&b->lock);
}

static void dispatch(struct batch *b, struct group *g)
{
	struct convert_task *t = malloc(sizeof(*t));

	g->status = ST_PENDING;
	g->dispatched = true;
	if (!t) {
		g->status = ST_FAILED;
		g->done = true;
		return;
	}
	*t = (struct convert_task){ b, g };
	pool_add(&b->pool, convert_group, t);
}

/* Which archive member slot of which group a loaded member fills. */
struct capture_ctx {
	struct batch *b;
	size_t input;
};

static int capture_member(void *ctx, const char *path, const char *member, unsigned char *data,
			  size_t size)
{
	struct capture_ctx *c = ctx;
	struct batch *b = c->b;

	(void)member;
	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->ngroups; i++) {
		struct group *g = &b->groups[i];
		ssize_t idx[2] = { g->main, g->bin };

		if (g->dispatched || g->done)
			continue;
		for (int s = 0; s < 2; s++) {
			const struct state_part *p = idx[s] >= 0 ? &b->state.parts[idx[s]] : NULL;

			if (p && p->member && p->input == c->input && !g->data[s] &&
			    !strcmp(p->path, path)) {
				g->data[s] = data;
				g->size[s] = size;
				pthread_mutex_unlock(&b->lock);
				return 0;
			}
		}
	}
	pthread_mutex_unlock(&b->lock);
	free(data);
	return 0;
}

static bool capture_want(void *ctx, const char *member)
{
	return walk_wanted(&((struct capture_ctx *)ctx)->b->walk, member);
}

static bool group_uses_input(const struct batch *b, const struct group *g, size_t input)
{
	ssize_t idx[2] = { g->main, g->bin };

	for (int s = 0; s < 2; s++)
		if (idx[s] >= 0 && b->state.parts[idx[s]].member && b->state.parts[idx[s]].input == input)
			return true;
	return false;
}

/* True when every archive member the group reads is loaded. */
static bool group_ready(const struct batch *b, const struct group *g)
{
	ssize_t idx[2] = { g->main, g->bin };

	for (int s = 0; s < 2; s++)
		if (idx[s] >= 0 && b->state.parts[idx[s]].member && !g->data[s])
			return false;
	return true;
}

/* Whether a group must be converted at all (or its output is known to be enough). */
static bool needs_work(struct batch *b, struct group *g)
{
	char path[PATH_MAX];
	struct lidia_extract_stats st;
	uint64_t size;

	if (g->done)
		return false;
	if (b->o->force || !strcmp(b->o->out_dir, "-") ||
	    lidia_store_key(g->out_key, sizeof(g->out_key), g->key, &b->o->store))
		return true;
	snprintf(path, sizeof(path), "%s/%s", b->o->out_dir, g->out_key);
	/* Kept outputs are settled in convert_group; this only spares the archive reads. */
	return access(path, F_OK) || file_level(path, &st, &size, NULL) < g->predicted;
}

/*
 * One archive, streamed once: its members go to the groups that read them,
 * and each group whose every part is now here is converted. Archives stream
 * side by side (one per job), so memory holds a few archives' members, not
 * the tree's.
 */
struct archive_task {
	struct batch *b;
	size_t input;
};

static void stream_archive(void *arg)
{
	struct archive_task *t = arg;
	struct batch *b = t->b;
	struct state *s = &b->state;
	struct capture_ctx c = { b, t->input };
	/* Problems were said when the archive was first read: not again. */
	struct lidia_archive_cb cb = { .elf = capture_member, .want = capture_want, .ctx = &c };
	struct group **ready;
	size_t nready = 0;
	int fd;

	fd = open(s->inputs[t->input].path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		lidia_archive_walk_fd(fd, s->inputs[t->input].path, &b->o->limits, &cb, NULL);
		close(fd);
	}
	ready = malloc(b->ngroups * sizeof(*ready) + 1);
	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; ready && i < b->ngroups; i++) {
		struct group *g = &b->groups[i];

		if (!g->dispatched && !g->done && group_uses_input(b, g, t->input) &&
		    group_ready(b, g)) {
			g->dispatched = true;
			ready[nready++] = g;
		}
	}
	pthread_mutex_unlock(&b->lock);
	for (size_t i = 0; i < nready; i++)
		dispatch(b, ready[i]);
	free(ready);
	free(t);
}

static int convert_all(struct batch *b)
{
	struct state *s = &b->state;
	bool *needed = calloc(s->ninputs + 1, sizeof(*needed));

	if (!needed)
		return -ENOMEM;
	/* Groups read from plain files (or already settled) go first. */
	for (size_t i = 0; i < b->ngroups; i++) {
		struct group *g = &b->groups[i];

		if (g->done)
			continue;
		if (group_ready(b, g) || !needs_work(b, g)) {
			dispatch(b, g);
			continue;
		}
		for (size_t k = 0; k < s->ninputs; k++)
			if (group_uses_input(b, g, k))
				needed[k] = true;
	}
	/* Then the archives, side by side with those conversions. */
	for (size_t k = 0; k < s->ninputs; k++) {
		struct archive_task *t;

		if (!needed[k] || !(t = malloc(sizeof(*t))))
			continue;
		*t = (struct archive_task){ b, k };
		pool_add(&b->pool, stream_archive, t);
	}
	pool_wait(&b->pool);
	/* A member not found again (the archive changed since): the group says so. */
	for (size_t i = 0; i < b->ngroups; i++)
		if (!b->groups[i].dispatched && !b->groups[i].done)
			dispatch(b, &b->groups[i]);
	pool_wait(&b->pool);
	free(needed);
	return 0;
}

/* ---- The manifest ----------------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
	json_string(f, s, strlen(s));
}

static int write_manifest(struct batch *b)
{
	const struct batch_opts *o = b->o;
	char tmp[PATH_MAX];
	FILE *f;
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", o->manifest) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	for (size_t i = 0; i < b->ngroups; i++) {
		const struct group *g = &b->groups[i];

		if (g->status != ST_CONVERTED && g->status != ST_KEPT)
			continue;
		fputs("{\"build_id\":", f);
		json_str(f, g->key);
		fputs(",\"output\":", f);
		json_str(f, g->out_key);
		fprintf(f, ",\"status\":\"%s\",\"inputs\":[", g->status == ST_KEPT ? "kept" : "converted");
		for (size_t k = 0; k < g->n; k++) {
			if (k)
				fputc(',', f);
			json_str(f, b->state.parts[g->first + k].path);
		}
		fprintf(f,
			"],\"holds\":{\"symbols\":true,\"lines\":%s,\"inlines\":%s,\"go\":%s},"
			"\"counts\":{\"functions\":%zu,\"inline_ranges\":%zu,\"line_rows\":%zu},"
			"\"size\":%" PRIu64 ",\"sha256\":\"%s\"}\n",
			g->level >= LEVEL_LINES ? "true" : "false",
			g->level >= LEVEL_INLINES ? "true" : "false",
			b->state.parts[g->main].info.has_go ? "true" : "false", g->st.functions,
			g->st.inline_ranges, g->st.line_rows, g->out_size, g->sha);
	}
	if ((ferror(f) | fclose(f)) || rename(tmp, o->manifest)) {
		int err = errno ? -errno : -EIO;

		unlink(tmp);
		return err;
	}
	return 0;
}

/* ---- The run ------------------------------------------------------------------------------- */

/* Temporary files a killed run left in the output tree: never renamed, never to be synced. */
static void clean_temps(struct batch *b)
{
	size_t removed;
	int err = lidia_store_clean(b->o->out_dir, &b->o->store, &removed);

	if (err)
		warning(b->o->out_dir, "cannot remove stale temporary files: %s", lidia_strerror(err));
	else if (removed && verbosity >= 2)
		fprintf(stderr, "lidiagen: %s: removed %zu temporary files of an unfinished run\n",
			b->o->out_dir, removed);
}

int batch_run(const struct batch_opts *o, char **paths, size_t npaths)
{
	struct batch b = {
		.o = o,
		.walk = { .recursive = o->recursive, .follow_symlinks = o->follow_symlinks,
			  .include = o->include, .exclude = o->exclude, .ninclude = o->ninclude,
			  .nexclude = o->nexclude },
		.tty = isatty(STDERR_FILENO),
	};
	char state_path[PATH_MAX] = "";
	bool to_stdout = !strcmp(o->out_dir, "-"), usage = false;
	unsigned jobs = o->jobs ? o->jobs : (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	int err, serr;

	pthread_mutex_init(&b.lock, NULL);
	state_init(&b.state);
	if (!to_stdout && !o->no_state && o->state) {
		snprintf(state_path, sizeof(state_path), "%s", o->state);
		state_load(&b.state, state_path, o->force);
	}
	if (pool_start(&b.pool, jobs)) {
		error(NULL, "cannot start %u threads", jobs);
		return EXIT_FAILED;
	}

	if (!to_stdout)
		clean_temps(&b);
	walk_paths(&b.walk, paths, npaths, found_file, walk_problem, &b);
	pool_wait(&b.pool);
	b.elves = b.state.nparts + b.no_key;

	err = make_groups(&b);
	if (!err && to_stdout && b.ngroups - b.skipped_shard != 1) {
		end_progress(&b);
		error(NULL, "-o - writes one file, but the inputs have %zu build IDs",
		      b.ngroups - b.skipped_shard);
		usage = b.ngroups > 1;
		err = -EINVAL;
	}
	if (!err)
		err = convert_all(&b);
	pool_wait(&b.pool);
	pthread_mutex_lock(&b.lock);
	for (size_t i = 0; i < b.ngroups; i++)
		b.groups[i].done = true;
	print_done(&b);
	pthread_mutex_unlock(&b.lock);
	pool_stop(&b.pool);
	end_progress(&b);

	if (!err && o->manifest && (err = write_manifest(&b)))
		error(o->manifest, "cannot write the manifest: %s", strerror(-err));
	if (state_path[0] && !b.failed && !b.failed_inputs && (serr = state_save(&b.state, state_path))) {
		error(state_path, "cannot write the state: %s", strerror(-serr));
		err = err ? err : serr;
	}
	if (verbosity >= 1 && !to_stdout)
		fprintf(stderr,
			"lidiagen: %zu files, %zu ELF, %zu build IDs: %zu converted, %zu kept%s; "
			"%zu skipped (no build ID); %zu failed\n",
			b.files, b.elves, b.ngroups - b.skipped_shard, b.converted, b.kept,
			b.skipped_shard ? " (the others are another shard's)" : "", b.no_key,
			b.failed + b.failed_inputs);
	for (size_t i = 0; i < b.ngroups; i++) {
		free(b.groups[i].data[0]);
		free(b.groups[i].data[1]);
		free(b.groups[i].message);
	}
	free(b.groups);
	state_release(&b.state);
	pthread_mutex_destroy(&b.lock);
	if (usage)
		return EXIT_USAGE;
	return err || b.failed || b.failed_inputs ? EXIT_FAILED : EXIT_OK;
}
