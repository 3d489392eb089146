#!/usr/bin/env bash
# make check-layers (tests/tools/check_layers.py): the tree as it is passes,
# and each kind of breach, made in a copy of lib/ and cmd/lidiagen/, fails
# with a line naming the file.
set -u
. "$(dirname "$0")/lib/common.sh"

root=$(cd "$TESTS_DIR/.." && pwd)
check=$TESTS_DIR/tools/check_layers.py
w=$TEST_TMP/t_layers
rm -rf "$w" && mkdir -p "$w"

if out=$(python3 "$check" 2>&1); then
	ok "layers: the tree passes"
else
	not_ok "layers: the tree passes" "$out"
fi

# breach WHAT FILE LINE WANT: add LINE at the top of FILE in a fresh copy; the
# check must fail with WANT (a fixed string) on stderr.
breach() {
	local what=$1 file=$2 line=$3 want=$4
	rm -rf "$w/copy" && mkdir -p "$w/copy/tests/tools"
	cp -r "$root/lib" "$w/copy/lib" && mkdir -p "$w/copy/cmd" && cp -r "$root/cmd/lidiagen" "$w/copy/cmd/"
	{ printf '%s\n' "$line"; cat "$w/copy/$file"; } >"$w/copy/$file.new" && mv "$w/copy/$file.new" "$w/copy/$file"
	if python3 "$check" --root "$w/copy" >"$w/out" 2>"$w/err"; then
		not_ok "layers: $what fails" "exit 0"
	elif grep -qF "$want" "$w/err"; then
		ok "layers: $what fails: $(grep -F "$want" "$w/err" | head -n 1)"
	else
		not_ok "layers: $what fails naming it" "$(cat "$w/err")"
	fi
}

breach "an include back up (index/ of batch/)" cmd/lidiagen/index/state.c '#include "batch.h"' \
	"cmd/lidiagen/index/state.c: includes cmd/lidiagen/batch/batch.h: cmd/lidiagen/index may not include from cmd/lidiagen/batch"
breach "util/ of cli/" cmd/lidiagen/util/json.c '#include "options.h"' \
	"cmd/lidiagen/util may not include from cmd/lidiagen/cli"
breach "libcurl outside publish/" cmd/lidiagen/batch/convert.c '#include <curl/curl.h>' \
	"cmd/lidiagen/batch/convert.c: includes <curl/curl.h>"
breach "libcurl in the library" lib/store/store.c '#include <curl/curl.h>' \
	"lib/store/store.c: includes <curl/curl.h>"
breach "libdebuginfod in the library" lib/input/debug_find.c '#include <elfutils/debuginfod.h>' \
	"lib/input/debug_find.c: includes <elfutils/debuginfod.h>"
breach "libdw in lib/format" lib/format/reader.c '#include <elfutils/libdw.h>' \
	"lib/format/reader.c: includes <elfutils/libdw.h>"
breach "the library of the command" lib/input/spill.c '#include "usage.h"' \
	"lib/input may not include from cmd/lidiagen/util"
breach "two units of one folder in a cycle" cmd/lidiagen/util/cgroup.h '#include "cpus.h"' \
	"units include each other"
