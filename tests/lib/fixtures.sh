# Test programs built from tests/fixtures/ with recorded commands; source it
# after common.sh.
#
#   fx_cmd NAME     the exact shell command that builds variant NAME, run in a
#                   directory holding a copy of $FX_SOURCES from tests/fixtures/
#                   (print it beside every result)
#   fx_build NAME   build NAME once per $TEST_TMP (cached by command and
#                   sources); sets FX to the directory holding its products,
#                   or returns 1 with the build log in FX_LOG
#
# Every variant gets a GNU build ID except c-nobuildid. Go 1.19's linker
# takes only a literal -B 0xHEX (-B gobuildid came with a later Go), so each
# Go variant gets a fixed ID derived from its name: deterministic builds.

# Go: $GO if set, else Debian's golang-1.19-go (quickstart.sh installs it, in
# /usr/lib/go-1.19/bin, not on PATH), else whatever go is on PATH.
if [ -z "${GO:-}" ]; then
	for g in /usr/lib/go-1.19/bin/go "$(command -v go 2>/dev/null)" /usr/lib/go/bin/go; do
		if [ -n "$g" ] && [ -x "$g" ]; then
			GO=$g
			break
		fi
	done
	GO=${GO:-go}
fi

FX_VARIANTS_C="c-gcc-O0 c-gcc-O2 c-gcc-O0-nopie c-gcc-O2-nopie c-clang-O2"
FX_VARIANTS_CXX="cxx-gcc-O2 cxx-clang-O2"

# Source paths in DWARF read /fixtures/..., whatever $TEST_TMP is, so that a
# variant's bytes (and build ID) are the same in every run. Written into the
# commands as is: the build shell expands $PWD.
FX_MAP='-ffile-prefix-map=$PWD=/fixtures'

fx_go_id() { printf 'lidiagen-tests %s' "$1" | sha1sum | cut -c1-40; }

fx_cmd() {
	case $1 in
	c-gcc-O0) echo "gcc -O0 -g $FX_MAP -Wl,--build-id -o c-gcc-O0 oracle.c" ;;
	c-gcc-O2) echo "gcc -O2 -g $FX_MAP -Wl,--build-id -o c-gcc-O2 oracle.c" ;;
	c-gcc-O0-nopie) echo "gcc -O0 -g $FX_MAP -no-pie -Wl,--build-id -o c-gcc-O0-nopie oracle.c" ;;
	c-gcc-O2-nopie) echo "gcc -O2 -g $FX_MAP -no-pie -Wl,--build-id -o c-gcc-O2-nopie oracle.c" ;;
	c-clang-O2) echo "clang -O2 -g $FX_MAP -Wl,--build-id -o c-clang-O2 oracle.c" ;;
	cxx-gcc-O2) echo "g++ -O2 -g $FX_MAP -Wl,--build-id -o cxx-gcc-O2 oracle.cpp" ;;
	cxx-clang-O2) echo "clang++ -O2 -g $FX_MAP -Wl,--build-id -o cxx-clang-O2 oracle.cpp" ;;
	lib-gcc-O2) echo "gcc -O2 -g $FX_MAP -fPIC -shared -Wl,--build-id -o liboracle.so oracle_lib.c" ;;
	lib-stripped)
		echo "gcc -O2 -g $FX_MAP -fPIC -shared -Wl,--build-id -o liboracle.so oracle_lib.c" \
			"&& strip -o liboracle-stripped.so liboracle.so"
		;;
	c-gcc-O2-stripped)
		echo "gcc -O2 -g $FX_MAP -Wl,--build-id -o c-gcc-O2 oracle.c" \
			"&& strip -o c-gcc-O2-stripped c-gcc-O2"
		;;
	c-rdynamic-stripped)
		echo "gcc -O2 -g $FX_MAP -rdynamic -Wl,--build-id -o c-rdynamic oracle.c" \
			"&& strip -o c-rdynamic-stripped c-rdynamic"
		;;
	c-split)
		# c-split.full: the binary as linked (not c-gcc-O2's twin: another
		# flag, another build ID); c-split: stripped of debug info and of the
		# symbols nothing needs, with a debuglink to c-split.debug.
		echo "gcc -O2 -g $FX_MAP -fno-omit-frame-pointer -Wl,--build-id -o c-split.full oracle.c" \
			"&& objcopy --only-keep-debug c-split.full c-split.debug" \
			"&& strip --strip-debug --strip-unneeded -o c-split c-split.full" \
			"&& objcopy --add-gnu-debuglink=c-split.debug c-split"
		;;
	c-nobuildid) echo "gcc -O2 -g $FX_MAP -Wl,--build-id=none -o c-nobuildid nobuildid.c" ;;
	go-exe) echo "cd goprog && go build -trimpath -ldflags=-B=0x$(fx_go_id go-exe) -o ../go-exe ." ;;
	go-pie)
		echo "cd goprog && go build -trimpath -buildmode=pie -ldflags=-B=0x$(fx_go_id go-pie)" \
			"-o ../go-pie ."
		;;
	*) return 1 ;;
	esac
}

# The environment every Go build runs in (printed by fx_env_note).
fx_go_env() {
	echo "GOCACHE=$TEST_TMP/go/cache GOPATH=$TEST_TMP/go/path GOENV=off GOFLAGS=" \
		"GO111MODULE=on GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0 PATH=$(dirname "$GO"):\$PATH"
}

# The sources these variants are built from (tests/fixtures/ holds others too).
FX_SOURCES="oracle.c oracle_lib.c oracle.cpp nobuildid.c goprog"

fx_sources_hash() {
	(cd "$FIXTURES_SRC" && find $FX_SOURCES -type f -print | sort | xargs sha1sum) | sha1sum | cut -c1-12
}

fx_build() {
	local name=$1 cmd key dir
	FX= FX_LOG=
	cmd=$(fx_cmd "$name") || {
		FX_LOG="unknown fixture variant '$name'"
		return 1
	}
	key=$( (echo "$cmd"; fx_sources_hash) | sha1sum | cut -c1-12)
	dir=$TEST_TMP/fixtures/$name-$key
	if [ -f "$dir/.built" ]; then
		FX=$dir
		return 0
	fi
	# Built in place (so that DWARF names a stable directory); the .built
	# marker, written last, says the build is complete.
	mkdir -p "$TEST_TMP/go/cache" "$TEST_TMP/go/path"
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$FIXTURES_SRC" && cp -R $FX_SOURCES "$dir/")
	if ! (
		cd "$dir" &&
			export GOCACHE="$TEST_TMP/go/cache" GOPATH="$TEST_TMP/go/path" GOENV=off GOFLAGS= \
				GO111MODULE=on GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0 PATH="$(dirname "$GO"):$PATH" &&
			eval "$cmd"
	) >"$dir/.log" 2>&1; then
		FX_LOG="build of $name failed: $cmd
$(tail -n 20 "$dir/.log")"
		return 1
	fi
	echo "$cmd" >"$dir/.cmd"
	touch "$dir/.built"
	FX=$dir
}
