# The dist trees of tests/t_batch.sh, built from tests/fixtures/batch/; source
# it after common.sh.
#
#   bf_build DIR   compile the programs and build under DIR:
#                    DIR/prog/      the programs as linked (unstripped), the
#                                   stripped ones and their debug files
#                    DIR/dist/      a tree of good inputs: plain files, a
#                                   duplicate, tar.zst, zip, cpio.gz, a .deb of
#                                   stripped binaries and a -dbg .deb of their
#                                   .build-id debug files, an .rpm, archives
#                                   inside archives, members named ../ and
#                                   /abs, a program without a build ID, a Go
#                                   program (Go build ID only), a text file
#                    DIR/bad/       a truncated ELF, two truncated archives
#                    DIR/bombs/     a member too large, archives that expand
#                  Sets ID1..ID14 (readelf -n, never lidiagen), BF_EVIL_ABS
#                  (the absolute member name's directory, which must never
#                  appear), BF_RPM ("rpm" or "cpio.gz" when rpmbuild is
#                  missing), BF_TOOLS (tools.tar.zst, or tools.tar.xz when the
#                  zstd command is missing), BF_GO ("" when Go is missing),
#                  BF_LOG on failure.
#                  Every command run is appended to DIR/commands.txt.

BF_SRC=$FIXTURES_SRC/batch
BF_GO_BIN=${GO:-/usr/lib/go-1.19/bin/go}

# readelf_build_id FILE: the GNU build ID as readelf prints it ("" when none).
readelf_build_id() { readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }'; }

bf_run() { # CMD...: run in the current directory, logged
	echo "$*" >>"$BF_DIR/commands.txt"
	"$@" >>"$BF_DIR/build.log" 2>&1
}

# bf_deb ROOT OUT NAME: a .deb of ROOT's usr/ with dpkg-deb.
bf_deb() {
	mkdir -p "$1/DEBIAN"
	printf 'Package: %s\nVersion: 1.0\nArchitecture: amd64\nMaintainer: lidiagen tests <tests@example.com>\nDescription: lidiagen batch fixture\n' \
		"$3" >"$1/DEBIAN/control"
	bf_run dpkg-deb --root-owner-group -Zxz --build "$1" "$2"
}

# bf_rpm FILE... : an .rpm holding /usr/bin/<basename FILE> for each.
bf_rpm() {
	local top=$BF_DIR/rpmbuild f files=
	rm -rf "$top"
	mkdir -p "$top/SOURCES" "$top/SPECS"
	for f in "$@"; do
		cp "$f" "$top/SOURCES/"
		files="$files /usr/bin/$(basename "$f")"
	done
	{
		printf '%s\n' 'Name: batchfix' 'Version: 1.0' 'Release: 1' 'Summary: lidiagen batch fixture' \
			'License: Apache-2.0' '%define debug_package %{nil}' '%define __os_install_post %{nil}' \
			'%define _build_id_links none' '%description' 'A lidiagen test fixture.' '%install' \
			'mkdir -p %{buildroot}/usr/bin'
		for f in "$@"; do
			echo "cp -p %{_sourcedir}/$(basename "$f") %{buildroot}/usr/bin/"
		done
		echo '%files'
		for f in $files; do echo "$f"; done
	} >"$top/SPECS/batchfix.spec"
	bf_run rpmbuild -bb --quiet --target x86_64 --define "_topdir $top" "$top/SPECS/batchfix.spec" &&
		ls "$top"/RPMS/x86_64/batchfix-1.0-1.x86_64.rpm >/dev/null 2>&1
}

