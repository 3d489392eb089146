#!/usr/bin/env bash
# The batch mode (issue 5): `lidiagen -r DIST -o OUT` over a tree of plain
# files and archives (tar.zst, zip, cpio.gz, .deb + -dbg .deb, .rpm, nested,
# hostile member names) built here from tests/fixtures/batch/. Checks the set
# of keys against readelf -n, every output against Pyroscope's reader, the
# pairs (stripped binary in one .deb, its debug file in another) against
# llvm-symbolizer on the unstripped program, exit codes and messages of bad
# inputs, determinism (-j 1 / -j 2 / input order), re-runs (--state FILE, --force,
# a debug file added later), layouts, --tenant, --manifest, --fallback-key,
# --shard, --include/--exclude, and the archive limits.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/batch_fixtures.sh"

L=$LIDIAGEN
w=$(scratch work)
# Every run is bounded: a batch that hangs is a failed check, not a hung suite.
T=${BATCH_TIMEOUT:-30}

if ! bf_build "$w/fx"; then
	not_ok "batch: the fixtures build" "$BF_LOG"
	exit 0
fi
note "fixtures built with:" "$(cat "$w/fx/commands.txt" | grep -v '^head\|batch_mkarchive' | sed -n '1,3p;/strip\|dpkg-deb\|rpmbuild\|go build/p')"
[ "$BF_RPM" = rpm ] || skip "batch: an .rpm input (rpmbuild is missing: a cpio.gz stands in for it)"
[ "$BF_TOOLS" = tools.tar.zst ] || skip "batch: a tar.zst input (the zstd command is missing: a tar.xz stands in for it)"
cd "$w/fx" || exit 0

# brun PREFIX ARGS...: lidiagen ARGS (under a timeout), stdout to PREFIX.out,
# stderr to PREFIX.err; sets RC (124: timed out).
brun() {
	local p=$1
	shift
	timeout -k 5 "$T" "$L" "$@" >"$p.out" 2>"$p.err" </dev/null
	RC=$?
}
# keys DIR: the build IDs of a pyroscope-layout tree (anonymous tenant), sorted.
keys() { (ls "$1/symbolizer/anonymous" 2>/dev/null) | sort; }
# files_in DIR: every file under DIR, relative, sorted.
files_in() { (cd "$1" 2>/dev/null && find . -type f | sed 's|^\./||' | sort); }
# set_of ID...: the IDs given, one a line, sorted.
set_of() { printf '%s\n' "$@" | sed '/^$/d' | sort; }
# expect_keys WHAT DIR ID...: the tree's keys are exactly those.
expect_keys() {
	local what=$1 dir=$2
	shift 2
	local want got
	want=$(set_of "$@")
	got=$(keys "$dir")
	if [ "$want" = "$got" ]; then
		ok "$what"
	else
		not_ok "$what" "missing: $(comm -23 <(echo "$want") <(echo "$got") | tr '\n' ' ')" \
			"unexpected: $(comm -13 <(echo "$want") <(echo "$got") | tr '\n' ' ')" "$(first_lines 8 "$p.err")"
	fi
}
# summary_has PREFIX TEXT: the summary line (last on stderr) says TEXT.
summary_has() { tail -n 1 "$1.err" | grep -q -- "$2"; }
# without ID... : the lines of stdin that are not one of the IDs.
without() { grep -v -x -F -f <(printf '%s\n' "$@"); }

E_CLEAN=$(set_of "$ID1" "$ID2" "$ID3" "$ID4" "$ID5" "$ID6" "$ID7" "$ID8" "$ID9" "$ID12" "$ID13" "$ID14")
E_MAIN=$(set_of $E_CLEAN "$ID11")

# ---- One run over everything, bad inputs included --------------------------------

p=$w/main
brun "$p" -r dist bad -o "$w/out" --manifest "$w/main.jsonl"
if [ "$RC" -eq 1 ]; then
	ok "batch: exit 1 when some inputs fail"
else
	not_ok "batch: exit 1 when some inputs fail" "lidiagen -r dist bad -o out: exit $RC" "$(first_lines 10 "$p.err")"
fi
got=$(keys "$w/out")
missing=$(comm -23 <(echo "$E_MAIN") <(echo "$got"))
extra=$(comm -13 <(echo "$E_MAIN") <(echo "$got"))
if [ -z "$missing" ]; then
	ok "batch: every build ID of the good inputs (readelf -n) has an output: plain, duplicate, ${BF_TOOLS#tools.}, zip, cpio.gz, .deb pair, $BF_RPM, nested, ../ and /abs members, before a truncation"
else
	not_ok "batch: every build ID of the good inputs (readelf -n) has an output" "missing: $missing" \
		"$(first_lines 20 "$p.err")"
fi
if [ -z "$extra" ]; then
	ok "batch: no output for anything else (truncated ELF, no build ID, Go without --fallback-key)"
else
	for k in $extra; do
		case $k in
		"$ID10") note "$k is app10's: the truncated ELF bad/corrupt-app was converted" ;;
		*) note "$k: unexpected" ;;
		esac
	done
	not_ok "batch: no output for anything else (truncated ELF, no build ID, Go without --fallback-key)" \
		"extra keys: $extra" "$(grep -F "$ID10" "$p.out" | head -3)"
