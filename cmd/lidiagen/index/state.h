/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the batch knows of its inputs: every top-level file, every ELF part
 * found in it, with its key and what it holds, and every ELF image passed
 * over, with the reason. Saved in the file of
 * --state, outside the output tree, so that a re-run reads only the inputs
 * that changed.
 */
#ifndef LIDIAGEN_STATE_H
#define LIDIAGEN_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lidia.h"

enum input_kind { INPUT_UNKNOWN, INPUT_ELF, INPUT_ARCHIVE, INPUT_OTHER };

struct state_input {
	char *path;
	uint64_t size;
	int64_t mtime; /* ns */
	enum input_kind kind;
	bool from_state;     /* unchanged since the saved run: not read again */
	bool changed;	     /* --index: no longer the file the index describes (never opened) */
	char sha256[65];     /* of its contents, for the index ("": not hashed) */
	unsigned opened;     /* times this run opened it (the manifest's "read" lines) */
	uint64_t bytes_read; /* and the bytes it read of it (mapped files: their size) */
	/*
	 * A loaded state's, and a from_state input's until the parts are
	 * sorted: its parts, parts[part0 .. part0 + nparts), and the images
	 * passed over, skips[skip0 .. skip0 + nskips).
	 */
	size_t part0, nparts;
	size_t skip0, nskips;
};

struct state_part {
	char *path;   /* the file, or file!member!member */
	char *member; /* the member's path in its archive, NULL for a file */
	/*
	 * A member's position: its entry ordinals, outermost archive first,
	 * joined with '.' ("3.0.17"); NULL for a file. Names may repeat or be
	 * cut; the position alone finds the member again (schedule.c).
	 */
	char *at;
	size_t input;
	char key[LIDIA_KEY_MAX];
	struct lidia_elf_info info;
	uint64_t size;
	bool dwz; /* a dwz supplementary file: DWARF, no program headers (index.h kinds) */
};

/*
 * What converting a key's parts gave last time: its level (enum level,
 * batch_internal.h; 0: nothing to symbolize, no output), and whether only
 * exported symbols (.dynsym) gave it, which is warned about every run.
 */
/*
 * What was last seen at an output's key in a bucket: the object's ETag
 * (without quotes; "": nothing recorded) and what its metadata said it
 * holds. A listing that shows the same ETag there again needs no HEAD.
 */
struct state_remote {
	char etag[80];
	bool valid; /* lidiagen's metadata */
	int level;
	size_t functions, inline_ranges, line_rows;
	uint64_t size;
	char sha[65];
};

struct state_output {
	char key[LIDIA_KEY_MAX];
	int level; /* -1: not known (only the remote object) */
	bool dynsym_only;
	struct state_remote remote;
};

/*
 * How an image without a GNU build ID gets a key (--fallback-key): made
 * alike by identify, the index and convert --index.
 */
enum fallback_key {
	FALLBACK_NONE,
	FALLBACK_GO,	 /* hex of the Go build ID note */
	FALLBACK_SHA256, /* the first 20 bytes of the file's SHA-256, in hex */
};

/* Why an ELF image found has no part (and so no output). */
enum skip_reason {
	SKIP_NO_KEY = 1,     /* no GNU build ID (and no --fallback-key for it) */
	SKIP_SHORT_KEY,	     /* a build ID too short to be a key */
	SKIP_NOT_LINKED,     /* a relocatable object (.o) */
	SKIP_NOT_PROGRAM,    /* a core dump, or another type that is not a program */
	SKIP_DEGENERATE_KEY, /* a build ID of all zeros or all 0xff (and no --fallback-key for it) */
	SKIP_MACHINE,	     /* an architecture lidiagen does not read (LIDIA_E_ELF_MACHINE) */
	SKIP_REASONS
};

