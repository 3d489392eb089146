/* SPDX-License-Identifier: Apache-2.0 */
/*
 * liblidia: build, write and read Lidia v1 symbol files.
 *
 * The sections below follow the pipeline, in its order:
 *   walk      the ELF members of archives (lidia_archive_*)
 *   identify  open an ELF image, its build ID and what it holds (lidia_elf_*)
 *   extract   its functions, inline frames and lines into a builder (lidia_extract)
 *   write     finalize the builder and write it to a sink (lidia_builder_*)
 *   store     its key under a layout, written atomically (lidia_store_*)
 *   read      open a file and look addresses up (lidia_reader_*)
 * after what every step shares: the version, errors and logging.
 *
 * Conventions: functions return 0 or a negative error (-errno for OS
 * failures, LIDIA_E_* for everything else; see lidia_strerror()). Output
 * pointers come first. Heap handles are freed with _free()/_close(), which
 * accept NULL. Options structs begin with their size (set by their
 * LIDIA_*_OPTS() macro); zero fields mean the defaults and NULL means all
 * of them. Fields are only ever added at the end, and no options struct
 * ends in padding (a reserved array fills it, zeroed by the macro), so
 * that every byte past the fields a library knows belongs to a field some
 * other lidia.h knows: a struct with any such byte non-zero, from a newer
 * lidia.h, is refused with LIDIA_E_INVAL, since a request this library
 * cannot honour must not pass unnoticed. The library never prints; see
 * lidia_set_log().
 *
 * The file format, Pyroscope's lookup rules and the key layouts are
 * specified in doc/lidia-v1.md (installed as share/doc/lidiagen/lidia-v1.md);
 * "spec section N" below refers to that document.
 */
#ifndef LIDIA_H
#define LIDIA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LIDIA_API __attribute__((visibility("default")))

#define LIDIA_VERSION_MAJOR 0
#define LIDIA_VERSION_MINOR 1
#define LIDIA_VERSION_PATCH 0
#define LIDIA_VERSION_STRING "0.1.0"

/* The library's version, as "MAJOR.MINOR.PATCH". */
LIDIA_API const char *lidia_version(void);

/*
 * Error codes. One list makes both the enum and the messages of
 * lidia_strerror(). Values are negative and below -4095, so that they never
 * collide with -errno.
 */
#define LIDIA_ERRORS(X)                                                                            \
	X(LIDIA_E_FORMAT, "not a lidia file (bad magic)")                                          \
	X(LIDIA_E_VERSION, "unsupported lidia version")                                            \
	X(LIDIA_E_TRUNCATED, "lidia file is truncated")                                            \
	X(LIDIA_E_WIDTH, "invalid field width in lidia header")                                    \
	X(LIDIA_E_COUNT, "inconsistent table counts in lidia header")                              \
	X(LIDIA_E_OFFSET, "table offset or size out of bounds in lidia file")                      \
	X(LIDIA_E_CRC, "CRC32C mismatch in lidia table")                                           \
	X(LIDIA_E_STRING, "string offset out of bounds in lidia file")                             \
	X(LIDIA_E_LINES, "line table slice out of bounds in lidia file")                           \
	X(LIDIA_E_ORDER, "VA table not sorted in lidia file")                                      \
	X(LIDIA_E_NOT_ELF, "not an ELF file")                                                      \
	X(LIDIA_E_ELF, "malformed ELF file")                                                       \
	X(LIDIA_E_ELF_TRUNCATED, "truncated ELF file (sections past its end)")                     \
	X(LIDIA_E_GO, "malformed Go pclntab")                                                      \
	X(LIDIA_E_DWARF_LINES, "malformed DWARF line program")                                     \
	X(LIDIA_E_ARCHIVE, "unreadable archive")                                                   \
	X(LIDIA_E_NO_LIBARCHIVE, "libarchive.so.13 cannot be loaded")                              \
	X(LIDIA_E_ELF_TYPE, "ELF file is neither an executable nor a shared object")               \
	X(LIDIA_E_NO_BUILD_ID, "no GNU build ID")                                                  \
	X(LIDIA_E_BUILD_ID_MISMATCH, "build IDs of the inputs differ")                             \
	X(LIDIA_E_BAD_KEY, "invalid build ID, tenant or layout for an output key")                 \
	X(LIDIA_E_TOO_BIG, "value too large for the lidia format")                                 \
	X(LIDIA_E_STATE, "builder used out of order")                                              \
	X(LIDIA_E_INVAL, "invalid argument")                                                       \
	X(LIDIA_E_SINK, "output sink failed")                                                      \
	X(LIDIA_E_NOT_REGULAR, "not a regular file (a FIFO, device or socket), not opened")        \
	X(LIDIA_E_SYMLINK, "a symbolic link inside the output tree, not followed")                 \
	X(LIDIA_E_ELF_CHANGED,                                                                     \
	  "changed while being read (rewritten or truncated by another process?)")                 \
	X(LIDIA_E_ELF_MACHINE, "an architecture lidiagen does not read (doc/architectures.md)")    \
	X(LIDIA_E_ELF_ADDRESSES,                                                                   \
	  "a binary and its debug file laid out apart (not one moved whole, as by prelink)")