fi
# Outside symbolizer/: nothing (the state is kept only with --state FILE).
others=$(cd "$w/out" && find . ! -type d ! -path './symbolizer/anonymous/*')
if [ -z "$others" ]; then
	ok "batch: nothing written under out/ but symbolizer/anonymous/<build-id>"
else
	not_ok "batch: nothing written under out/ but symbolizer/anonymous/<build-id>" "$others"
fi

# Bad inputs: one line each, naming the file (and the member).
bad_line() { # WHAT PATTERN: exactly one stderr line matches ^lidiagen: PATTERN
	local n
	n=$(grep -c -E "^lidiagen: $2" "$p.err")
	if [ "$n" -eq 1 ]; then
		ok "$1"
	else
		not_ok "$1" "$n lines match '^lidiagen: $2' on stderr, want 1" "$(grep -v '^lidiagen: warning' "$p.err" | head -8)"
	fi
}
bad_line "batch: a truncated ELF is one error line naming it" 'bad/corrupt-app: '
bad_line "batch: an archive cut after its first member is one error line naming it" 'bad/truncated\.tar\.gz(![^:]*)?: '
bad_line "batch: an archive cut in half is one error line naming it" 'bad/truncated-small\.tar\.gz(![^:]*)?: '
# (The message after "FILE: ": the file names say "truncated" themselves.)
if grep -E '^lidiagen: bad/truncated\.tar\.gz' "$p.err" | sed 's/^lidiagen: [^ ]*: //' | grep -q -i 'truncat'; then
	ok "batch: a truncated archive is called truncated"
else
	not_ok "batch: a truncated archive is called truncated" "$(grep -E '^lidiagen: bad/truncated' "$p.err")"
fi
if grep -E '^lidiagen: bad/truncated-small\.tar\.gz' "$p.err" | sed 's/^lidiagen: [^ ]*: //' | grep -q -i 'truncat\|corrupt'; then
	ok "batch: an archive cut before its first header is called truncated or corrupt"
else
	not_ok "batch: an archive cut before its first header is called truncated or corrupt" \
		"$(grep -E '^lidiagen: bad/truncated-small' "$p.err")"
fi
# Every other line: a warning, the summary, or an error naming an input.
strays=$(grep -v -E '^lidiagen: (warning: )?(dist|bad)/[^:]+: |^lidiagen: [0-9]+ files?, ' "$p.err")
if [ -z "$strays" ]; then
	ok "batch: every stderr line is 'lidiagen: [warning: ]FILE[!MEMBER]: why' or the summary"
else
	not_ok "batch: every stderr line is 'lidiagen: [warning: ]FILE[!MEMBER]: why' or the summary" "$strays"
fi
if grep -q '^lidiagen: warning: dist/bin/nobid: .*build ID' "$p.err" &&
	{ [ -z "$BF_GO" ] || grep -q '^lidiagen: warning: dist/go/gohello: .*fallback-key' "$p.err"; } &&
	! grep -q '^lidiagen: dist/bin/nobid\|^lidiagen: dist/go/' "$p.err"; then
	ok "batch: programs without a GNU build ID are warned about (Go: see --fallback-key), not failures"
else
	not_ok "batch: programs without a GNU build ID are warned about (Go: see --fallback-key), not failures" \
		"$(grep 'nobid\|gohello' "$p.err")"
fi
if summary_has "$p" '3 failed'; then
	ok "batch: the summary counts the 3 bad inputs as failed"
else
	not_ok "batch: the summary counts the 3 bad inputs as failed" "$(tail -n 1 "$p.err")"
fi

# Hostile member names: read as data, never used as paths.
escaped=
for base in "$w/fx" "$w/out" "$w/out/symbolizer/anonymous" "$w/fx/dist/evil"; do
	for f in ../../../escape-app12 ../zip-escape14 escape-app12 zip-escape14; do
		[ -e "$base/$f" ] && escaped="$escaped $base/$f"
	done
done
[ -e "$BF_EVIL_ABS" ] && escaped="$escaped $BF_EVIL_ABS"
found=$(find "$TEST_TMP" -name 'escape-app12' -o -name 'zip-escape14' -o -name 'abs-app13' 2>/dev/null)
if [ -z "$escaped$found" ] && [ -f "$w/out/symbolizer/anonymous/$ID12" ] &&
	[ -f "$w/out/symbolizer/anonymous/$ID13" ] && [ -f "$w/out/symbolizer/anonymous/$ID14" ]; then
	ok "batch: members named ../x and /abs/x are converted and nothing is written at those names"
else
	not_ok "batch: members named ../x and /abs/x are converted and nothing is written at those names" \
		"written: $escaped $found" "outputs of ID12 ID13 ID14: $(ls "$w/out/symbolizer/anonymous/" | grep -c -F -e "$ID12" -e "$ID13" -e "$ID14")"
fi

