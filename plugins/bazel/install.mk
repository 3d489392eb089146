# plugins/bazel/install.mk: install and uninstall lidiagen's Bazel plugin in
# $(DATADIR)/bazel ($(PREFIX)/share/lidiagen/bazel), with a relative link
# `lidiagen` to $(BINDIR)/lidiagen, the tool the plugin runs by default.
# The top Makefile includes this file; PREFIX, BINDIR, DATADIR and DESTDIR come
# from there (the defaults below are the same).
#   make install-bazel PREFIX=/usr DESTDIR=/tmp/stage
# A WORKSPACE then loads it with
#   local_repository(name = "lidiagen", path = "/usr/share/lidiagen/bazel")

PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
DATADIR   ?= $(PREFIX)/share/lidiagen
BAZELDIR  ?= $(DATADIR)/bazel
LIDIAGEN_BAZEL_SRC := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
LIDIAGEN_BAZEL_FILES := WORKSPACE BUILD.bazel defs.bzl

.PHONY: install-bazel uninstall-bazel
install-bazel:
	install -d $(DESTDIR)$(BAZELDIR)
	install -m 644 $(addprefix $(LIDIAGEN_BAZEL_SRC)/,$(LIDIAGEN_BAZEL_FILES)) $(DESTDIR)$(BAZELDIR)/
	ln -sfn $$(realpath -m --relative-to='$(BAZELDIR)' '$(BINDIR)')/lidiagen $(DESTDIR)$(BAZELDIR)/lidiagen

uninstall-bazel:
	rm -f $(addprefix $(DESTDIR)$(BAZELDIR)/,$(LIDIAGEN_BAZEL_FILES) lidiagen)
	rmdir $(DESTDIR)$(BAZELDIR) $(DESTDIR)$(DATADIR) 2>/dev/null || true