enum lidia_error {
	LIDIA_E_BASE_ = -5000,
#define LIDIA_X_ENUM(code, msg) code,
	LIDIA_ERRORS(LIDIA_X_ENUM)
#undef LIDIA_X_ENUM
		LIDIA_E_END_
};

/* A static message for err (a LIDIA_E_* code or -errno). Never NULL. */
LIDIA_API const char *lidia_strerror(int err);

/* ---- Logging ------------------------------------------------------------ */

enum lidia_log_level {
	LIDIA_LOG_WARN,
	LIDIA_LOG_INFO,
	LIDIA_LOG_DEBUG,
};

/*
 * The library reports warnings (a skipped symbol table, a malformed entry it
 * worked around) through this callback. msg has no trailing newline and is
 * valid only during the call. The default callback drops everything.
 * The callback must be thread-safe when the library is used from threads.
 */
typedef void (*lidia_log_fn)(enum lidia_log_level level, const char *msg, void *ctx);

/* A log callback and the ctx it is called with. */
struct lidia_log_cb {
	lidia_log_fn fn; /* NULL: messages are dropped */
	void *ctx;
};

/*
 * Install fn (NULL: drop every message) with ctx, and return the pair it
 * replaces, so that a caller can put it back: lidia_set_log(old.fn, old.ctx).
 * Safe while other threads log: each message goes to the old pair or to the
 * new one, never to one's fn with the other's ctx. A message that was being
 * delivered when this was called may still reach the old pair after it
 * returns.
 */
LIDIA_API struct lidia_log_cb lidia_set_log(lidia_log_fn fn, void *ctx);

/* ---- Walk: ELF members of archives -------------------------------------- */

/*
 * The ELF members of archives (tar with any compression, zip, cpio, ar and
 * so .deb/.ddeb, .rpm), archives inside archives included, streamed through
 * libarchive: nothing is extracted to disk and no member name is ever used
 * as a path. A compressed file that holds no archive (gzip, xz, zstd, bzip2
 * of one file) is read as one member: an ELF file in it (app.debug.xz) is
 * handed over under the compressed file's own path and name; anything else
 * in it is passed over. A damaged archive or compressed stream, at any depth,
 * is a problem naming its path; the ELF members read before the damage
 * showed are handed over, except the one read just before it (said so).
 */

/* The defaults of struct lidia_archive_opts' limits. */
#define LIDIA_ARCHIVE_MAX_MEMBER (4ull << 30)
#define LIDIA_ARCHIVE_MAX_TOTAL (64ull << 30)
#define LIDIA_ARCHIVE_MAX_DEPTH 4

/*
 * A member of an archive, where it is. at[0..depth) are its entry ordinals,
 * outermost archive first: at each level, the 0-based count of the headers
 * read before its own, whatever their type (a compressed file of one
 * member: 0). The same file walked again gives each member the same chain,
 * whatever the names say. path and name are as elf's (for messages: control
 * characters shown as '?', cut at 1023 bytes). Valid during the call.
 */
struct lidia_archive_member {
	const char *path;
	const char *name;
	const uint32_t *at;
	unsigned depth;
	/*
	 * How elf_member's data is held: false, malloc'd; true, a private
	 * writable mapping of an unnamed spill file (opts' spill_over), the
	 * file gone with the mapping. lidia_archive_data_free() frees either.
	 */
	bool mapped;
	/*
	 * The bytes the member really holds: its size, less the pages of zeros
	 * a spill file leaves as holes (a sparse member of 1 GiB may hold 20
	 * KiB). What it costs in memory once its pages are read.
	 */
	uint64_t holds;
};