# Every output opens with Pyroscope's reader logic.
files=$(find "$w/out" -type f | sort)
if pyroscope_reader --each $files >"$w/validate.txt" 2>&1; then
	ok "batch: all $(echo "$files" | grep -c .) outputs open in Pyroscope's reader (CRCs on)"
else
	not_ok "batch: every output opens in Pyroscope's reader" "$(grep -v '^ok' "$w/validate.txt" | head -5)"
fi
# And the .deb pair's output opened on its own.
if pyroscope_reader "$w/out/symbolizer/anonymous/$ID4" >"$w/pl.txt" 2>&1; then
	ok "batch: Pyroscope's reader accepts the .deb pair's output"
else
	not_ok "batch: Pyroscope's reader accepts the .deb pair's output" "$(cat "$w/pl.txt")"
fi

# The pairs: a stripped binary (batch_1.0_amd64.deb) and its debug file
# (batch-dbg_1.0_amd64.deb, .build-id path) make one output with the debug
# file's DWARF: an address inside the inlined batch_mixer has its inline frame,
# file and line, and the function chain llvm-symbolizer gives on the program
# as linked.
pair_check() { # NAME UNSTRIPPED ID
	local name=$1 prog=$2 id=$3 range start size addrs a chain_llvm chain_l
	range=$(nm -S "$prog" | awk '$4 == "batch_outer" { print $1, $2 }')
	start=$((16#${range% *}))
	size=$((16#${range#* }))
	if [ -z "$range" ] || ! need_tool llvm-symbolizer "$LLVM_SYMBOLIZER"; then
		not_ok "batch: $name pair: batch_outer found in the program" "nm: '$range'"
		return
	fi
	addrs=$(for ((a = start; a < start + size; a++)); do printf '0x%x\n' "$a"; done)
	"$LLVM_SYMBOLIZER" --obj="$prog" --inlining --output-style=JSON <<<"$addrs" >"$w/$name.llvm.json" 2>&1
	if ! "$PYTHON" "$TESTS_LIB/batch_check.py" pick-inline "$w/$name.llvm.json" batch_mixer >"$w/$name.pick"; then
		not_ok "batch: $name pair: llvm-symbolizer shows batch_mixer inlined in batch_outer" "$(head -c 400 "$w/$name.llvm.json")"
		return
	fi
	a=$(sed -n 1p "$w/$name.pick")
	chain_llvm=$(sed -n 2p "$w/$name.pick")
	"$L" lookup --json "$w/out/symbolizer/anonymous/$id" "$a" >"$w/$name.lookup.json" 2>&1
	chain_l=$("$PYTHON" "$TESTS_LIB/batch_check.py" chain "$w/$name.lookup.json" 2>&1)
	if [ "$(sed -n 1p <<<"$chain_l")" = "$chain_llvm" ] && [ "$(sed -n 2p <<<"$chain_l")" = inlined-with-file ]; then
		ok "batch: $name pair (stripped .deb + -dbg .deb): at $a the output has an inline frame with file and line, chain $chain_llvm as llvm-symbolizer"
	else
		not_ok "batch: $name pair (stripped .deb + -dbg .deb): the output has the debug file's inline frames at $a" \
			"llvm-symbolizer on the program as linked: $chain_llvm" "lidiagen lookup --json: $(cat "$w/$name.lookup.json")"
	fi
}
pair_check executable prog/app4 "$ID4"
pair_check library prog/libbatch.so.1 "$ID5"

# The manifest.
if "$PYTHON" "$TESTS_LIB/batch_check.py" manifest "$w/main.jsonl" "$w/out" >"$w/manifest.txt" 2>&1; then
	ok "manifest: JSON Lines with build_id, output, status, inputs, holds, counts, size, and sha256 = sha256sum of the output"
else
	not_ok "manifest: JSON Lines with build_id, output, status, inputs, holds, counts, size, and sha256 = sha256sum of the output" \
		"$(grep '^error' "$w/manifest.txt" | head -5)"
fi
mkeys=$(grep -v '^error' "$w/manifest.txt" | cut -d' ' -f1 | sort)
if [ "$mkeys" = "$(keys "$w/out")" ]; then
	ok "manifest: one line per output, none twice"
else
	not_ok "manifest: one line per output, none twice" "manifest: $(echo $mkeys)" "tree: $(keys "$w/out" | tr '\n' ' ')"
fi
row() { grep "^$1 " "$w/manifest.txt"; }
want_rows=(
	"$ID1 symbolizer/anonymous/$ID1 converted lines=true inlines=true go=false dist/bin/app1|dist/bin/dup/app1-copy"
	"$ID3 symbolizer/anonymous/$ID3 converted lines=true inlines=true go=false dist/pkgs/$BF_TOOLS!usr/bin/app3|dist/pkgs/tools.zip!bin/app3"
	"$ID4 symbolizer/anonymous/$ID4 converted lines=true inlines=true go=false dist/debs/batch-dbg_1.0_amd64.deb!data.tar.xz!./usr/lib/debug/.build-id/${ID4:0:2}/${ID4:2}.debug|dist/debs/batch_1.0_amd64.deb!data.tar.xz!./usr/bin/app4"
	"$ID5 symbolizer/anonymous/$ID5 converted lines=true inlines=true go=false dist/debs/batch-dbg_1.0_amd64.deb!data.tar.xz!./usr/lib/debug/.build-id/${ID5:0:2}/${ID5:2}.debug|dist/debs/batch_1.0_amd64.deb!data.tar.xz!./usr/lib/x86_64-linux-gnu/libbatch.so.1"
	"$ID7 symbolizer/anonymous/$ID7 converted lines=true inlines=true go=false dist/nested/outer.tar.gz!inner/inner.zip!app7"
	"$ID8 symbolizer/anonymous/$ID8 converted lines=true inlines=true go=false dist/nested/outer.tar.gz!inner/deeper.tar.xz!level2.cpio!usr/bin/app8"
	"$ID9 symbolizer/anonymous/$ID9 converted lines=true inlines=true go=false dist/pkgs/app9.cpio.gz!./usr/bin/app9"
	"$ID11 symbolizer/anonymous/$ID11 converted lines=true inlines=true go=false bad/truncated.tar.gz!usr/bin/app11"
	"$ID12 symbolizer/anonymous/$ID12 converted lines=true inlines=true go=false dist/evil/evil.tar!../../../escape-app12"
)
[ "$BF_RPM" = rpm ] && want_rows+=("$ID6 symbolizer/anonymous/$ID6 converted lines=true inlines=true go=false dist/rpms/batchfix-1.0-1.x86_64.rpm!./usr/bin/app6")
bad_rows=()
for r in "${want_rows[@]}"; do
	[ "$(row "${r%% *}")" = "$r" ] || bad_rows+=("want: $r" "got:  $(row "${r%% *}")")
done
if [ ${#bad_rows[@]} -eq 0 ]; then
	ok "manifest: inputs as FILE!MEMBER!MEMBER paths (duplicates, .deb pairs, nested, rpm, cpio), what each output holds"
else
	not_ok "manifest: inputs as FILE!MEMBER!MEMBER paths, what each output holds" "${bad_rows[@]}"
fi

# ---- Determinism: -j 1, -j 2, another order -----------------------------------

p=$w/j1
brun "$p" -r dist -o "$w/j1" -j 1 --manifest "$w/j1.jsonl" --state "$w/j1.state"
rc_j1=$RC
expect_keys "batch: a tree of good inputs: exactly the expected build IDs" "$w/j1" $E_CLEAN
if [ "$rc_j1" -eq 0 ]; then
	ok "batch: a tree of good inputs: exit 0 (files without a build ID are warnings)"
else
	not_ok "batch: a tree of good inputs: exit 0" "exit $rc_j1" "$(first_lines 10 "$p.err")"
fi
brun "$w/j2" -r dist -o "$w/j2" -j 2 --manifest "$w/j2.jsonl" --state "$w/j2.state"
# The manifests' "object" names each run's own -o: the rest must be the same bytes.
unout() { sed "s|\"object\":\"$w/$1/|\"object\":\"OUT/|" "$w/$1.jsonl"; }
if diff -r "$w/j1" "$w/j2" >"$w/j.diff" 2>&1 && cmp -s <(unout j1) <(unout j2); then
	ok "batch: -j 1 and -j 2 give byte-identical trees and manifests"
else
	not_ok "batch: -j 1 and -j 2 give byte-identical trees and manifests" "$(head -5 "$w/j.diff")" \
		"$(diff "$w/j1.jsonl" "$w/j2.jsonl" | head -4)"
fi
if cmp -s "$w/j1.state" "$w/j2.state"; then
	ok "batch: -j 1 and -j 2 give byte-identical --state files"
else
	not_ok "batch: -j 1 and -j 2 give byte-identical --state files" "$(diff "$w/j1.state" "$w/j2.state" | head -6)"
fi
rev=$(cd dist && ls | sort -r | sed 's|^|dist/|')
# shellcheck disable=SC2086
brun "$w/rev" -r $rev -o "$w/rev" -j 2 --manifest "$w/rev.jsonl"
if diff -r "$w/j1" "$w/rev" >"$w/rev.diff" 2>&1 && cmp -s <(unout j1) <(unout rev); then
	ok "batch: inputs named in another order give an identical tree and manifest"
else
	not_ok "batch: inputs named in another order give an identical tree and manifest" "$(head -5 "$w/rev.diff")" \
		"$(diff "$w/j1.jsonl" "$w/rev.jsonl" | head -4)"
fi

# ---- Re-runs: nothing new, --force, a debug file added later ------------------------

if [ -s "$w/j1.state" ]; then
	ok "incremental: a clean run with --state FILE writes it"
else
	not_ok "incremental: a clean run with --state FILE writes it" "$(ls -a "$w")"
fi
# Outputs dated 2001: a run that leaves them alone leaves that date.
find "$w/j1" -type f -exec touch -d @1000000000 {} +
mt() { find "$1" -type f -printf '%P %T@\n' | sort; }
before=$(mt "$w/j1")
p=$w/again
brun "$p" -r dist -o "$w/j1" -j 2 -v --state "$w/j1.state"
if [ "$RC" -eq 0 ] && summary_has "$p" ' 0 written' && [ "$(mt "$w/j1")" = "$before" ]; then
	ok "incremental: a second run (--state) writes nothing ('0 written') and touches no output"
else
	not_ok "incremental: a second run (--state) writes nothing ('0 written') and touches no output" "exit $RC" \
		"$(tail -n 1 "$p.err")" "changed: $(diff <(echo "$before") <(mt "$w/j1") | grep -c '^>')"
fi
if [ "$(grep -c '^kept ' "$p.out")" -eq "$(echo "$E_CLEAN" | grep -c .)" ]; then
	ok "incremental: with -v, each kept output says so"
else
	not_ok "incremental: with -v, each kept output says so" "$(first_lines 5 "$p.out")"
fi
p=$w/again-nostate
brun "$p" -r dist -o "$w/j1" -j 2
if [ "$RC" -eq 0 ] && summary_has "$p" ' 0 written' && [ "$(mt "$w/j1")" = "$before" ]; then
	ok "incremental: without --state too, a second run writes nothing and touches no output"
else
	not_ok "incremental: without --state too, a second run writes nothing and touches no output" "exit $RC" \
		"$(tail -n 1 "$p.err")" "changed: $(diff <(echo "$before") <(mt "$w/j1") | grep -c '^>')"
fi
p=$w/force
brun "$p" -r dist -o "$w/j1" -j 2 --force --state "$w/j1.state"
n=$(echo "$E_CLEAN" | grep -c .)
changed=$(diff <(echo "$before") <(mt "$w/j1") | grep -c '^>')
if [ "$RC" -eq 0 ] && summary_has "$p" " 0 written, $n kept" && [ "$changed" -eq 0 ] &&
	diff -r "$w/j1" "$w/j2" >/dev/null; then
	ok "incremental: --force reconverts all $n outputs, finds the same bytes, rewrites none"
else
	not_ok "incremental: --force reconverts all $n outputs, finds the same bytes, rewrites none" "exit $RC" \
		"$(tail -n 1 "$p.err")" "$changed outputs rewritten"
fi
# The stripped .deb alone, by default: the executable has no function to
# give, the library only .dynsym's: neither is written (an object of
# .dynsym alone would stop the profiler from looking for better), each with
# a warning; a re-run with --state says the same without reading the .deb.
mkdir -p "$w/dyn/dist"
cp dist/debs/batch_1.0_amd64.deb "$w/dyn/dist/"
for k in 1 2; do
	p=$w/dyn$k
	brun "$p" -r "$w/dyn/dist" -o "$w/dyn/out" --manifest "$w/dyn$k.jsonl" --state "$w/dyn.state"
	if [ "$RC" -eq 0 ] && [ ! -e "$w/dyn/out/symbolizer/anonymous/$ID5" ] &&
		grep -q "\"build_id\":\"$ID5\",\"status\":\"skipped\",\"reason\":\"only .dynsym\"" "$w/dyn$k.jsonl" &&
		grep -q "^lidiagen: warning: .*libbatch.so.1: only exported symbols (.dynsym), not written .*: give its debug file or --debug-dir, or --allow-dynsym-only$" "$p.err" &&
		summary_has "$p" '(1 nothing to symbolize, 1 only .dynsym)' &&
		{ [ "$k" -eq 1 ] || ! grep -q '"read":' "$w/dyn$k.jsonl"; }; then
		ok "dynsym only: run $k: the library of a stripped .deb is not written, warned about, skipped 'only .dynsym'$([ "$k" -eq 2 ] && echo ' (the .deb unread: --state)')"
	else
		not_ok "dynsym only: run $k: the library of a stripped .deb is not written, warned about" \
			"exit $RC" "$(cat "$w/dyn$k.jsonl" 2>&1 | head -4)" "$(cat "$p.err")"
	fi
done
# With --allow-dynsym-only: the library's .dynsym is written (a warning);
# both are upgraded when the -dbg .deb arrives, and the log says which it replaced.
mkdir -p "$w/up/dist"
cp dist/debs/batch_1.0_amd64.deb "$w/up/dist/"
p=$w/up1
brun "$p" -r "$w/up/dist" -o "$w/up/out" --manifest "$w/up1.jsonl" --state "$w/up.state" --allow-dynsym-only
l4=$(grep -c "\"build_id\":\"$ID4\",\"status\":\"skipped\",\"reason\":\"nothing to symbolize\"" "$w/up1.jsonl")
l5=$(grep -c "\"build_id\":\"$ID5\".*\"lines\":false.*\"warning\":\".*(.dynsym)" "$w/up1.jsonl")
if [ "$RC" -eq 0 ] && [ "$l4" -eq 1 ] && [ "$l5" -eq 1 ] && [ -f "$w/up/out/symbolizer/anonymous/$ID5" ] &&
	[ ! -e "$w/up/out/symbolizer/anonymous/$ID4" ] &&
	grep -q "^lidiagen: warning: .*app4: nothing to symbolize.*: give its debug file or --debug-dir$" "$p.err" &&
	grep -q "^lidiagen: warning: .*libbatch.so.1: only exported symbols.*: give its debug file or --debug-dir$" "$p.err"; then
	ok "incremental: the stripped .deb alone: no file for the executable, .dynsym only for the library, each warned about"
else
	not_ok "incremental: the stripped .deb alone: no file for the executable, .dynsym only for the library, each warned about" \
		"exit $RC" "$(cat "$w/up1.jsonl" 2>&1 | head -3)" "$(cat "$p.err")"
fi
cp dist/debs/batch-dbg_1.0_amd64.deb "$w/up/dist/"
p=$w/up2
brun "$p" -r "$w/up/dist" -o "$w/up/out" -v --manifest "$w/up2.jsonl" --state "$w/up.state" --allow-dynsym-only
if [ "$RC" -eq 0 ] && summary_has "$p" ' 2 written (1 replaced)' && grep -F "$ID4" "$p.out" | grep -q -v 'replaced' &&
	grep -F "$ID5" "$p.out" | grep -q '^replaced .*(it had less)$' && grep -q "\"build_id\":\"$ID4\".*\"inlines\":true" "$w/up2.jsonl" &&
	grep -q "\"build_id\":\"$ID5\".*\"status\":\"replaced\".*\"inlines\":true" "$w/up2.jsonl"; then
	ok "incremental: adding the -dbg .deb later gives both lines and inlines, and the log says which it replaced"
else
	not_ok "incremental: adding the -dbg .deb later gives both lines and inlines, and the log says which it replaced" "exit $RC" \
		"$(cat "$p.out")" "$(tail -n 2 "$p.err")"
fi
p=$w/up3
brun "$p" -r "$w/up/dist" -o "$w/up/out" --state "$w/up.state"
if [ "$RC" -eq 0 ] && summary_has "$p" ' 0 written'; then
	ok "incremental: and the run after that converts nothing"
else
	not_ok "incremental: and the run after that converts nothing" "exit $RC" "$(tail -n 1 "$p.err")"
fi

# ---- Layouts and tenants ----------------------------------------------------------------

lay() { # WHAT WANT_FILES ARGS...
	local what=$1 want=$2 dir=$w/lay-$3
	shift 3
	rm -rf "$dir"
	brun "$dir" -r dist/bin dist/debs -o "$dir" "$@"
	if [ "$RC" -eq 0 ] && [ "$(files_in "$dir")" = "$(echo "$want" | sort)" ]; then
		ok "$what"
	else
		not_ok "$what" "exit $RC" "want: $(echo $want)" "got: $(files_in "$dir" | tr '\n' ' ')" "$(first_lines 3 "$dir.err")"
	fi
}
ids3="$ID1 $ID4 $ID5"
lay "layout: pyroscope (default) is symbolizer/anonymous/<id>" "$(for i in $ids3; do echo "symbolizer/anonymous/$i"; done)" pyroscope
lay "layout: debuginfod is buildid/<id>/lidia" "$(for i in $ids3; do echo "buildid/$i/lidia"; done)" debuginfod --layout debuginfod
lay "layout: flat is <id>.lidia" "$(for i in $ids3; do echo "$i.lidia"; done)" flat --layout flat
lay "layout: --layout-template 'x/{tenant}/{build_id}.lidia' with --tenant team-a" \
	"$(for i in $ids3; do echo "x/team-a/$i.lidia"; done)" template --layout-template 'x/{tenant}/{build_id}.lidia' --tenant team-a
lay "tenant: --tenant team-a is symbolizer/team-a/<id>" "$(for i in $ids3; do echo "symbolizer/team-a/$i"; done)" tenant --tenant team-a

# ---- --fallback-key -----------------------------------------------------------------------

if [ -n "$BF_GO" ]; then
	gid=$("$BF_GO_BIN" tool buildid "$BF_GO" 2>/dev/null | tr -d '\n')
	ghex=$(printf '%s' "$gid" | od -An -tx1 -v | tr -d ' \n')
	p=$w/fb-go
	brun "$p" dist/go/gohello dist/bin/nobid -o "$w/fb-go" --fallback-key go --manifest "$w/fb-go.jsonl"
	got=$(keys "$w/fb-go")
	if [ "$RC" -eq 0 ] && [ -n "$ghex" ] && [ "$(echo "$got" | grep -c .)" -eq 1 ] && [ "${ghex#"$got"}" != "$ghex" ] &&
		grep -q '"go":true' "$w/fb-go.jsonl"; then
		ok "fallback-key go: the Go program (no -B) is keyed by the hex of its Go build ID ('go tool buildid'), holds Go; the C program without an ID is still skipped"
		[ "$got" = "$ghex" ] || note "the key is the first $((${#got} / 2)) of the Go build ID's ${#gid} bytes (keys are at most 128 hex digits)"
	else
		not_ok "fallback-key go: the Go program is keyed by the hex of its Go build ID" "exit $RC" "go tool buildid: $gid" \
			"hex: $ghex" "keys: $got" "$(first_lines 3 "$p.err")"
	fi
else
	skip "fallback-key go: Go ($BF_GO_BIN) is missing"
fi
p=$w/fb-sha
brun "$p" dist/bin/nobid ${BF_GO:+dist/go/gohello} -o "$w/fb-sha" --fallback-key sha256
want=$(for f in dist/bin/nobid ${BF_GO:+dist/go/gohello}; do sha256sum "$f" | cut -c1-40; done | sort)
if [ "$RC" -eq 0 ] && [ "$(keys "$w/fb-sha")" = "$want" ]; then
	ok "fallback-key sha256: files without a GNU build ID are keyed by the first 40 hex digits of sha256sum"
else
	not_ok "fallback-key sha256: files without a GNU build ID are keyed by the first 40 hex digits of sha256sum" "exit $RC" \
		"want: $(echo $want)" "got: $(keys "$w/fb-sha" | tr '\n' ' ')"
fi
# Inside an archive too: the member's bytes are hashed.
"$PYTHON" "$TESTS_LIB/batch_mkarchive.py" zip "$w/nobid.zip" nobid=dist/bin/nobid
p=$w/fb-sha-zip
brun "$p" "$w/nobid.zip" -o "$w/fb-sha-zip" --fallback-key sha256
if [ "$RC" -eq 0 ] && [ "$(keys "$w/fb-sha-zip")" = "$(sha256sum dist/bin/nobid | cut -c1-40)" ]; then
	ok "fallback-key sha256: a member without a GNU build ID is keyed by its own bytes' sha256"
else
	not_ok "fallback-key sha256: a member without a GNU build ID is keyed by its own bytes' sha256" "exit $RC" \
		"got: $(keys "$w/fb-sha-zip" | tr '\n' ' ')" "$(first_lines 3 "$p.err")"
fi

# ---- --shard -------------------------------------------------------------------------------

brun "$w/s1" -r dist -o "$w/s1" --shard 1/2
rc1=$RC
brun "$w/s2" -r dist -o "$w/s2" --shard 2/2
k1=$(keys "$w/s1") k2=$(keys "$w/s2")
both=$(comm -12 <(echo "$k1") <(echo "$k2"))
union=$(printf '%s\n%s\n' "$k1" "$k2" | sed '/^$/d' | sort -u)
if [ "$rc1" -eq 0 ] && [ "$RC" -eq 0 ] && [ -z "$both" ] && [ "$union" = "$E_CLEAN" ] && [ -n "$k1" ] && [ -n "$k2" ]; then
	ok "shard: --shard 1/2 ($(echo "$k1" | grep -c .) keys) and 2/2 ($(echo "$k2" | grep -c .)) together are the unsharded keys, none twice"
else
	not_ok "shard: --shard 1/2 and 2/2 together are the unsharded keys, none twice" "exit $rc1 / $RC" \
		"in both: $both" "1/2: $(echo $k1)" "2/2: $(echo $k2)"
fi

# ---- --include / --exclude ------------------------------------------------------------------

p=$w/ex-deb
brun "$p" -r dist -o "$w/ex-deb" --exclude '*.deb'
expect_keys "include/exclude: --exclude '*.deb' (paths) leaves both .debs out" "$w/ex-deb" $(echo "$E_CLEAN" | without "$ID4" "$ID5")
p=$w/ex-member
brun "$p" -r dist -o "$w/ex-member" --exclude 'usr/bin/app2'
expect_keys "include/exclude: --exclude 'usr/bin/app2' (a member path) leaves that member out" "$w/ex-member" $(echo "$E_CLEAN" | without "$ID2")
p=$w/ex-nested
brun "$p" -r dist -o "$w/ex-nested" --exclude 'inner.zip'
expect_keys "include/exclude: --exclude 'inner.zip' (a nested archive's member name) leaves it unopened" "$w/ex-nested" $(echo "$E_CLEAN" | without "$ID7")
p=$w/in-path
brun "$p" -r dist -o "$w/in-path" --include '*app1*'
expect_keys "include/exclude: --include '*app1*' takes only the paths matching" "$w/in-path" "$ID1"
p=$w/in-member
brun "$p" -r dist -o "$w/in-member" --include "$BF_TOOLS" --include 'usr/bin/app2'
expect_keys "include/exclude: --include '$BF_TOOLS' --include 'usr/bin/app2' takes one member of one archive" "$w/in-member" "$ID2"

# ---- Limits: a member too large, bombs, depth ---------------------------------------------------

limit() { # WHAT PATTERN ARCHIVE ARGS...: exit 1, a line 'lidiagen: ARCHIVE[!MEMBER]: ...PATTERN', app1 still converted
	local what=$1 pat=$2 arc=$3 dir
	shift 3
	dir=$w/lim-$(basename "$arc" .tar.gz)
	p=$dir
	brun "$p" "$arc" dist/bin/app1 -o "$dir" "$@"
	if [ "$RC" -eq 1 ] && grep -E "^lidiagen: $arc(![^:]*)?: " "$p.err" | sed 's/^lidiagen: [^ ]*: //' | grep -q -i -E "$pat" &&
		[ -f "$dir/symbolizer/anonymous/$ID1" ]; then
		ok "$what"
	else
		not_ok "$what" "lidiagen $arc dist/bin/app1 -o DIR $*: exit $RC (want 1)" \
			"keys: $(keys "$dir" | tr '\n' ' ') (app1's: $ID1)" "$(head -c 600 "$p.err")"
	fi
}
# once WHAT FILE PATTERN: no stderr line matching PATTERN is printed twice.
once() {
	local twice
	twice=$(grep -E "$3" "$2" | sort | uniq -d)
	if [ -z "$twice" ]; then
		ok "$1"
	else
		not_ok "$1" "printed twice: $twice"
	fi
}
limit "limits: an ELF member larger than --max-member-size 16K is refused, exit 1, the rest converted" \
	'larger|limit|refused' bombs/big-member.tar.gz --max-member-size 16K
if [ "$(keys "$w/lim-big-member")" = "$ID1" ]; then
	ok "limits: nothing is made of the refused member"
else
	not_ok "limits: nothing is made of the refused member" "keys: $(keys "$w/lim-big-member" | tr '\n' ' ')"
fi
limit "limits: a nested archive expanding past --max-expansion 4M is refused as a bomb, exit 1" \
	'expand|bomb' bombs/nested-bomb.tar.gz --max-expansion 4M
n=$(grep -c '^lidiagen: bombs/nested-bomb' "$w/lim-nested-bomb.err")
if [ "$n" -eq 1 ]; then
	ok "limits: a nested bomb is one line"
else
	not_ok "limits: a nested bomb is one line" "$(grep 'bombs/nested-bomb' "$w/lim-nested-bomb.err")"
fi
limit "limits: 300 ELF members expanding past --max-expansion 1M are refused as a bomb, exit 1" \
	'expand|bomb' bombs/elf-bomb.tar.gz --max-expansion 1M
once "limits: the bomb's line is printed once (the archive is streamed twice: to identify, to convert)" \
	"$w/lim-elf-bomb.err" '^lidiagen: bombs/'
limit "limits: a tar.gz whose one member (16 MiB of zeros, 16 KB gzipped) expands past --max-expansion 4M is refused, exit 1" \
	'expand|bomb' bombs/flat-bomb.tar.gz --max-expansion 4M
p=$w/depth1
brun "$p" dist/nested/outer.tar.gz -o "$w/depth1" --max-depth 1
if [ "$RC" -eq 1 ] && [ "$(keys "$w/depth1")" = "$ID7" ] &&
	grep -q '^lidiagen: dist/nested/outer.tar.gz!inner/deeper.tar.xz!level2.cpio: .*\(deep\|depth\)' "$p.err"; then
	ok "limits: --max-depth 1 opens outer > inner.zip, not outer > deeper.tar.xz > level2.cpio: a line naming it, exit 1"
else
	not_ok "limits: --max-depth 1 opens outer > inner.zip, not outer > deeper.tar.xz > level2.cpio: a line naming it, exit 1" \
		"exit $RC" "keys: $(keys "$w/depth1" | tr '\n' ' ') (want $ID7)" "$(cat "$p.err")"
fi
once "limits: the depth line is printed once (the archive is streamed twice: to identify, to convert)" "$p.err" '^lidiagen: dist/'
p=$w/depth0
brun "$p" dist/nested/outer.tar.gz -o "$w/depth0" --max-depth 0
if [ "$RC" -eq 1 ] && [ -z "$(keys "$w/depth0")" ] && grep -q 'outer.tar.gz!inner/inner.zip: ' "$p.err"; then
	ok "limits: --max-depth 0 opens no archive inside an archive"
else
	not_ok "limits: --max-depth 0 opens no archive inside an archive" "exit $RC" "keys: $(keys "$w/depth0")" "$(cat "$p.err")"
fi
p=$w/depth2
brun "$p" dist/nested/outer.tar.gz -o "$w/depth2" --max-depth 2
expect_keys "limits: --max-depth 2 reaches outer > deeper.tar.xz > level2.cpio > app8" "$w/depth2" "$ID7" "$ID8"

# Found by fuzz_archive: a 46-byte zip whose one member inflates past the size
# its header declares (read_elf sized its buffer by the header).
p=$w/zipsize
brun "$p" "$FIXTURES_SRC/batch/zip-inflates-past-size.zip" dist/bin/app1 -o "$w/zipsize"
if [ "$RC" -eq 1 ] && [ -f "$w/zipsize/symbolizer/anonymous/$ID1" ] && ! grep -q -i 'sanitizer' "$p.err" &&
	grep -q '^lidiagen: [^ ]*zip-inflates-past-size.zip' "$p.err"; then
	ok "archives: a zip member that inflates past its declared size fails cleanly (exit 1, the rest converted)"
else
	not_ok "archives: a zip member that inflates past its declared size fails cleanly (exit 1, the rest converted)" \
		"lidiagen tests/fixtures/batch/zip-inflates-past-size.zip dist/bin/app1 -o DIR: exit $RC (139: SIGSEGV)" \
		"$(grep -v '^    #[1-9][0-9]' "$p.err" | head -c 800)"
fi
exit 0
