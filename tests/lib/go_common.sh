# shellcheck shell=bash disable=SC2034
# Shared by tests/t_go_*.sh (source it after tap.sh): the Go toolchains, the
# environment every Go build runs in, and builds of tests/fixtures/go/*.
#
#   go_tool VER          path of Go VER's `go` (1.19, 1.22 or 1.23); returns 1 if absent
#   go_id NAME           a GNU build ID for variant NAME: 40 hex digits, fixed
#   go_build OUT VER DIR [VAR=VALUE...] -- BUILD-ARGS...
#                        build tests/fixtures/go/DIR with Go VER into OUT once
#                        per $TEST_TMP; GO_CMD is the command (for "# " lines);
#                        on failure returns 1 with the log in GO_LOG
#   go_convert OUT_DIR BINARY
#                        `lidiagen -q BINARY -o OUT_DIR`; sets GO_LIDIA to the
#                        one file written, or returns 1 with GO_LOG
#   go_diag TEXT...      "# " lines
#
# Environment: GO119, GO122, GO123 override the toolchains' paths. Builds share
# $TEST_TMP/go/cache (the Go build cache is safe to share between versions
# and with tests/lib/fixtures.sh) and never reach the network.

GO_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO_FIXTURES=$GO_TESTS_DIR/fixtures/go
GO_ORACLE_PY=$GO_TESTS_DIR/lib/go_oracle.py
. "$GO_TESTS_DIR/lib/env.sh"
export LC_ALL=C

go_diag() {
	local d
	for d in "$@"; do
		printf '%s\n' "$d" | sed 's/^/# /'
	done
}

go_tool() {
	local g
	case $1 in
	1.19) g=${GO119:-/usr/lib/go-1.19/bin/go} ;;
	1.22) g=${GO122:-/usr/lib/go-1.22/bin/go} ;;
	1.23) g=${GO123:-/usr/lib/go-1.23/bin/go} ;;
	*) return 1 ;;
	esac
	[ -x "$g" ] || return 1
	printf '%s\n' "$g"
}

go_id() { printf 'lidiagen go test %s' "$1" | sha1sum | cut -c1-40; }

go_build() {
	local out=$1 ver=$2 dir=$3 go envs=() log
	shift 3
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	GO_LOG='' GO_CMD=''
	go=$(go_tool "$ver") || {
		GO_LOG="Go $ver not found (GO119/GO122/GO123 or /usr/lib/go-$ver/bin/go)"
		return 1
	}
	GO_CMD="cd tests/fixtures/go/$dir && ${envs[*]} go$ver build -trimpath -o OUT$(printf " %q" "$@") ."
	[ -x "$out" ] && return 0
	mkdir -p "$(dirname "$out")" "$TEST_TMP/go/cache" "$TEST_TMP/go/path"
	log=$out.buildlog
	if ! (
		cd "$GO_FIXTURES/$dir" &&
			env GOCACHE="$TEST_TMP/go/cache" GOPATH="$TEST_TMP/go/path" GOENV=off \
				GOFLAGS= GO111MODULE=on GOPROXY=off GOTOOLCHAIN=local GOTELEMETRY=off \
				GOWORK=off "${envs[@]}" "$go" build -trimpath -o "$out.tmp" "$@" .
	) >"$log" 2>&1; then
		GO_LOG="build failed: $GO_CMD
$(tail -n 20 "$log")"
		rm -f "$out.tmp"
		return 1
	fi
	mv "$out.tmp" "$out"
}

go_convert() {
	local dir=$1 bin=$2 files rc
	GO_LIDIA='' GO_LOG=''
	rm -rf "$dir"
	mkdir -p "$dir"
	"$LIDIAGEN" -q "$bin" -o "$dir" >"$dir.out" 2>"$dir.err" </dev/null
	rc=$?
	files=$(find "$dir" -type f | sort)
	if [ "$rc" -ne 0 ] || [ "$(printf '%s' "$files" | grep -c .)" -ne 1 ]; then
		GO_LOG="lidiagen -q $bin -o $dir: exit $rc; files written: ${files:-none}
$(head -n 10 "$dir.err")"
		return 1
	fi
	GO_LIDIA=$files
}

# go_pyroscope LABEL FILE: Pyroscope's reader (re-stated) accepts FILE.
go_pyroscope() {
	local out
	if out=$(pyroscope_reader "$2" 2>&1); then
		ok "$1: opens in Pyroscope's reader ($(printf '%s' "$out" | head -n 1))"
	else
		not_ok "$1: opens in Pyroscope's reader"
		go_diag "pyroscope_reader $2: $out"
	fi
}

# go_key LABEL FILE NAME: FILE is written under the build ID of variant NAME.
go_key() {
	local want
	want=$(go_id "$3")
	if [ "$(basename "$2")" = "$want" ] && [ "$(basename "$(dirname "$2")")" = anonymous ]; then
		ok "$1: written as symbolizer/anonymous/<its GNU build ID>"
	else
		not_ok "$1: written as symbolizer/anonymous/<its GNU build ID>"
		go_diag "written: $2" "want: .../symbolizer/anonymous/$want"
	fi
}