struct lidia_archive_opts {
	size_t sz;
	/*
	 * Bytes of one ELF member (0: LIDIA_ARCHIVE_MAX_MEMBER): one whose header
	 * declares more is refused before any of it is inflated; one that
	 * declares nothing is refused when its bytes reach the limit, and one
	 * whose bytes outrun what its header declares stops its archive there.
	 */
	uint64_t max_member;
	/*
	 * Bytes inflated from one top-level archive (0: LIDIA_ARCHIVE_MAX_TOTAL),
	 * nested ones included, and the declared sizes of the members read past:
	 * a header declaring more than is left stops the walk before any of it
	 * is inflated.
	 */
	uint64_t max_total;
	/*
	 * Archives inside archives opened, levels below the top one (0:
	 * LIDIA_ARCHIVE_MAX_DEPTH; negative: none). A .deb's data.tar.xz is one
	 * level down.
	 */
	int max_depth;
	/*
	 * An ELF member: path is "outer!inner!member" for messages (a compressed
	 * ELF file: the compressed file's path, member its name); data (size
	 * bytes, malloc'd) now belongs to the callee. Return non-zero to stop.
	 * NULL: members are read (the limits checked) and dropped.
	 */
	int (*elf)(void *ctx, const char *path, const char *member, unsigned char *data,
		   size_t size);
	/* Whether to look at a member (its path inside its archive); NULL: all. */
	bool (*want)(void *ctx, const char *member);
	/*
	 * A problem with one member or the archive, as a message; the walk goes
	 * on where it can. NULL: only counted.
	 */
	void (*problem)(void *ctx, const char *path, const char *msg);
	void *ctx; /* passed to the callbacks */
	/*
	 * The same as elf and want, with the member's position: used instead
	 * of them when set. Two members may have the same name (a tar appended
	 * to, a zip, names cut or cleaned for messages): only the position
	 * tells them apart, and finds a member again in a later walk.
	 */
	int (*elf_member)(void *ctx, const struct lidia_archive_member *m, unsigned char *data,
			  size_t size);
	bool (*want_member)(void *ctx, const struct lidia_archive_member *m);
	/*
	 * With elf_member (elf's data is always malloc'd): a member of more
	 * bytes than this is not read onto the heap but into an unnamed file
	 * in spill_dir (NULL: $TMPDIR, else /tmp), pages of zeros left as
	 * holes, and handed over mapped (m->mapped). Its pages are then the
	 * page cache's, and a sparse member costs what it holds, not what it
	 * claims. 0: never. A spill that fails (a full disk) is a problem with
	 * the member, which is left out.
	 */
	uint64_t spill_over;
	const char *spill_dir;
	/*
	 * A wanted member that is neither ELF nor an archive, declaring at most
	 * other_max bytes (0: none is read): its bytes, which stay the walk's,
	 * to this callback. A container image's JSON files are read so (its
	 * manifest says what its layers are). Return non-zero to stop.
	 */
	int (*other_member)(void *ctx, const struct lidia_archive_member *m,
			    const unsigned char *data, size_t size);
	size_t other_max;
	/*
	 * An entry that is no regular file (a directory, a symbolic link...),
	 * named only: a container image's layer replaces a file by a link or
	 * a directory, which hides it as a file would. NULL: not told.
	 */
	void (*other_entry)(void *ctx, const struct lidia_archive_member *m);
	/*
	 * Every byte of the file, each once, in order from its start to its
	 * end, as the walk reads it: what the walk would seek past, or leave
	 * after the archive's end, is read for this too. A hash of the input
	 * made in the one read that walks it (lidiagen index's SHA-256). Sizes
	 * that add up to other than the file's size mean it could not all be
	 * read (or changed meanwhile). lidia_archive_walk_mem() hands over its
	 * buffer once. NULL: the walk reads what it needs.
	 */
	void (*file_bytes)(void *ctx, const unsigned char *data, size_t size);
};
#define LIDIA_ARCHIVE_OPTS(...)                                                                    \
	((struct lidia_archive_opts){ .sz = sizeof(struct lidia_archive_opts), __VA_ARGS__ })

/* Free a member's data (size bytes) as elf_member was given it: mapped, or malloc'd. */
LIDIA_API void lidia_archive_data_free(unsigned char *data, size_t size, bool mapped);

/* True when the first bytes (at least 512 given, or the whole file) look like an archive. */
LIDIA_API bool lidia_archive_magic(const unsigned char *head, size_t n);

/*
 * Walk the archive open at fd (or in memory), named path in messages, with
 * opts' limits and callbacks (NULL: the default limits, no callback).
 * Returns 0 when walked (problems were reported through opts->problem and
 * counted in *problems, which may be NULL), LIDIA_E_NOT_ELF when it is a
 * compressed file of neither an archive nor an ELF file (or of nothing),
 * with nothing reported, LIDIA_E_INVAL for opts this library cannot honour,
 * or another negative error when it is no readable archive.
 */
LIDIA_API int lidia_archive_walk_fd(int fd, const char *path, const struct lidia_archive_opts *opts,
				    unsigned *problems);
LIDIA_API int lidia_archive_walk_mem(const void *buf, size_t size, const char *path,
				     const struct lidia_archive_opts *opts, unsigned *problems);

/* ---- Identify: ELF images ----------------------------------------------- */

struct lidia_elf;

