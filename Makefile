# lidiagen: the library (lib/), the command (cmd/lidiagen/), tests and install.
#   make                     build liblidia.a, liblidia.so, lidiagen
#   make check               the quick tier (under a minute): unit tests, fuzz corpus
#                            replay, the oracle's proof, the CLI contract (t_cli.sh,
#                            t_usage.sh, t_subcommand_opts.sh), and format-check,
#                            check-layers, check-exports
#   make test                build and run every test; ends with "N passed, N failed, N skipped"
#   make test TESTS=REGEX    only the tests whose name matches (extended regex over
#                            unit/test_NAME, fuzz/fuzz_NAME, t_NAME): TESTS=t_golden
#   make SANITIZE=address,undefined test   (build/san-address-undefined; O=DIR moves build/)
#   make install PREFIX=/usr/local DESTDIR=...
#   make V=1                 show the commands

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEDIR   ?= $(LIBDIR)/cmake/lidiagen
DATADIR    ?= $(PREFIX)/share/lidiagen
DOCDIR     ?= $(PREFIX)/share/doc/lidiagen

VERSION := $(shell sed -n 's/^\#define LIDIA_VERSION_STRING "\(.*\)"/\1/p' lib/lidia.h)
SOMAJOR := 0

CC      ?= cc
CXX     ?= c++
OBJCOPY ?= objcopy
PKG_CONFIG ?= pkg-config
# LLVM's demangler (from llvm-16-dev), linked statically into the library.
LLVM_CONFIG ?= $(firstword $(wildcard /usr/bin/llvm-config-16 /usr/lib/llvm-16/bin/llvm-config) llvm-config)
LLVM_INCLUDE := $(shell $(LLVM_CONFIG) --includedir)
LLVM_DEMANGLE := $(shell $(LLVM_CONFIG) --libdir)/libLLVMDemangle.a
# The library's dependencies, and the command's (the YAML config). libarchive
# is loaded when the first archive is met (lib/input/archive_walk.c), and
# libcurl and libexpat when a bucket is first opened (cmd/lidiagen/publish/s3/curl_load.c,
# expat_load.c): their headers only, never linked (libcurl and its 30 libraries
# cost every run 6 MiB).
DEPS    := libelf libdw libzstd liblzma libdeflate
LA_CFLAGS := $(shell $(PKG_CONFIG) --cflags libarchive)
CURL_CFLAGS := $(shell $(PKG_CONFIG) --cflags libcurl)
EXPAT_CFLAGS := $(shell $(PKG_CONFIG) --cflags expat)
# nettle: SHA-256 (and S3's Content-MD5) at the speed of the CPU's SHA
# extensions, six times our own portable code's.
CMD_DEPS := yaml-0.1 nettle
CMD_LIBS := $(shell $(PKG_CONFIG) --libs $(CMD_DEPS))
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -fvisibility=hidden
DEP_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(DEPS) $(CMD_DEPS)) $(LA_CFLAGS) $(CURL_CFLAGS) $(EXPAT_CFLAGS)
LIBS    := $(shell $(PKG_CONFIG) --libs $(DEPS)) -lpthread -ldl
# The demangler's few uses of libstdc++ are linked in: loading the whole
# shared libstdc++ costs 1.6 MB of resident memory at start-up.
STATIC_CXX := -static-libstdc++ -static-libgcc
# No exceptions, as LLVM itself is built: nothing is thrown through C, and no
# exception personality is referenced (check-exports).
ALL_CXXFLAGS := -std=c++17 -Wall -Wextra $(CFLAGS) -fvisibility=hidden -fno-exceptions -I$(LLVM_INCLUDE) \
	$(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer)
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

# Build products go under $(O) (default build/), and under $(O)/san-KINDS for
# sanitizer builds (build/san-address-undefined, build/san-thread), so that
# objects of different builds never mix.
O ?= build
comma := ,
B := $(O)$(if $(SANITIZE),/san-$(subst $(comma),-,$(SANITIZE)))

