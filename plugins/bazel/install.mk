# plugins/bazel/install.mk: install and uninstall lidiagen's Bazel plugin in
# $(DATADIR)/bazel ($(PREFIX)/share/lidiagen/bazel), with a relative link
# `lidiagen` to $(BINDIR)/lidiagen, the tool the plugin runs by default.
# The top Makefile includes this file; PREFIX, BINDIR, DATADIR and DESTDIR come
# from there (the defaults below are the same).
#   make install-bazel PREFIX=/usr DESTDIR=/tmp/stage
# A WORKSPACE then loads it with
#   local_repository(name = "lidiagen", path = "/usr/share/lidiagen/bazel")
#   register_toolchains("@lidiagen//:default_toolchain")
# (a MODULE.bazel with bazel_dep and local_path_override: MODULE.bazel here).

PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
DATADIR   ?= $(PREFIX)/share/lidiagen
BAZELDIR  ?= $(DATADIR)/bazel
LIDIAGEN_BAZEL_SRC := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
LIDIAGEN_BAZEL_FILES := WORKSPACE MODULE.bazel BUILD.bazel defs.bzl
# Stand-ins for the repositories Bazel 4 downloads (offline/README.md).
LIDIAGEN_BAZEL_OFFLINE := README.md rules_cc/WORKSPACE rules_cc/BUILD rules_cc/cc/BUILD rules_cc/cc/defs.bzl \
	rules_java/WORKSPACE rules_java/BUILD rules_java/java/BUILD rules_java/java/defs.bzl \
	remote_coverage_tools/WORKSPACE remote_coverage_tools/BUILD

.PHONY: install-bazel uninstall-bazel
install-bazel:
	install -d $(DESTDIR)$(BAZELDIR)
	install -m 644 $(addprefix $(LIDIAGEN_BAZEL_SRC)/,$(LIDIAGEN_BAZEL_FILES)) $(DESTDIR)$(BAZELDIR)/
	ln -sfn $$(realpath -m --relative-to='$(BAZELDIR)' '$(BINDIR)')/lidiagen $(DESTDIR)$(BAZELDIR)/lidiagen
	for f in $(LIDIAGEN_BAZEL_OFFLINE); do \
		install -D -m 644 $(LIDIAGEN_BAZEL_SRC)/offline/$$f $(DESTDIR)$(BAZELDIR)/offline/$$f || exit 1; \
	done

uninstall-bazel:
	rm -f $(addprefix $(DESTDIR)$(BAZELDIR)/,$(LIDIAGEN_BAZEL_FILES) lidiagen) \
		$(addprefix $(DESTDIR)$(BAZELDIR)/offline/,$(LIDIAGEN_BAZEL_OFFLINE))
	-cd $(DESTDIR)$(BAZELDIR) 2>/dev/null && rmdir -p offline/rules_cc/cc offline/rules_java/java \
		offline/remote_coverage_tools 2>/dev/null
	rmdir $(DESTDIR)$(BAZELDIR) $(DESTDIR)$(DATADIR) 2>/dev/null || true