/*
 * Open an ELF image from a path or from memory. A path is read, never
 * mapped: its headers now, the rest when lidia_extract() needs it, so a file
 * another process truncates meanwhile fails with LIDIA_E_ELF_CHANGED (never a
 * SIGBUS); anything but a regular file is refused (LIDIA_E_NOT_REGULAR)
 * without blocking. buf must outlive the handle and be writable: libelf may
 * convert an image of the other byte order in place. name is used in
 * messages only (may be NULL). Fails with LIDIA_E_NOT_ELF for anything that
 * is not ELF and LIDIA_E_ELF_TYPE for relocatable objects and core files.
 */
LIDIA_API int lidia_elf_open(struct lidia_elf **out, const char *path);
LIDIA_API int lidia_elf_open_mem(struct lidia_elf **out, void *buf, size_t size, const char *name);
LIDIA_API void lidia_elf_close(struct lidia_elf *e);

/*
 * LIDIA_E_ELF_CHANGED when the file e was opened from has changed since
 * (its size, or its modification or change time) while its headers were
 * still read from it: what lidia_elf_build_id() and lidia_elf_info() said
 * may mix two files. 0 otherwise, and always for an image in memory.
 */
LIDIA_API int lidia_elf_check(const struct lidia_elf *e);

/* True when buf starts like an ELF file (cheap; for identifying inputs). */
LIDIA_API bool lidia_is_elf(const void *buf, size_t size);

/*
 * The GNU build ID (NT_GNU_BUILD_ID) as lowercase hex into hex (NUL-ended).
 * Returns LIDIA_E_NO_BUILD_ID when the image has none, -ENOSPC when hex is
 * shorter than 2 * id length + 1.
 */
LIDIA_API int lidia_elf_build_id(const struct lidia_elf *e, char *hex, size_t hex_size);

/* What an image holds, cheaply (section headers and notes only). */
struct lidia_elf_info {
	bool debug_file;       /* .text is NOBITS: a separate debug file */
	bool has_symtab;       /* a .symtab */
	bool has_dwarf;	       /* .debug_info or .debug_line (or .zdebug_) with contents */
	bool has_go;	       /* a Go pclntab section or symbol */
	char go_build_id[128]; /* the Go build ID note, "" when none */
};

LIDIA_API void lidia_elf_info(const struct lidia_elf *e, struct lidia_elf_info *out);

/* ---- Extract ------------------------------------------------------------ */

struct lidia_builder; /* see Write below */

struct lidia_extract_opts {
	size_t sz;
	bool no_dynsym;	  /* leave .dynsym out */
	bool no_symtab;	  /* leave .symtab out */
	bool no_go;	  /* leave the Go pclntab out */
	bool no_inlines;  /* no inline frames (depth > 0 ranges) */
	bool no_lines;	  /* no line tables */
	bool no_files;	  /* no file names (function and call site) */
	bool no_dwarf;	  /* leave DWARF out: symbols (and Go) only */
	bool no_demangle; /* keep C++ and Rust names mangled */
	/*
	 * Debug roots searched for what the images point at: separate debug files
	 * (<dir>/.build-id/xx/yyyy.debug, .gnu_debuglink) and dwz supplementary
	 * files. NULL-terminated; NULL means { "/usr/lib/debug", NULL }.
	 */
	const char *const *debug_dirs;
	bool no_debug_search; /* use only the images given */
	/*
	 * Zero (the macro sees to it). No field can take these bytes since
	 * prefix_map came after them, so a non-zero byte here is refused.
	 */
	uint8_t reserved[7];
	/*
	 * File names rewritten: "OLD=NEW" strings (split at the first '='; OLD
	 * not empty, NEW may be), NULL-terminated, each given to
	 * lidia_builder_map_prefix() in this order before anything is added, so
	 * the first whose OLD begins a name wins. NULL: names as the images give
	 * them. Only on a builder's first extraction (LIDIA_E_STATE after).
	 */
	const char *const *prefix_map;
	/*
	 * When set, the work of every thread an extraction starts is run as
	 * thread_guard(fn, arg), which returns 0, or non-zero when it cut fn
	 * short: that work is then done again on the calling thread, once the
	 * others are done. The calling thread's own share goes through it too
	 * while others run (guards must nest). No input is mapped, so none
	 * needs it against a file truncated while read (lidia_elf_open()).
	 */
	int (*thread_guard)(void (*fn)(void *arg), void *arg);
	/*
	 * Threads one extraction may use, the calling one among them (0 or 1:
	 * the calling thread alone). The output is the same bytes for any count.
	 */
	unsigned threads;
	uint8_t reserved_end[4]; /* zero (the macro sees to it); a non-zero byte is refused */
	/*
	 * A debug root of dwz supplementary files the caller gathered
	 * (<dir>/.build-id/xx/yyyy.debug, each named by its own build ID): looked
	 * in first for the one an image's .gnu_debugaltlink names, even with
	 * no_debug_search (its files are images given, not found). NULL: none.
	 */
	const char *dwz_dir;
};
#define LIDIA_EXTRACT_OPTS(...)                                                                    \
	((struct lidia_extract_opts){ .sz = sizeof(struct lidia_extract_opts), __VA_ARGS__ })