# The library, one folder per stage of the pipeline (README.md, "Layout").
LIB_SRC := $(wildcard lib/*/*.c)
LIB_CXX := $(wildcard lib/*/*.cc)
LIB_INC := -Ilib $(addprefix -I,$(sort $(patsubst %/,%,$(dir $(LIB_SRC) $(LIB_CXX)))))
# The command, one folder per stage too (README.md, "Layout"): cli/ over
# batch/ over publish/ and index/, all over util/ (make check-layers).
CMD_DIRS := cli batch publish index util
CMD_SRC := $(foreach d,$(CMD_DIRS),$(wildcard cmd/lidiagen/$(d)/*.c))
# Publishing to S3 (cmd/lidiagen/publish/s3/): the command's store side, never
# in liblidia, so that the library needs no libcurl (doc/publishing.md). Its
# own archive, with the SHA-256 it shares with the command, for the unit tests.
S3_SRC := $(wildcard cmd/lidiagen/publish/s3/*.c)
S3_OBJ := $(S3_SRC:%.c=$(B)/%.o)
S3_LIB := $(B)/liblidia-s3.a
CMD_INC := $(foreach d,$(CMD_DIRS),-Icmd/lidiagen/$(d)) -Icmd/lidiagen/publish/s3
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o) $(LIB_CXX:%.cc=$(B)/%.o)
LIB_PIC := $(LIB_SRC:%.c=$(B)/pic/%.o) $(LIB_CXX:%.cc=$(B)/pic/%.o)
CMD_OBJ := $(CMD_SRC:%.c=$(B)/%.o)

STATIC := $(B)/liblidia.a
# Every object with its own names visible, for the tests of internals.
INTERNAL := $(B)/liblidia-internal.a
SHARED_LIB := $(B)/liblidia.so.$(VERSION)
BIN    := $(B)/lidiagen

.PHONY: all test check check-layers check-exports format-check install uninstall clean fuzz fuzz-long bench
all: $(BIN) $(STATIC) $(SHARED_LIB)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(DEP_CFLAGS) $(LIB_INC) -MMD -MP -c -o $@ $<

$(B)/cmd/%.o: cmd/%.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(DEP_CFLAGS) $(LIB_INC) $(CMD_INC) -MMD -MP -c -o $@ $<

$(S3_LIB): $(S3_OBJ) $(B)/cmd/lidiagen/util/sha256.o
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(B)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(DEP_CFLAGS) -fPIC $(LIB_INC) -MMD -MP -c -o $@ $<

# The format (reader, writer) and its base build without any dependency's
# flags, so that they stay embeddable; check-layers proves they include none.
LEAF_OBJ := $(B)/lib/format/%.o $(B)/pic/lib/format/%.o $(B)/lib/base/%.o $(B)/pic/lib/base/%.o
$(LEAF_OBJ): DEP_CFLAGS :=

# The C++ flags change what the demangler's object references (check-exports):
# it is remade when the Makefile changes.
$(B)/%.o: %.cc Makefile
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CXX     $@")
	$(Q)$(CXX) $(ALL_CXXFLAGS) -MMD -MP -c -o $@ $<

$(B)/pic/%.o: %.cc Makefile
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CXX     $@")
	$(Q)$(CXX) $(ALL_CXXFLAGS) -fPIC -MMD -MP -c -o $@ $<

# The static library carries LLVM's demangler inside, so users link just
# -llidia; linked into one object whose only global names are lidia*, so that
# neither our internal names nor LLVM's clash with a user's own.
$(INTERNAL): $(LIB_OBJ) $(LLVM_DEMANGLE)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -rf $@ $(B)/llvm-demangle && mkdir -p $(B)/llvm-demangle && \
		cd $(B)/llvm-demangle && $(AR) x $(LLVM_DEMANGLE)
	$(Q)$(AR) rcs $@ $(LIB_OBJ) $(B)/llvm-demangle/*.o

$(STATIC): $(INTERNAL)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && $(LD) -r -o $(B)/liblidia-all.o $(LIB_OBJ) $(B)/llvm-demangle/*.o
	$(Q)$(OBJCOPY) --wildcard --keep-global-symbol='lidia*' $(B)/liblidia-all.o $(B)/liblidia.o
	$(Q)$(AR) rcs $@ $(B)/liblidia.o

# The C sources as .clang-format lays them out (Debian 12's clang-format 14).
CLANG_FORMAT ?= clang-format
format-check:
	$(Q)$(CLANG_FORMAT) --dry-run --Werror --style=file $(LIB_SRC) $(wildcard lib/*.h lib/*/*.h) \
		$(CMD_SRC) $(S3_SRC) $(wildcard cmd/lidiagen/*/*.h cmd/lidiagen/publish/s3/*.h)

# liblidia.a defines no global name but lidia*: a user's static link never clashes.
check-exports: $(STATIC)
	$(Q)! nm -g --defined-only $(STATIC) | awk 'NF == 3 && $$3 !~ /^lidia/' | grep . || \
		{ echo "$(STATIC) exports names outside lidia*" >&2; false; }

# format/ and base/ reach no libelf or libdw header, and no part of the library
# reaches libcurl's (their .d files say what they include).
# The layers of lib/ and cmd/lidiagen/ (tests/tools/check_layers.py says which).
check-layers:
	$(Q)python3 tests/tools/check_layers.py

$(SHARED_LIB): $(LIB_PIC) lib/liblidia.map
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CXX) -shared $(STATIC_CXX) -Wl,-soname,liblidia.so.$(SOMAJOR) -Wl,--version-script=lib/liblidia.map \
		$(LDFLAGS) -o $@ $(LIB_PIC) $(LLVM_DEMANGLE) $(LIBS)
	$(Q)ln -sf liblidia.so.$(VERSION) $(B)/liblidia.so.$(SOMAJOR)
	$(Q)ln -sf liblidia.so.$(SOMAJOR) $(B)/liblidia.so

$(BIN): $(CMD_OBJ) $(S3_OBJ) $(STATIC)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CXX) $(STATIC_CXX) $(LDFLAGS) -o $@ $(CMD_OBJ) $(S3_OBJ) $(STATIC) $(LIBS) $(CMD_LIBS)

# The .pc file is made at install time, so it always names the PREFIX installed to.
PC_SED := -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@REQUIRES@|$(DEPS)|'

# ---- tests ------------------------------------------------------------------
TEST_SRC := $(wildcard tests/unit/*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(B)/tests/%)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/tests/%)

# libstdc++ for the demangler, which test_api reaches through lidia_extract;
# the S3 archive for the tests of publishing (libcurl loaded as the command does).
$(B)/tests/%: tests/unit/%.c $(INTERNAL) $(S3_LIB) tests/unit/unit.h
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(DEP_CFLAGS) $(LIB_INC) $(CMD_INC) -Itests/unit -MMD -MP $(LDFLAGS) -o $@ $< \
		$(INTERNAL) $(S3_LIB) $(LIBS) $(CMD_LIBS) -lstdc++

# A fuzz target built with the replay driver: runs every file of its corpus.
# libstdc++ for the demangler, which fuzz_convert reaches through lidia_extract.
$(B)/tests/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(INTERNAL)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(DEP_CFLAGS) $(LIB_INC) $(CMD_INC) $(LDFLAGS) -o $@ $< tests/fuzz/replay.c $(INTERNAL) $(LIBS) -lstdc++

# libFuzzer builds (clang): make fuzz, then build/fuzz/fuzz_reader on a copy of
# tests/fuzz/corpus/reader. Undefined behaviour stops a run, as a crash does.
# make fuzz-long FUZZ_SECONDS=N: every target N seconds on a copy of its corpus
# (tests/fuzz/fuzz_long.sh); fails on any crash, timeout, leak or OOM.
FUZZ_SECONDS ?= 60
fuzz: $(FUZZ_SRC) $(LIB_CXX:%.cc=$(O)/%.o)
	@mkdir -p $(O)/fuzz
	for f in $(FUZZ_SRC); do \
		clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
			-fno-sanitize-recover=all $(LIB_INC) $(CMD_INC) \
			$(shell $(PKG_CONFIG) --cflags $(DEPS)) -o $(O)/fuzz/$$(basename $$f .c) \
			$$f $(LIB_SRC) $(LIB_CXX:%.cc=$(O)/%.o) $(LLVM_DEMANGLE) $(LIBS) || exit 1; \
	done

fuzz-long: fuzz
	tests/fuzz/fuzz_long.sh $(O)/fuzz $(FUZZ_SECONDS)

# The quick tier, for every edit: what CHECK_TESTS selects of tests/run.sh.
CHECK_TESTS := ^(unit|fuzz)/|^t_(cli|layers|pyroscope_reader|subcommand_opts|usage)$$

test: all $(TEST_BIN) $(FUZZ_BIN) check-layers check-exports format-check
	$(Q)LIDIAGEN=$(abspath $(BIN)) BUILD=$(abspath $(B)) SANITIZE=$(SANITIZE) TESTS='$(TESTS)' tests/run.sh

check: all $(TEST_BIN) $(FUZZ_BIN) check-layers check-exports format-check
	$(Q)LIDIAGEN=$(abspath $(BIN)) BUILD=$(abspath $(B)) SANITIZE=$(SANITIZE) \
		TESTS='$(or $(TESTS),$(CHECK_TESTS))' tests/run.sh

bench: all
	bench/run.sh $(abspath $(BIN))

# ---- install ------------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/lidiagen
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/liblidia.a
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/liblidia.so.$(VERSION)
	ln -sf liblidia.so.$(VERSION) $(DESTDIR)$(LIBDIR)/liblidia.so.$(SOMAJOR)
	ln -sf liblidia.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/liblidia.so
	install -m 644 lib/lidia.h $(DESTDIR)$(INCLUDEDIR)/lidia.h
	sed $(PC_SED) lib/lidia.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/lidia.pc
	install -m 644 doc/lidiagen.1 $(DESTDIR)$(MANDIR)/man1/lidiagen.1
	install -m 644 config/lidiagen.yaml $(DESTDIR)$(DATADIR)/lidiagen.yaml
	install -m 644 doc/lidia-v1.md doc/publishing.md doc/index.md doc/sharding.md doc/ci.md $(DESTDIR)$(DOCDIR)/
	install -m 644 plugins/README.md $(DESTDIR)$(DOCDIR)/plugins.md

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/lidiagen $(DESTDIR)$(LIBDIR)/liblidia.a \
		$(DESTDIR)$(LIBDIR)/liblidia.so.$(VERSION) $(DESTDIR)$(LIBDIR)/liblidia.so.$(SOMAJOR) \
		$(DESTDIR)$(LIBDIR)/liblidia.so $(DESTDIR)$(INCLUDEDIR)/lidia.h \
		$(DESTDIR)$(PKGCONFIGDIR)/lidia.pc $(DESTDIR)$(MANDIR)/man1/lidiagen.1 \
		$(DESTDIR)$(DATADIR)/lidiagen.yaml $(DESTDIR)$(DOCDIR)/lidia-v1.md \
		$(DESTDIR)$(DOCDIR)/publishing.md $(DESTDIR)$(DOCDIR)/index.md $(DESTDIR)$(DOCDIR)/sharding.md \
		$(DESTDIR)$(DOCDIR)/ci.md $(DESTDIR)$(DOCDIR)/plugins.md
	-rmdir $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR) 2>/dev/null

clean:
	rm -rf build

# The CMake package and the Bazel plugin (plugins/README.md) install with the rest.
include plugins/cmake/install.mk plugins/bazel/install.mk
install: install-cmake install-bazel
uninstall: uninstall-cmake uninstall-bazel

-include $(LIB_OBJ:.o=.d) $(LIB_PIC:.o=.d) $(CMD_OBJ:.o=.d) $(S3_OBJ:.o=.d) $(TEST_BIN:=.d)
