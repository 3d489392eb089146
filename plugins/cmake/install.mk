# plugins/cmake/install.mk: install and uninstall lidiagen's CMake package, so
# that find_package(lidiagen CONFIG) finds it under $(LIBDIR)/cmake/lidiagen.
# The top Makefile includes this file; PREFIX, BINDIR, LIBDIR, CMAKEDIR,
# VERSION and DESTDIR come from there (the defaults below are the same).
#   make install-cmake PREFIX=/usr DESTDIR=/tmp/stage
# The package finds bin/lidiagen, liblidia.so and lidia.h from its own place
# ($(CMAKEDIR) to $(BINDIR), $(LIBDIR), $(INCLUDEDIR), relative), so a staged or
# moved install uses its own.

PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
LIBDIR   ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
SOMAJOR  ?= 0
CMAKEDIR ?= $(LIBDIR)/cmake/lidiagen
LIDIAGEN_CMAKE_SRC := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
LIDIAGEN_CMAKE_VERSION = $(or $(VERSION),$(shell sed -n 's/^\#define LIDIA_VERSION_STRING "\(.*\)"/\1/p' \
	$(LIDIAGEN_CMAKE_SRC)/../../lib/lidia.h))
LIDIAGEN_CMAKE_FILES := lidiagenConfig.cmake lidiagenConfigVersion.cmake lidiagen-symbols.cmake \
	lidiagen-run.cmake

.PHONY: install-cmake uninstall-cmake
install-cmake:
	install -d $(DESTDIR)$(CMAKEDIR)
	rel=$$(realpath -m --relative-to='$(CMAKEDIR)' '$(BINDIR)') && \
		lib=$$(realpath -m --relative-to='$(CMAKEDIR)' '$(LIBDIR)') && \
		inc=$$(realpath -m --relative-to='$(CMAKEDIR)' '$(INCLUDEDIR)') && \
		sed -e "s|@BINDIR_REL@|$$rel|g" -e 's|@BINDIR@|$(BINDIR)|g' -e "s|@LIBDIR_REL@|$$lib|g" \
		-e "s|@INCLUDEDIR_REL@|$$inc|g" -e 's|@SOMAJOR@|$(SOMAJOR)|g' \
		$(LIDIAGEN_CMAKE_SRC)/lidiagenConfig.cmake.in > $(DESTDIR)$(CMAKEDIR)/lidiagenConfig.cmake
	sed -e 's|@VERSION@|$(LIDIAGEN_CMAKE_VERSION)|g' $(LIDIAGEN_CMAKE_SRC)/lidiagenConfigVersion.cmake.in \
		> $(DESTDIR)$(CMAKEDIR)/lidiagenConfigVersion.cmake
	install -m 644 $(LIDIAGEN_CMAKE_SRC)/lidiagen-symbols.cmake $(LIDIAGEN_CMAKE_SRC)/lidiagen-run.cmake \
		$(DESTDIR)$(CMAKEDIR)/

uninstall-cmake:
	rm -f $(addprefix $(DESTDIR)$(CMAKEDIR)/,$(LIDIAGEN_CMAKE_FILES))
	rmdir $(DESTDIR)$(CMAKEDIR) 2>/dev/null || true