/* What an extraction found. */
struct lidia_extract_stats {
	size_t symbols_read;	 /* function symbols read from all symbol tables */
	size_t functions;	 /* depth-0 ranges added */
	size_t inline_ranges;	 /* depth > 0 ranges added */
	size_t line_rows;	 /* line-table rows added */
	size_t go_functions;	 /* functions from a Go pclntab (0: none found) */
	size_t dwarf_functions;	 /* function ranges from DWARF */
	bool found_debug_file;	 /* a separate debug file was found and read */
	bool used_minidebuginfo; /* symbols from .gnu_debugdata */
	size_t bad_functions;	 /* functions whose inline frames or lines were malformed */
};

/*
 * Extract every function of elfs[0..n) into b: the images of one build
 * (a stripped binary and its debug file, say), merged. A Go pclntab, where
 * there is one, gives its functions with inline frames and lines; DWARF
 * (compressed or not, with its dwz supplementary file, split units and a
 * separate debug file found by build ID or .gnu_debuglink) gives the other
 * functions' inline frames and lines (lines only when the dwz file or a
 * split unit it names is not found: a file holding some of its inline
 * frames would count as one holding all); symbols fill
 * the rest (MiniDebugInfo when there is no .symtab). Function symbols
 * (STT_FUNC, STT_GNU_IFUNC) from .symtab and .dynsym, deduplicated; aliases at
 * one address resolve to one name the same way every run; zero-size and
 * undefined symbols are dropped and overlapping ones are trimmed so that
 * every address maps to the innermost function covering it. Finding no
 * function at all is not an error (a fully stripped binary): stats says so.
 * stats may be NULL. LIDIA_E_INVAL for opts this library cannot honour.
 */
LIDIA_API int lidia_extract(struct lidia_builder *b, struct lidia_elf *const *elfs, size_t n,
			    const struct lidia_extract_opts *opts,
			    struct lidia_extract_stats *stats);

/* ---- Write: the builder ------------------------------------------------- */

/* One row of a range's line table: line applies from va+offset onwards. */
struct lidia_line {
	uint32_t offset;
	uint32_t line;
};

/*
 * One range to add. Strings are copied (interned) by the builder; lines are
 * copied too, so the caller may reuse its buffers after lidia_builder_add().
 * NULL strings mean "". depth 0 is a function, depth n > 0 a frame inlined n
 * levels deep; call_file/call_line name the call site that inlined it. A
 * depth is a uint32_t everywhere in this API (here, struct lidia_frame and
 * struct lidia_range_info).
 */
struct lidia_range_desc {
	uint64_t va;
	uint64_t length;
	uint32_t depth;
	const char *func;
	const char *file;
	const char *call_file;
	uint32_t call_line;
	const struct lidia_line *lines;
	size_t line_count;
};

/* A new, empty builder. *out is NULL on failure. */
LIDIA_API int lidia_builder_new(struct lidia_builder **out);
LIDIA_API void lidia_builder_free(struct lidia_builder *b);

/*
 * Rewrite file names (struct lidia_range_desc's file and call_file, never
 * function names): a name that begins with old_prefix, byte for byte, is
 * stored with new_prefix in its place; "/proc/self/cwd/" to "" makes Bazel's
 * names relative to the workspace, "/home/ci/build/" to "/src/" moves a CI
 * checkout. old_prefix is matched as text: end it with '/' to match whole
 * directories only. Rules are tried in the order they were given and the
 * first that matches wins, so give a longer prefix before a shorter one it
 * begins with; a name that no rule matches is stored as it is. Each distinct
 * name is mapped once, whatever the number of ranges naming it. Both strings
 * are copied. Only before the first lidia_builder_add() (LIDIA_E_STATE
 * after); LIDIA_E_INVAL for an empty or NULL old_prefix or a NULL new_prefix.
 */
LIDIA_API int lidia_builder_map_prefix(struct lidia_builder *b, const char *old_prefix,
				       const char *new_prefix);

/*
 * Add a range. Ranges of zero length are accepted and dropped. Lines must be
 * sorted by offset and lie inside the range. Fails with LIDIA_E_STATE after
 * lidia_builder_finalize().
 */
LIDIA_API int lidia_builder_add(struct lidia_builder *b, const struct lidia_range_desc *r);

/* Number of ranges added so far. */
LIDIA_API size_t lidia_builder_count(const struct lidia_builder *b);

/*
 * Sort the ranges by (va, depth) keeping insertion order among equals,
 * pick the narrowest field widths that hold every value, and compute the
 * CRC32C of each table. After this, only writes are allowed.
 */
