#!/usr/bin/env bash
# File names as users want them (issue 14, part 6): --prefix-map OLD=NEW.
#
# A C program built here from absolute paths (tests/fixtures/dwarf/dw_main.c
# copied to $TEST_TMP/.../src, compiled as `gcc -O2 -g -Wl,--build-id -o app
# $SRC/dw_main.c`), and a Go program built from $TEST_TMP/.../gosrc without
# -trimpath: with --prefix-map, every file name of the file (function files
# and call sites, DWARF's and Go's) is the unmapped run's with OLD replaced by
# NEW, and nothing else changes (lidiagen dump, line by line); the old prefix
# is nowhere in the file; lookup and Pyroscope's reader show the mapped name.
# Rules: the first that matches wins (both orders); a name no rule matches is
# kept; NEW may be empty (relative names); the YAML key prefix-map (a list)
# does the same, and the command line's list replaces the config's; OLD=NEW
# with no '=' or an empty OLD is a usage error (exit 2).
set -u
. "$(dirname "$0")/lib/common.sh"

need_tool gcc gcc || exit 0
w=$(scratch work)
src=$w/src
mkdir -p "$src"
cp "$FIXTURES_SRC"/dwarf/dw_main.c "$FIXTURES_SRC"/dwarf/dw_part.c "$FIXTURES_SRC"/dwarf/dw_*.h "$src/"
cmd="gcc -O2 -g -Wl,--build-id -o $w/app $src/dw_main.c"
if ! (cd "$w" && $cmd) >"$w/build.log" 2>&1; then
	not_ok "fixture builds: $cmd" "$(tail -n 5 "$w/build.log")"
	exit 0
fi
note "fixture: $cmd"

# conv NAME ARGS...: lidiagen ARGS -o - into $w/NAME.lidia, its dump into $w/NAME.dump; sets RC.
conv() {
	local name=$1
	shift
	"$LIDIAGEN" -q "$@" -o - >"$w/$name.lidia" 2>"$w/$name.err" </dev/null
	RC=$?
	"$LIDIAGEN" dump "$w/$name.lidia" >"$w/$name.dump" 2>&1
}
# same_as_mapped LABEL NAME SED: NAME's dump is the unmapped one's under the sed
# script (which rewrites the names only: "at FILE" and "inlined at FILE:").
same_as_mapped() {
	local want
	want=$(sed -e "$3" "$w/plain.dump")
	if [ "$RC" -eq 0 ] && [ "$want" = "$(cat "$w/$2.dump")" ]; then
		ok "$1"
	else
		not_ok "$1" "exit $RC" "$(first_lines 3 "$w/$2.err")" \
			"$(diff <(echo "$want") "$w/$2.dump" | head -n 8)"
	fi
}
# esc TEXT: TEXT for a sed pattern (paths hold '.' and '/').
esc() { printf '%s' "$1" | sed 's/[][\.*^$|]/\\&/g'; }

conv plain "$w/app"
n=$(grep -c " at $src/" "$w/plain.dump")
if [ "$RC" -eq 0 ] && [ "$n" -gt 10 ]; then
	ok "unmapped: the file names are the absolute paths the compiler saw ($n ranges under $src/)"
else
	not_ok "unmapped: the file names are the absolute paths the compiler saw" "exit $RC, $n ranges" \
		"$(first_lines 5 "$w/plain.dump")"
fi

# Every file name, function files and call sites alike, and only file names.
conv mapped "$w/app" --prefix-map "$src/=/work/app/"
same_as_mapped "--prefix-map $src/=/work/app/: every file name (and call site) mapped, nothing else changed" \
	mapped "s|$(esc "$src/")|/work/app/|g"
if ! grep -qF "$src" "$w/mapped.lidia" && ! cmp -s "$w/plain.lidia" "$w/mapped.lidia"; then
	ok "--prefix-map: the old prefix is nowhere in the file (the strings table holds mapped names only)"
else
	not_ok "--prefix-map: the old prefix is nowhere in the file" "$(grep -c "$src" "$w/mapped.lidia")"
fi
addr=$("$PYTHON" "$TESTS_LIB/elfsyms.py" funcs "$w/app" | awk '$NF == "main" { print $1; exit }')
out=$("$LIDIAGEN" lookup "$w/mapped.lidia" "$addr" 2>&1)
pyr=$(pyroscope_reader "$w/mapped.lidia" "$addr" 2>&1)
if grep -q "main at /work/app/dw_main.c:" <<<"$out" && grep -q "| main @ /work/app/dw_main.c" <<<"$pyr"; then
	ok "--prefix-map: lookup and Pyroscope's reader give main at /work/app/dw_main.c"
else
	not_ok "--prefix-map: lookup and Pyroscope's reader give main at /work/app/dw_main.c" "$out" "$pyr"
fi