/* An ELF image passed over, remembered like a part so a re-run says so again. */
struct state_skip {
	char *path; /* as state_part's */
	size_t input;
	enum skip_reason reason;
	/* SKIP_SHORT_KEY, SKIP_DEGENERATE_KEY: the build ID; SKIP_MACHINE: e_machine, in decimal */
	char key[LIDIA_KEY_MAX];
	bool go;  /* SKIP_NO_KEY: a Go binary */
	bool dwz; /* SKIP_NOT_LINKED: a dwz supplementary file (dwz writes ET_REL) */
};

/* A hash index of strings held in an array: slot i holds a position + 1, or 0. */
struct str_index {
	size_t *slots;
	size_t cap;
};

struct state {
	struct state_output *outputs;
	size_t noutputs, cap_outputs;
	struct str_index output_index; /* by key */
	struct state_input *inputs;
	size_t ninputs, cap_inputs;
	struct str_index input_index; /* by path */
	struct state_part *parts;
	size_t nparts, cap_parts;
	struct state_skip *skips;
	size_t nskips, cap_skips;
	struct state *saved; /* the last run's, while adding inputs */
};

#define STATE_DUPLICATE (-2)

/* Record what is at key's output in the bucket now; 0 or -ENOMEM. */
int state_set_remote(struct state *s, const char *key, const struct state_remote *r);

/* What the state recorded at key's output in the bucket; NULL: nothing (or s NULL). */
const struct state_remote *state_remote(const struct state *s, const char *key);

void state_init(struct state *s);
void state_release(struct state *s);

/*
 * Read the saved state at path; a missing, unreadable or older-format file,
 * or ignore set, leaves nothing saved (everything is read again).
 */
void state_load(struct state *s, const char *path, bool ignore);

/* Write the state to path atomically (tempfile.h); 0 or -errno. */
int state_save(struct state *s, const char *path);

/*
 * Add a top-level input; when the saved state has it with the same size and
 * mtime, its parts come along and the input is marked from_state. Returns
 * its index, STATE_DUPLICATE when the path is there already, or -ENOMEM.
 */
ssize_t state_add_input(struct state *s, const char *path, uint64_t size, int64_t mtime);

/* The index of the input at path, or -1. */
ssize_t state_find_input(const struct state *s, const char *path);

/*
 * Give input idx of s the kind, hash, parts and images passed over of input
 * from_idx of from (an earlier run's, or an index's), which must not be s.
 * 0 or -ENOMEM.
 */
int state_copy_input(struct state *s, size_t idx, const struct state *from, size_t from_idx);

/*
 * The indexes of the parts (skips: of the images passed over) ordered by
 * their input, each input's in the order they were added; malloc'd, NULL
 * when out of memory.
 */
size_t *state_order_by_input(const struct state *s, bool skips);

int state_add_part(struct state *s, size_t input, const char *path, const char *member,
		   const char *at, const char *key, const struct lidia_elf_info *info,
		   uint64_t size);

/* Room for a position (state_part.at): 17 levels (--max-depth 16) of 10 digits and a '.'. */
#define STATE_POSITION_MAX 256

/* The position at[0..depth) as state_part.at spells it, into buf; -ENOSPC when too long. */
int state_position(char *buf, size_t size, const uint32_t *at, unsigned depth);

/* Whether a position is well formed: numbers joined with '.', each at most 10 digits. */
bool state_position_valid(const char *at);

/* Remember an ELF image of input that has no part, and why (key: the build ID, or ""). */
int state_add_skip(struct state *s, size_t input, const char *path, enum skip_reason reason,
		   const char *key, bool go);

/*
 * Remember (or look up: -1 when unknown) the level a key's conversion gave,
 * and whether only .dynsym gave it (state_output_dynsym_only: false when unknown).
 */
int state_set_output(struct state *s, const char *key, int level, bool dynsym_only);
int state_output_level(const struct state *s, const char *key);
bool state_output_dynsym_only(const struct state *s, const char *key);

/*
 * Sort the parts by key, then path, then position: the order every decision
 * is made in; the skips by path.
 */
void state_sort_parts(struct state *s);

/* FNV-1a of a string: the state's indexes, the index's slices, the progress line's keys. */
uint64_t str_hash64(const char *s);

#endif