LIDIA_API int lidia_builder_finalize(struct lidia_builder *b);

/* Size in bytes of the file the finalized builder writes. */
LIDIA_API uint64_t lidia_builder_file_size(const struct lidia_builder *b);

/*
 * A sink receives the file in order, in pieces; it returns 0 or a negative
 * error, which aborts the write and is returned by lidia_builder_write().
 */
typedef int (*lidia_sink_fn)(void *ctx, const void *buf, size_t len);

/*
 * Write the finalized file to sink, strictly in order (pipes work). The
 * sink is called on the calling thread only; with the extraction's threads
 * (lidia_extract_opts.threads >= 2) a big file's tables are encoded on a
 * second thread meanwhile, which ends before this returns.
 */
LIDIA_API int lidia_builder_write(struct lidia_builder *b, lidia_sink_fn sink, void *ctx);

/* Write the finalized file to fd (a file, pipe or socket); fd stays open. */
LIDIA_API int lidia_builder_write_fd(struct lidia_builder *b, int fd);

/*
 * Write the finalized file to a new heap buffer, *out_buf (free() it), of
 * *out_size bytes.
 */
LIDIA_API int lidia_builder_write_mem(struct lidia_builder *b, void **out_buf, size_t *out_size);

/* ---- Store: output keys and atomic writes ------------------------------- */

enum lidia_layout {
	LIDIA_LAYOUT_PYROSCOPE,	 /* symbolizer/<tenant>/<build-id> */
	LIDIA_LAYOUT_FLAT,	 /* <build-id>.lidia */
	LIDIA_LAYOUT_DEBUGINFOD, /* buildid/<build-id>/lidia, as debuginfod's URLs */
	LIDIA_LAYOUT_TEMPLATE,	 /* the options' template */
};

/* The layout named "pyroscope", "flat" or "debuginfod"; LIDIA_E_BAD_KEY otherwise. */
LIDIA_API int lidia_store_layout_parse(const char *name, enum lidia_layout *out);

struct lidia_store_opts {
	size_t sz;
	enum lidia_layout layout;
	const char *tenant; /* NULL: "anonymous" */
	/*
	 * LIDIA_LAYOUT_TEMPLATE (key_template): a relative path where {build_id} and {tenant}
	 * are replaced, e.g. "symbols/{tenant}/{build_id}.lidia". It must contain
	 * {build_id}; its elements are made of [A-Za-z0-9_.-] and those two fields, and
	 * none is empty, "." or "..", or begins with '.' (hidden names are the store's
	 * temporary and lock files). At most 256 characters, no leading '/'.
	 */
	const char *key_template;
};
#define LIDIA_STORE_OPTS(...)                                                                      \
	((struct lidia_store_opts){ .sz = sizeof(struct lidia_store_opts), __VA_ARGS__ })

/* True for a template lidia_store_key() accepts (see struct lidia_store_opts). */
LIDIA_API bool lidia_store_template_valid(const char *key_template);

/*
 * NULL for a template lidia_store_key() accepts; else a static phrase
 * saying what is wrong with it ("an unknown field ..."), and the part of
 * it at fault: *len characters from *at (the whole of it when no one part is).
 */
LIDIA_API const char *lidia_store_template_problem(const char *key_template, size_t *at,
						   size_t *len);

/* Room for the longest key and its NUL: 256 hex digits (a 128-byte ID). */
#define LIDIA_KEY_MAX 257

/*
 * The shortest build ID that makes a key: 8 bytes, the shortest any linker
 * makes (lld's --build-id=fast). Shorter ones collide across a bucket.
 */
#define LIDIA_BUILD_ID_MIN 8

/*
 * True for a build ID that can become a key: lowercase hex, even length, 16
 * to 256 digits, and not degenerate (lidia_build_id_degenerate()).
 */
LIDIA_API bool lidia_store_build_id_valid(const char *hex);

/*
 * True for a build ID of all zeros or all 0xff bytes (hex, any length): what
 * a linker told --build-id=0x00.. writes, or a placeholder never filled in.
 * Two different programs share it, so it is no key: a caller should treat
 * it as no build ID at all (lidiagen warns and skips, or uses its fallback).
 */
LIDIA_API bool lidia_build_id_degenerate(const char *hex);

/* True for a tenant that can become a path element: [A-Za-z0-9_.-]{1,128}, no leading '.'. */
LIDIA_API bool lidia_store_tenant_valid(const char *tenant);

/*
 * The output key (a relative path with '/' separators) of build_id under
 * opts' layout, into key (NUL-ended). LIDIA_E_BAD_KEY for an invalid build
 * ID or tenant, -ENOSPC when key_size is too small, LIDIA_E_INVAL for
 * opts this library cannot honour.
 */
LIDIA_API int lidia_store_key(char *key, size_t key_size, const char *build_id,
			      const struct lidia_store_opts *opts);