# NEW empty: names relative to the old prefix (Bazel's /proc/self/cwd/ to the workspace).
conv relative "$w/app" --prefix-map "$src/="
same_as_mapped "--prefix-map $src/= (empty NEW): names relative to it" relative "s|$(esc "$src/")||g"

# The first rule that matches wins, in the order given.
conv first "$w/app" --prefix-map "$w/=/outer/" --prefix-map "$src/=/inner/"
same_as_mapped "two matching rules: the first wins ($w/ before $src/)" first "s|$(esc "$w/")|/outer/|g"
conv second "$w/app" --prefix-map "$src/=/inner/" --prefix-map "$w/=/outer/"
same_as_mapped "two matching rules: the first wins ($src/ before $w/)" second "s|$(esc "$src/")|/inner/|g"
conv none "$w/app" --prefix-map "/nowhere/=/x/"
if [ "$RC" -eq 0 ] && cmp -s "$w/plain.lidia" "$w/none.lidia"; then
	ok "a rule that matches no name: the same bytes as no rule"
else
	not_ok "a rule that matches no name: the same bytes as no rule" "exit $RC"
fi

# The config key (a list), and the command line's list replacing it.
cat >"$w/cfg.yaml" <<EOF
prefix-map:
  - "$src/=/from-config/"
EOF
conv cfg "$w/app" --config "$w/cfg.yaml"
same_as_mapped "config: prefix-map: [$src/=/from-config/]" cfg "s|$(esc "$src/")|/from-config/|g"
conv cfgcli "$w/app" --config "$w/cfg.yaml" --prefix-map "$src/=/from-cli/"
same_as_mapped "config and --prefix-map: the command line's list replaces the config's" cfgcli \
	"s|$(esc "$src/")|/from-cli/|g"

for bad in "no-equals-sign" "=/x/"; do
	run "$w/bad" "$LIDIAGEN" "$w/app" -o "$w/o-bad" --prefix-map "$bad"
	if [ "$RC" -eq 2 ] && grep -q "prefix-map: '$(esc "$bad")' is not OLD=NEW" "$w/bad.err"; then
		ok "--prefix-map '$bad': usage error (exit 2), said so"
	else
		not_ok "--prefix-map '$bad': usage error (exit 2), said so" "exit $RC" "$(cat "$w/bad.err")"
	fi
done

# ---- Go: the pclntab's file names go through the same rules ---------------------------
go=
for g in ${GO122:-/usr/lib/go-1.22/bin/go} ${GO119:-/usr/lib/go-1.19/bin/go}; do
	[ -x "$g" ] && go=$g && break
done
if [ -z "$go" ]; then
	skip "Go: no go command (/usr/lib/go-1.22 or 1.19)"
	exit 0
fi
gs=$w/gosrc
mkdir -p "$gs"
printf 'module example.com/hello\n\ngo 1.19\n' >"$gs/go.mod"
cat >"$gs/main.go" <<'EOF'
package main

import "fmt"

//go:noinline
func greet(n int) string { return fmt.Sprint("hello ", n) }

func main() { fmt.Println(greet(3)) }
EOF
gcmd="cd $gs && $go build -ldflags=-B=0x1122334455667788 -o $w/hello ."
if ! (cd "$gs" && env GOCACHE="$w/gocache" GOPATH="$w/gopath" GOENV=off GOFLAGS= GOPROXY=off \
	GOTOOLCHAIN=local GOTELEMETRY=off GOWORK=off "$go" build -ldflags=-B=0x1122334455667788 \
	-o "$w/hello" .) >"$w/gobuild.log" 2>&1; then
	not_ok "Go fixture builds: $gcmd" "$(tail -n 5 "$w/gobuild.log")"
	exit 0
fi
note "Go fixture: $gcmd"
conv goplain "$w/hello"
conv gomapped "$w/hello" --prefix-map "$gs/=hello/"
if [ "$RC" -eq 0 ] && grep -q "main.greet at $gs/main.go" "$w/goplain.dump"; then
	same_as_mapped_go() { # as same_as_mapped, against goplain
		local want
		want=$(sed -e "s|$(esc "$gs/")|hello/|g" "$w/goplain.dump")
		[ "$want" = "$(cat "$w/gomapped.dump")" ]
	}
	if same_as_mapped_go && grep -q "main.greet at hello/main.go" "$w/gomapped.dump"; then
		ok "Go: --prefix-map $gs/=hello/ maps the pclntab's names (main.greet at hello/main.go), nothing else"
	else
		not_ok "Go: --prefix-map $gs/=hello/ maps the pclntab's names" \
			"$(grep 'main.greet' "$w/gomapped.dump" | head -n 3)"
	fi
else
	not_ok "Go: the unmapped file names main.greet at $gs/main.go" "exit $RC" \
		"$(grep 'main.greet' "$w/goplain.dump" | head -n 3)"
fi