bf_build() {
	BF_DIR=$1
	local p=$BF_DIR/prog d=$BF_DIR/dist src=$BF_DIR/src mk="$PYTHON $TESTS_LIB/batch_mkarchive.py" v
	BF_LOG=
	rm -rf "$BF_DIR"
	mkdir -p "$p" "$src" "$d"/{bin/dup,go,pkgs,debs,rpms,nested,evil} "$BF_DIR/bad" "$BF_DIR/bombs"
	cp "$BF_SRC/batch_prog.c" "$src/"
	: >"$BF_DIR/commands.txt"
	# The programs: gcc -O2 -g, one variant (one build ID) each. DWARF names
	# /batch, whatever BF_DIR is.
	local cc="gcc -O2 -g -ffile-prefix-map=$src=/batch -Wl,--build-id"
	for v in 1 2 3 4 6 7 8 9 10 11 12 13 14; do
		bf_run $cc -DVARIANT=$v -o "$p/app$v" "$src/batch_prog.c" || {
			BF_LOG="gcc failed: $(tail -5 "$BF_DIR/build.log")"
			return 1
		}
	done
	bf_run $cc -DVARIANT=5 -fPIC -shared -o "$p/libbatch.so.1" "$src/batch_prog.c" &&
		bf_run gcc -O2 -g -DVARIANT=20 -Wl,--build-id=none -o "$p/nobid" "$src/batch_prog.c" || {
		BF_LOG="gcc failed: $(tail -5 "$BF_DIR/build.log")"
		return 1
	}
	for v in 1 2 3 4 6 7 8 9 10 11 12 13 14; do
		eval "ID$v=\$(readelf_build_id \"\$p/app$v\")"
	done
	ID5=$(readelf_build_id "$p/libbatch.so.1")

	# Stripped binaries and debug files: app4 and libbatch.so.1.
	for f in app4 libbatch.so.1; do
		bf_run objcopy --only-keep-debug "$p/$f" "$p/$f.debug" &&
			bf_run strip --strip-all -o "$p/$f.stripped" "$p/$f" || {
			BF_LOG="strip failed: $(tail -5 "$BF_DIR/build.log")"
			return 1
		}
	done

	# Plain files, a duplicate, a file without a build ID, a text file.
	cp "$p/app1" "$d/bin/app1"
	cp "$p/app1" "$d/bin/dup/app1-copy"
	cp "$p/nobid" "$d/bin/nobid"
	echo "not a program" >"$d/bin/README.txt"
	# tar.zst (app3 also in the zip: a duplicate across archives), zip, cpio.gz.
	# (Without the zstd command, a tar.xz stands in: BF_TOOLS names it.)
	BF_TOOLS=tools.tar.zst
	command -v zstd >/dev/null 2>&1 || BF_TOOLS=tools.tar.xz
	(cd "$BF_DIR" && bf_run $mk tar "$BF_DIR/tools.tar" usr/bin/app2="$p/app2" \
		usr/bin/app3="$p/app3" usr/share/doc/tools.txt=text:docs) &&
		if [ "$BF_TOOLS" = tools.tar.zst ]; then
			bf_run zstd -q -19 --rm -o "$d/pkgs/tools.tar.zst" "$BF_DIR/tools.tar"
		else
			bf_run xz -f "$BF_DIR/tools.tar" && mv "$BF_DIR/tools.tar.xz" "$d/pkgs/"
		fi &&
		bf_run $mk zip "$d/pkgs/tools.zip" bin/app3="$p/app3" bin/notes.txt=text:notes &&
		bf_run $mk cpio.gz "$d/pkgs/app9.cpio.gz" ./usr/bin/app9="$p/app9" || {
		BF_LOG="archives failed: $(tail -5 "$BF_DIR/build.log")"
		return 1
	}
	# The .deb of stripped binaries and its -dbg .deb of .build-id debug files.
	local r=$BF_DIR/debroot
	mkdir -p "$r/bin/usr/bin" "$r/bin/usr/lib/x86_64-linux-gnu" "$r/dbg/usr/lib/debug/.build-id/${ID4:0:2}" \
		"$r/dbg/usr/lib/debug/.build-id/${ID5:0:2}"
	cp "$p/app4.stripped" "$r/bin/usr/bin/app4"
	cp "$p/libbatch.so.1.stripped" "$r/bin/usr/lib/x86_64-linux-gnu/libbatch.so.1"
	cp "$p/app4.debug" "$r/dbg/usr/lib/debug/.build-id/${ID4:0:2}/${ID4:2}.debug"
	cp "$p/libbatch.so.1.debug" "$r/dbg/usr/lib/debug/.build-id/${ID5:0:2}/${ID5:2}.debug"
	bf_deb "$r/bin" "$d/debs/batch_1.0_amd64.deb" batch &&
		bf_deb "$r/dbg" "$d/debs/batch-dbg_1.0_amd64.deb" batch-dbg || {
		BF_LOG="dpkg-deb failed: $(tail -5 "$BF_DIR/build.log")"
		return 1
	}
	# The .rpm (or, without rpmbuild, a cpio.gz in its place).
	if command -v rpmbuild >/dev/null 2>&1 && bf_rpm "$p/app6"; then
		cp "$BF_DIR"/rpmbuild/RPMS/x86_64/batchfix-1.0-1.x86_64.rpm "$d/rpms/"
		BF_RPM=rpm
	else
		bf_run $mk cpio.gz "$d/rpms/batchfix.cpio.gz" ./usr/bin/app6="$p/app6" || return 1
		BF_RPM=cpio.gz
	fi
	# Archives inside archives: outer.tar.gz > inner/inner.zip > app7 (depth 1),
	# outer.tar.gz > inner/deeper.tar.xz > level2.cpio > app8 (depth 2).
	bf_run $mk zip "$BF_DIR/inner.zip" app7="$p/app7" &&
		bf_run $mk cpio "$BF_DIR/level2.cpio" usr/bin/app8="$p/app8" &&
		bf_run $mk tar.xz "$BF_DIR/deeper.tar.xz" level2.cpio="$BF_DIR/level2.cpio" &&
		bf_run $mk tar.gz "$d/nested/outer.tar.gz" inner/inner.zip="$BF_DIR/inner.zip" \
			inner/deeper.tar.xz="$BF_DIR/deeper.tar.xz" || {
		BF_LOG="nested archives failed: $(tail -5 "$BF_DIR/build.log")"
		return 1
	}
	# Hostile member names: ../ and absolute. Nothing may be written there.
	BF_EVIL_ABS=/tmp/lidiagen-evil-$$-$RANDOM
	bf_run $mk tar "$d/evil/evil.tar" ../../../escape-app12="$p/app12" \
		"$BF_EVIL_ABS/abs-app13=$p/app13" &&
		bf_run $mk zip "$d/evil/evil.zip" ../zip-escape14="$p/app14" || return 1
	# A Go program built without -B: a Go build ID, no GNU build ID.
	BF_GO=
	if [ -x "$BF_GO_BIN" ]; then
		mkdir -p "$BF_DIR/gocache"
		cp -R "$BF_SRC/gohello" "$BF_DIR/gohello"
		echo "cd gohello && go build -trimpath -o ../dist/go/gohello ." >>"$BF_DIR/commands.txt"
		if (cd "$BF_DIR/gohello" && GOCACHE="${GOCACHE_BATCH:-$TEST_TMP/go/cache}" GOPATH="$BF_DIR/gopath" \
			GOENV=off GOFLAGS= GO111MODULE=on GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0 \
			"$BF_GO_BIN" build -trimpath -o "$d/go/gohello" .) >>"$BF_DIR/build.log" 2>&1; then
			BF_GO=$d/go/gohello
		fi
	fi

	# Bad inputs: a truncated ELF (half of app10); a tar.gz cut in the middle
	# of the filler that follows its ELF member (app11, which is still
	# found); a small tar.gz cut in half (libarchive cannot even open it).
	local size
	size=$(stat -c %s "$p/app10")
	head -c $((size / 2)) "$p/app10" >"$BF_DIR/bad/corrupt-app"
	echo "head -c $((size / 2)) app10 > bad/corrupt-app" >>"$BF_DIR/commands.txt"
	bf_run $mk tar.gz "$BF_DIR/whole.tar.gz" usr/bin/app11="$p/app11" usr/share/filler.bin=random:262144 &&
		bf_run $mk tar.gz "$BF_DIR/small.tar.gz" usr/bin/app10="$p/app10" || return 1
	size=$(stat -c %s "$BF_DIR/whole.tar.gz")
	head -c $((size * 3 / 4)) "$BF_DIR/whole.tar.gz" >"$BF_DIR/bad/truncated.tar.gz"
	echo "head -c $((size * 3 / 4)) whole.tar.gz > bad/truncated.tar.gz" >>"$BF_DIR/commands.txt"
	size=$(stat -c %s "$BF_DIR/small.tar.gz")
	head -c $((size / 2)) "$BF_DIR/small.tar.gz" >"$BF_DIR/bad/truncated-small.tar.gz"
	echo "head -c $((size / 2)) small.tar.gz > bad/truncated-small.tar.gz" >>"$BF_DIR/commands.txt"

	# Bombs: an ELF member larger than the limit the test sets (16K), archives
	# that expand past it (4M): one big zero file inside a nested tar, many
	# ELF members, one big zero file at the top.
	bf_run $mk tar.gz "$BF_DIR/bombs/big-member.tar.gz" usr/bin/app1="$p/app1" &&
		bf_run $mk tar "$BF_DIR/zeros.tar" zeros.bin=zeros:16777216 &&
		bf_run $mk tar.gz "$BF_DIR/bombs/nested-bomb.tar.gz" inner.tar="$BF_DIR/zeros.tar" &&
		bf_run $mk tar.gz "$BF_DIR/bombs/flat-bomb.tar.gz" zeros.bin=zeros:16777216 || return 1
	local many=() i
	for i in $(seq 1 300); do many+=("usr/bin/copy$i=$p/app2"); done
	bf_run $mk tar.gz "$BF_DIR/bombs/elf-bomb.tar.gz" "${many[@]}" || return 1
	return 0
}