/*
 * Write the finalized builder to dir/key: the parent directories are made
 * as needed, the bytes go to a unique temporary file beside the final one,
 * which is renamed over it only when complete. No partial file ever appears
 * under key, and concurrent writers of one key leave one whole file.
 *
 * dir is opened as named (a symbolic link there is followed: the caller
 * chose it); every element of key below it is resolved relative to it
 * without following a symbolic link (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS, or openat O_NOFOLLOW one element at a time on
 * kernels before 5.6). A link on the way, or at key itself, fails with
 * LIDIA_E_SYMLINK and nothing is written (lidia_store_symlink_at says
 * which). The same holds for lidia_store_write_buf, lidia_store_lock,
 * lidia_store_open and lidia_store_clean.
 */
LIDIA_API int lidia_store_write(struct lidia_builder *b, const char *dir, const char *key);

/* The same for bytes already in memory. */
LIDIA_API int lidia_store_write_buf(const void *buf, size_t size, const char *dir, const char *key);

/* Writes a file's bytes to fd; returns 0 or a negative error code. */
typedef int (*lidia_store_fill_fn)(int fd, void *ctx);

/*
 * The one temp-then-rename writer, under lidia_store_write and for any other
 * file: fill(fd, ctx) writes to a new temporary file beside path,
 * ".<name>.lidiagen.tmp.XXXXXX" (X from [A-Za-z0-9]), locked (flock) while
 * written and made 0666 less the umask; it is renamed over path only when
 * fill returned 0, and removed otherwise. The directory must exist; path is
 * followed as named. fd stays the writer's: fill must not close it.
 * Returns 0, fill's error or -errno.
 */
LIDIA_API int lidia_store_write_file(const char *path, lidia_store_fill_fn fill, void *ctx);

struct lidia_store_lock;

/*
 * Lock dir/key against the other writers of the key that lock it (threads
 * and processes alike, over a shared tree too), blocking until it is
 * ours: a caller then reads what is there, decides, and writes (or not)
 * with no other writer between. The lock is an flock on
 * ".<name>.lidiagen.tmp.locked" beside the key (parent directories made
 * as needed, no link followed), a temporary file's name: readers pass it over, the holder
 * removes it (lidia_store_unlock, lidia_store_remove_temps), and
 * lidia_store_clean removes one a killed run left. -errno on failure.
 */
LIDIA_API int lidia_store_lock(struct lidia_store_lock **out, const char *dir, const char *key);

/* Let the lock go (and remove its file); NULL is a no-op. */
LIDIA_API void lidia_store_unlock(struct lidia_store_lock *l);

/*
 * Remove the temporary files this process is writing now (through any
 * thread). Only async-signal-safe calls: meant for the caller's handler of
 * SIGINT, SIGTERM..., which then ends the process (the library installs no
 * handler). A writer whose file is removed under it fails its rename.
 */
LIDIA_API void lidia_store_remove_temps(void);

/*
 * True for the name (no directory) of a temporary file of lidia_store_write
 * and lidia_store_write_file, or a lock: ".<name>.lidiagen.tmp.XXXXXX", and
 * also the ".<name>.tmp.XXXXXX" of earlier versions (and any name ending so).
 * Readers of an output tree pass such files over.
 */
LIDIA_API bool lidia_store_is_temp(const char *name);

/*
 * Remove the temporary files and locks that writers killed before their
 * rename left under dir, where opts' layout puts keys: only names in this
 * store's exact pattern (".<name>.lidiagen.tmp.XXXXXX"), never a user's file
 * nor one of an earlier lidiagen, and never through a symbolic link. A live
 * writer's file (it holds a lock on it) is left alone. *removed says how many
 * went; LIDIA_E_SYMLINK when the layout's directory below dir is reached
 * through a link (nothing removed).
 */
LIDIA_API int lidia_store_clean(const char *dir, const struct lidia_store_opts *opts,
				size_t *removed);

/*
 * dir/key opened for reading (O_RDONLY | O_NONBLOCK | O_CLOEXEC; any type of
 * file), resolved as lidia_store_write resolves it: the fd, -errno
 * (-ENOENT: nothing there) or LIDIA_E_SYMLINK. The caller closes the fd.
 */
LIDIA_API int lidia_store_open(const char *dir, const char *key);

/*
 * After LIDIA_E_SYMLINK: the length of key's leading part that is a
 * symbolic link below dir now ("symbolizer" of "symbolizer/t/ID"), for a
 * message naming it; 0 when none is found.
 */
LIDIA_API size_t lidia_store_symlink_at(const char *dir, const char *key);

/* ---- Read --------------------------------------------------------------- */

struct lidia_reader_opts {
	size_t sz;
	bool check_crc;	     /* verify every table's CRC32C at open */
	uint8_t reserved[7]; /* zero (the macro sees to it): room for fields to come */
};
#define LIDIA_READER_OPTS(...)                                                                     \
	((struct lidia_reader_opts){ .sz = sizeof(struct lidia_reader_opts), __VA_ARGS__ })

struct lidia_reader;

/*
 * Open a lidia file by path (mmap), by fd (mmap; a pipe is read whole; fd
 * is not taken over and may be closed after the call) or from memory (buf
 * must outlive the reader). The header and every table's bounds are validated first; with
 * check_crc the CRC32C of every table too. *out is NULL on failure; LIDIA_E_INVAL
 * for opts this library cannot honour, before anything is read.
 */
LIDIA_API int lidia_reader_open(struct lidia_reader **out, const char *path,
				const struct lidia_reader_opts *opts);
LIDIA_API int lidia_reader_open_fd(struct lidia_reader **out, int fd,
				   const struct lidia_reader_opts *opts);
LIDIA_API int lidia_reader_open_mem(struct lidia_reader **out, const void *buf, size_t size,
				    const struct lidia_reader_opts *opts);
LIDIA_API void lidia_reader_close(struct lidia_reader *r);

/* A string inside the file: not NUL-terminated; lives as long as the reader. */
struct lidia_str {
	const char *ptr;
	size_t len;
};

/*
 * One frame of a lookup. lidia_reader_lookup() gives a call chain innermost
 * first: frames[0] is the code at the address, and each next frame is the
 * caller of the one before, with its file and line at that call site.
 * inlined is true when this frame's code was inlined into the next frame,
 * frames[i + 1] (its range's depth > 0), and false on the outermost frame,
 * the function the address lies in. The "(inlined by)" of llvm-symbolizer
 * -p therefore goes before frames[i] when frames[i - 1].inlined, never
 * before frames[0] (whose flag is true whenever there is inlining):
 *
 *	0x1139: sq at c.c:4              frames[0]: inlined = true
 *	 (inlined by) main at c.c:10     frames[1]: inlined = false
 */
struct lidia_frame {
	struct lidia_str function;
	struct lidia_str file;
	uint32_t line;	/* 0 when the file has no line for it */
	uint32_t depth; /* depth of the range this frame came from (see lidia_range_info) */
	bool inlined;	/* inlined into frames[i + 1], the next frame: see above */
};

/*
 * Look addr up as Pyroscope does (spec section 4), filling lines per
 * section 5.8. Writes up to cap frames, innermost first, and returns the
 * number of frames addr has (which may exceed cap: call again with more
 * room), 0 when nothing covers it, or a negative error for a corrupt entry.
 */
LIDIA_API int lidia_reader_lookup(const struct lidia_reader *r, uint64_t addr,
				  struct lidia_frame *frames, size_t cap);

/*
 * Everything stored for one range, as in the range table. The format allows
 * a depth up to 2^64-1, which no real inline tree reaches: a depth past
 * UINT32_MAX (in a file some other writer made) reads as UINT32_MAX, here
 * and in struct lidia_frame.
 */
struct lidia_range_info {
	uint64_t va;
	uint64_t length;
	uint32_t depth;
	struct lidia_str func;
	struct lidia_str file;
	struct lidia_str call_file;
	uint64_t call_line;
	uint64_t line_idx;
	uint64_t line_count;
};

/* Number of ranges in the file. */
LIDIA_API size_t lidia_reader_count(const struct lidia_reader *r);

/* Range i (0 <= i < count), in file order. */
LIDIA_API int lidia_reader_range(const struct lidia_reader *r, size_t i,
				 struct lidia_range_info *out);

/* Line-table entry i of the whole file. */
LIDIA_API int lidia_reader_line(const struct lidia_reader *r, uint64_t i, struct lidia_line *out);

/* What the header says, for `lidiagen info`. */
struct lidia_table_info {
	uint64_t entry_size; /* width of one field (VA, range field, line field) */
	uint64_t count;	     /* entries (bytes for the strings table) */
	uint64_t offset;
	uint64_t size; /* bytes */
	uint32_t crc;  /* as stored */
	bool crc_ok;   /* computed CRC equals crc */
};

struct lidia_file_info {
	uint32_t version;
	uint64_t file_size;
	struct lidia_table_info va, ranges, strings, lines;
};

LIDIA_API int lidia_reader_info(const struct lidia_reader *r, struct lidia_file_info *out);

/*
 * Check every entry: VAs ascending, each range's strings and line slice in
 * bounds, line offsets ascending. Returns 0 or the first error found, with
 * the bad range's index in *bad_index (may be NULL).
 */
LIDIA_API int lidia_reader_check(const struct lidia_reader *r, size_t *bad_index);

#ifdef __cplusplus
}
#endif

#endif /* LIDIA_H */
