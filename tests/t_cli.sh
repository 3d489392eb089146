#!/usr/bin/env bash
# The command's contract: help and version, usage errors (exit 2), inputs
# that fail (exit 1, the others still converted), inputs without a build ID
# (warned about, skipped), output layouts and keys, `-o -`, atomic writes,
# determinism, and the verify, info and lookup subcommands.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/fixtures.sh"

L=$LIDIAGEN
w=$(scratch work)

# Inputs: three builds (a PIE, a shared library, a C++ program), a split
# pair, and a program without a build ID.
for v in c-gcc-O2 lib-gcc-O2 cxx-gcc-O2 c-split c-nobuildid; do
	if ! fx_build "$v"; then
		not_ok "cli: fixture $v builds" "$FX_LOG"
		exit 0
	fi
	note "build $v: $(cat "$FX/.cmd")"
	case $v in
	c-gcc-O2) A=$FX/c-gcc-O2 ;;
	lib-gcc-O2) B=$FX/liboracle.so ;;
	cxx-gcc-O2) C=$FX/cxx-gcc-O2 ;;
	c-split) S=$FX/c-split SD=$FX/c-split.debug ;;
	c-nobuildid) N=$FX/c-nobuildid ;;
	esac
done
IDA=$(build_id "$A") IDB=$(build_id "$B") IDC=$(build_id "$C") IDS=$(build_id "$S")
if [ -z "$IDA" ] || [ -z "$IDB" ] || [ -z "$IDC" ] || [ -z "$IDS" ] || [ -n "$(build_id "$N")" ]; then
	not_ok "cli: fixtures have the expected build IDs" "A=$IDA B=$IDB C=$IDC S=$IDS N=$(build_id "$N")"
	exit 0
fi
pyro() { echo "$1/symbolizer/anonymous/$2"; } # DIR ID: the default key's path

# expect_rc WHAT WANT [DETAIL...]: check $RC of the last `run`.
expect_rc() {
	local what=$1 want=$2
	shift 2
	if [ "$RC" -eq "$want" ]; then
		ok "$what"
	else
		not_ok "$what" "exit status $RC, want $want" "$@"
	fi
}
# files_in DIR: every regular file under DIR, relative, sorted.
files_in() { (cd "$1" 2>/dev/null && find . -type f | sed 's|^\./||' | sort); }

# ---- help, version, usage errors ------------------------------------------------

run "$w/help" "$L" --help
if [ "$RC" -eq 0 ] && grep -q '^usage: lidiagen' "$w/help.out" && [ ! -s "$w/help.err" ]; then
	ok "--help: usage on stdout, exit 0"
else
	not_ok "--help: usage on stdout, exit 0" "exit $RC" "stdout: $(first_lines 3 "$w/help.out")" \
		"stderr: $(first_lines 3 "$w/help.err")"
fi
run "$w/version" "$L" --version
if [ "$RC" -eq 0 ] && grep -Eq '^lidiagen [0-9]+\.[0-9]+\.[0-9]+' "$w/version.out" && [ ! -s "$w/version.err" ]; then
	ok "--version: 'lidiagen X.Y.Z' on stdout, exit 0"
else
	not_ok "--version: 'lidiagen X.Y.Z' on stdout, exit 0" "exit $RC" \
		"stdout: $(first_lines 3 "$w/version.out")" "stderr: $(first_lines 3 "$w/version.err")"
fi
for sub in convert lookup info dump verify; do
	run "$w/help-$sub" "$L" "$sub" --help
	if [ "$RC" -eq 0 ] && grep -q "^usage: lidiagen.* $sub\b\|^usage: lidiagen \[$sub\]" "$w/help-$sub.out" &&
		[ ! -s "$w/help-$sub.err" ]; then
		ok "$sub --help: its usage on stdout, exit 0"
	else
		not_ok "$sub --help: its usage on stdout, exit 0" "exit $RC" \
			"stdout: $(first_lines 3 "$w/help-$sub.out")" "stderr: $(first_lines 3 "$w/help-$sub.err")"
	fi
done

# usage_error WHAT ARGS...: exit 2, a short usage error on stderr (at most
# 3 lines, never the help: "lidiagen: ..." then "Try 'lidiagen ... --help'"),
# nothing on stdout, and nothing written under $w/u-out. tests/t_usage.sh
# checks every kind of usage error.
usage_error() {
	local what=$1
	shift
	rm -rf "$w/u-out"
	run "$w/usage" "$@"
	local written
	written=$(files_in "$w/u-out")
	if [ "$RC" -eq 2 ] && [ "$(wc -l <"$w/usage.err")" -le 3 ] && grep -q '^lidiagen: ' "$w/usage.err" &&
		grep -q "^Try 'lidiagen.* --help'" "$w/usage.err" && [ ! -s "$w/usage.out" ] && [ -z "$written" ]; then
		ok "$what: exit 2, a short usage error on stderr"
	else
		not_ok "$what: exit 2, a short usage error on stderr" "lidiagen ${*:2}" "exit $RC" \
			"stderr: $(first_lines 4 "$w/usage.err")" "stdout: $(first_lines 2 "$w/usage.out")" \
			"written: ${written:-nothing}"
	fi
}
usage_error "no argument" "$L"
usage_error "unknown option" "$L" --no-such-option "$A" -o "$w/u-out"
usage_error "unknown option of convert" "$L" convert --no-such-option "$A" -o "$w/u-out"
usage_error "no -o" "$L" "$A"
usage_error "no input" "$L" -o "$w/u-out"
# value_error WHAT NEEDLE ARGS...: exit 2, a "lidiagen: " error on stderr
# that quotes NEEDLE (the bad value), nothing on stdout, nothing written.
value_error() {
	local what=$1 needle=$2
	shift 2
	rm -rf "$w/u-out"
	run "$w/usage" "$@"
	local written
	written=$(files_in "$w/u-out")
	if [ "$RC" -eq 2 ] && grep -qF -e "lidiagen: " "$w/usage.err" && grep -qF -e "$needle" "$w/usage.err" &&
		[ ! -s "$w/usage.out" ] && [ -z "$written" ] && [ ! -e "$w/u-out" ]; then
		ok "$what: exit 2, error on stderr"
	else
		not_ok "$what: exit 2, error on stderr" "lidiagen ${*:2}" "exit $RC" \
			"stderr: $(first_lines 4 "$w/usage.err")" "stdout: $(first_lines 2 "$w/usage.out")" \
			"written: ${written:-nothing}"
	fi
}
value_error "unknown layout" "'nested'" "$L" --layout nested "$A" -o "$w/u-out"
usage_error "unknown option of lookup" "$L" lookup --no-such-option x.lidia
usage_error "lookup without a file" "$L" lookup
usage_error "unknown option of verify" "$L" verify --no-such-option "$w"
usage_error "verify without a path" "$L" verify
usage_error "info without a file" "$L" info
for t in ../x .. . a/b '' 'sp ace'; do
	value_error "invalid tenant '$t'" "'$t'" "$L" --tenant "$t" "$A" -o "$w/u-out"
done
value_error "-o - with inputs of two build IDs" "-o -" "$L" "$A" "$B" -o -

# ---- inputs that fail, inputs without a build ID ----------------------------------

printf 'not an ELF file\n' >"$w/notes.txt"
out=$w/bad
run "$out" "$L" "$A" "$w/notes.txt" "$B" -o "$out"
if [ "$RC" -eq 1 ] && grep -q "^lidiagen: $w/notes.txt: " "$out.err" &&
	[ -f "$(pyro "$out" "$IDA")" ] && [ -f "$(pyro "$out" "$IDB")" ]; then
	ok "a non-ELF input: error naming it, exit 1, the other inputs converted"
else
	not_ok "a non-ELF input: error naming it, exit 1, the other inputs converted" "exit $RC" \
		"stderr: $(first_lines 5 "$out.err")" "written: $(files_in "$out")"
fi

out=$w/missing
run "$out" "$L" "$A" "$w/no-such-file" -o "$out"
if [ "$RC" -eq 1 ] && grep -q "^lidiagen: $w/no-such-file: " "$out.err" && [ -f "$(pyro "$out" "$IDA")" ]; then
	ok "a missing input: error naming it, exit 1, the other input converted"
else
	not_ok "a missing input: error naming it, exit 1, the other input converted" "exit $RC" \
		"stderr: $(first_lines 5 "$out.err")" "written: $(files_in "$out")"
fi

out=$w/noid
run "$out" "$L" "$N" "$A" -o "$out"
if [ "$RC" -eq 0 ] && grep -q "^lidiagen: warning: $N: " "$out.err" &&
	[ "$(files_in "$out")" = "symbolizer/anonymous/$IDA" ]; then
	ok "an ELF without a GNU build ID: warning naming it, skipped, exit 0"
else
	not_ok "an ELF without a GNU build ID: warning naming it, skipped, exit 0" "exit $RC" \
		"stderr: $(first_lines 5 "$out.err")" "written: $(files_in "$out")"
fi

# ---- layouts, tenants, stdout ---------------------------------------------------------

out=$w/default
run "$out" "$L" "$A" -o "$out"
expect_rc "convert one input: exit 0" 0 "stderr: $(first_lines 5 "$out.err")"
if [ "$(files_in "$out")" = "symbolizer/anonymous/$IDA" ]; then
	ok "default layout: DIR/symbolizer/anonymous/BUILD-ID"
else
	not_ok "default layout: DIR/symbolizer/anonymous/BUILD-ID" "written: $(files_in "$out")"
fi
ref=$(pyro "$out" "$IDA")

out=$w/flat
run "$out" "$L" --layout flat "$A" -o "$out"
if [ "$RC" -eq 0 ] && [ "$(files_in "$out")" = "$IDA.lidia" ] && cmp -s "$out/$IDA.lidia" "$ref"; then
	ok "--layout flat: DIR/BUILD-ID.lidia, same bytes"
else
	not_ok "--layout flat: DIR/BUILD-ID.lidia, same bytes" "exit $RC" "written: $(files_in "$out")" \
		"stderr: $(first_lines 5 "$out.err")"
fi

out=$w/tenant
run "$out" "$L" --tenant t1 "$A" -o "$out"
if [ "$RC" -eq 0 ] && [ "$(files_in "$out")" = "symbolizer/t1/$IDA" ] && cmp -s "$out/symbolizer/t1/$IDA" "$ref"; then
	ok "--tenant t1: DIR/symbolizer/t1/BUILD-ID, same bytes"
else
	not_ok "--tenant t1: DIR/symbolizer/t1/BUILD-ID, same bytes" "exit $RC" "written: $(files_in "$out")" \
		"stderr: $(first_lines 5 "$out.err")"
fi

(cd "$w" && "$L" "$A" -o - >"$w/stdout.lidia" 2>"$w/stdout.err")
RC=$?
if [ "$RC" -eq 0 ] && cmp -s "$w/stdout.lidia" "$ref" && [ ! -e "$w/-" ]; then
	ok "-o -: the stored file's exact bytes on stdout"
else
	not_ok "-o -: the stored file's exact bytes on stdout" "exit $RC" \
		"stdout $(wc -c <"$w/stdout.lidia") bytes, stored file $(wc -c <"$ref") bytes" \
		"$(cmp "$w/stdout.lidia" "$ref" 2>&1)" "stderr: $(first_lines 5 "$w/stdout.err")"
fi

out=$w/pair
run "$out" "$L" "$S" "$SD" -o "$out"
if [ "$RC" -eq 0 ] && [ "$(files_in "$out")" = "symbolizer/anonymous/$IDS" ]; then
	ok "a stripped binary and its debug file: one output, keyed by their build ID"
else
	not_ok "a stripped binary and its debug file: one output, keyed by their build ID" "exit $RC" \
		"written: $(files_in "$out")" "stderr: $(first_lines 5 "$out.err")"
fi

# ---- determinism ------------------------------------------------------------------------

run "$w/det1" "$L" "$A" "$B" "$C" "$S" "$SD" -o "$w/det1"
rc1=$RC
run "$w/det2" "$L" "$A" "$B" "$C" "$S" "$SD" -o "$w/det2"
rc2=$RC
run "$w/det3" "$L" "$SD" "$S" "$C" "$B" "$A" -o "$w/det3"
rc3=$RC
list1=$(files_in "$w/det1")
nids=$(printf '%s\n' "$IDA" "$IDB" "$IDC" "$IDS" | sort -u | grep -c .)
if [ "$rc1$rc2$rc3" = 000 ] && [ "$(echo "$list1" | grep -c .)" -eq "$nids" ] &&
	diff -r "$w/det1" "$w/det2" >/dev/null && diff -r "$w/det1" "$w/det3" >/dev/null; then
	ok "the same inputs twice, and in reverse order, give identical bytes"
else
	not_ok "the same inputs twice, and in reverse order, give identical bytes" "exits $rc1 $rc2 $rc3" \
		"files ($nids build IDs among the inputs): $list1" "$(diff -r "$w/det1" "$w/det2" 2>&1 | head -3)" \
		"$(diff -r "$w/det1" "$w/det3" 2>&1 | head -3)"
fi
# Determinism must not depend on the path an input is named by either.
mkdir -p "$w/elsewhere"
cp "$A" "$w/elsewhere/renamed-input"
run "$w/det4" "$L" "$w/elsewhere/renamed-input" -o "$w/det4"
if [ "$RC" -eq 0 ] && cmp -s "$(pyro "$w/det4" "$IDA")" "$(pyro "$w/det1" "$IDA")"; then
	ok "a copy of an input under another name gives identical bytes"
else
	not_ok "a copy of an input under another name gives identical bytes" "exit $RC"
fi

# ---- write failures, temporary files ------------------------------------------------------

# Paths that cannot be written (-o, --state, --manifest): a usage error before
# any work, naming the path. Root ignores permission bits, so as root
# lidiagen runs as nobody (setpriv) in a world-readable scratch dir.
ro_check() {
	local what="a read-only output directory, state or manifest: usage error naming it, exit 2"
	local base
	base=$(mktemp -d /tmp/lidiagen-ro.XXXXXX)
	chmod 755 "$base"
	cp "$A" "$base/input"
	chmod 644 "$base/input"
	# A copy of the binary: the tree it lives in may be closed to nobody.
	cp "$L" "$base/lidiagen"
	chmod 755 "$base/lidiagen"
	mkdir -p "$base/out" "$base/rw"
	chmod 555 "$base/out"
	chmod 777 "$base/rw"
	local -a as=()
	if [ "$(id -u)" -eq 0 ]; then
		if command -v setpriv >/dev/null &&
			setpriv --reuid=65534 --regid=65534 --clear-groups "$base/lidiagen" --version >/dev/null 2>&1; then
			as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
		else
			skip "$what (running as root, and cannot run $L as nobody with setpriv)"
			rm -rf "$base"
			return
		fi
	fi
	local c opt args first
	for c in "-o:-o $base/out" "-o:-o $base/out/sub/deeper" \
		"--state:-o $base/rw/o --state $base/out/state" \
		"--manifest:-o $base/rw/o --manifest $base/out/m.jsonl"; do
		opt=${c%%:*} args=${c#*:}
		# shellcheck disable=SC2086 # args: words
		(cd "$base/rw" && "${as[@]}" "$base/lidiagen" "$base/input" $args >"$w/ro.out" 2>"$w/ro.err" </dev/null)
		RC=$?
		first=$(head -n 1 "$w/ro.err")
		if [ "$RC" -eq 2 ] && [[ $first == "lidiagen: $opt: '$base/out"*"' cannot be written"* ]] &&
			[ -z "$(files_in "$base/out")" ] && [ -z "$(ls -A "$base/rw")" ]; then
			ok "$what: $opt ($first)"
		else
			not_ok "$what: $args" "${as[*]} lidiagen $base/input $args: exit $RC" \
				"stderr: $(first_lines 5 "$w/ro.err")" "written: $(files_in "$base/out") $(ls -A "$base/rw")"
		fi
	done
	chmod -R u+w "$base"
	rm -rf "$base"
}
ro_check

# An output path through a regular file: a usage error before any work, for root too.
printf 'x' >"$w/plainfile"
run "$w/through" "$L" "$A" -o "$w/plainfile/out"
if [ "$RC" -eq 2 ] && grep -q "^lidiagen: .*$w/plainfile/out" "$w/through.err"; then
	ok "an output directory below a regular file: usage error naming it, exit 2"
else
	not_ok "an output directory below a regular file: usage error naming it, exit 2" "exit $RC" \
		"stderr: $(first_lines 5 "$w/through.err")"
fi

# The final name taken by a directory: the temporary file is written, the
# rename fails; lidiagen must say so and remove the temporary file.
mkdir -p "$w/isdir/symbolizer/anonymous/$IDA"
touch "$w/isdir/symbolizer/anonymous/$IDA/keep"
run "$w/isdir" "$L" "$A" -o "$w/isdir"
if [ "$RC" -eq 1 ] && grep -q "^lidiagen: .*$IDA" "$w/isdir.err" &&
	[ -z "$(find "$w/isdir" -name '.*.tmp.*')" ]; then
	ok "the output's name taken by a directory: error, exit 1, no temporary file left"
else
	not_ok "the output's name taken by a directory: error, exit 1, no temporary file left" "exit $RC" \
		"stderr: $(first_lines 5 "$w/isdir.err")" "files: $(files_in "$w/isdir")"
fi

tmps=$(find "$w" -name '.*.tmp.*' 2>/dev/null)
if [ -z "$tmps" ]; then
	ok "no temporary file (.*.tmp.*) left in any output tree"
else
	not_ok "no temporary file (.*.tmp.*) left in any output tree" "$tmps"
fi

# ---- verify --------------------------------------------------------------------------------

run "$w/verify-good" "$L" verify "$w/det1"
expect_rc "verify of a good tree: exit 0" 0 "stdout: $(first_lines 5 "$w/verify-good.out")" \
	"stderr: $(first_lines 5 "$w/verify-good.err")"

cp -R "$w/det1" "$w/corrupt"
victim=$(pyro "$w/corrupt" "$IDB")
# Flip one byte in the middle of the range table (offset and size from the header).
"$PYTHON" - "$victim" <<'EOF'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
field, count, off = struct.unpack_from("<QQQ", b, 0x28)
b[off + (8 * field * count) // 2] ^= 0x40
open(p, "wb").write(bytes(b))
EOF
run "$w/verify-bad" "$L" verify "$w/corrupt"
others=$(grep -h -e "$IDA" -e "$IDC" -e "$IDS" "$w/verify-bad.err" "$w/verify-bad.out" | grep -v ' ok$')
if [ "$RC" -eq 1 ] && grep -q "$victim" "$w/verify-bad.err" && [ -z "$others" ]; then
	ok "verify of a tree with one corrupted file: exit 1, names that file only"
else
	not_ok "verify of a tree with one corrupted file: exit 1, names that file only" "exit $RC" \
		"stderr: $(first_lines 5 "$w/verify-bad.err")" "stdout: $(first_lines 5 "$w/verify-bad.out")"
fi
run "$w/verify-file" "$L" verify "$victim"
if [ "$RC" -eq 1 ] && grep -q "$victim" "$w/verify-file.err"; then
	ok "verify of the corrupted file alone: exit 1, names it"
else
	not_ok "verify of the corrupted file alone: exit 1, names it" "exit $RC" \
		"stderr: $(first_lines 5 "$w/verify-file.err")"
fi
cp -R "$w/det1" "$w/withtmp"
printf 'half-written' >"$w/withtmp/symbolizer/anonymous/.$IDA.tmp.12345"
run "$w/verify-tmp" "$L" verify "$w/withtmp"
expect_rc "verify passes over temporary files (.*.tmp.*)" 0 "stderr: $(first_lines 5 "$w/verify-tmp.err")"

# ---- info -------------------------------------------------------------------------------------

run "$w/info" "$L" info "$ref"
if [ "$RC" -eq 0 ] && grep -q 'version' "$w/info.out" && grep -qw 'va' "$w/info.out" &&
	grep -qw 'ranges' "$w/info.out" && grep -qw 'strings' "$w/info.out" &&
	grep -qw 'lines' "$w/info.out" && grep -qw 'ok' "$w/info.out" && ! grep -q MISMATCH "$w/info.out"; then
	ok "info: the header's tables and 'ok', exit 0"
else
	not_ok "info: the header's tables and 'ok', exit 0" "exit $RC" "$(first_lines 10 "$w/info.out")" \
		"stderr: $(first_lines 3 "$w/info.err")"
fi
run "$w/info-bad" "$L" info "$victim"
if [ "$RC" -eq 1 ]; then
	ok "info of a corrupted file: exit 1"
else
	not_ok "info of a corrupted file: exit 1" "exit $RC" "$(first_lines 10 "$w/info-bad.out")"
fi

# ---- lookup ------------------------------------------------------------------------------------

main_addr=$("$PYTHON" "$TESTS_LIB/elfsyms.py" funcs "$A" | awk '$6 == "main" && $5 == "symtab" { print $1; exit }')
fact_addr=$("$PYTHON" "$TESTS_LIB/elfsyms.py" funcs "$A" | awk '$6 == "fact" && $5 == "symtab" { print $1; exit }')
addrs=("$main_addr" "$fact_addr" 0x1 "${main_addr#0x}")
run "$w/lk-args" "$L" lookup "$ref" "${addrs[@]}"
rc_args=$RC
printf '%s\n' "${addrs[@]}" | "$L" lookup "$ref" >"$w/lk-stdin.out" 2>"$w/lk-stdin.err"
rc_stdin=$?
if [ "$rc_args$rc_stdin" = 00 ] && [ -s "$w/lk-args.out" ] && cmp -s "$w/lk-args.out" "$w/lk-stdin.out"; then
	ok "lookup reads addresses from stdin when none are given (same output)"
else
	not_ok "lookup reads addresses from stdin when none are given (same output)" \
		"exits $rc_args (args), $rc_stdin (stdin)" "$(diff "$w/lk-args.out" "$w/lk-stdin.out" | head -5)"
fi
run "$w/lkj-args" "$L" lookup --json "$ref" "${addrs[@]}"
printf '%s\n' "${addrs[@]}" | "$L" lookup --json "$ref" >"$w/lkj-stdin.out" 2>/dev/null
if [ "$RC" -eq 0 ] && [ "$(grep -c . "$w/lkj-args.out")" -eq ${#addrs[@]} ] &&
	cmp -s "$w/lkj-args.out" "$w/lkj-stdin.out"; then
	ok "lookup --json: one line per address, the same from stdin"
else
	not_ok "lookup --json: one line per address, the same from stdin" "exit $RC" \
		"$(first_lines 5 "$w/lkj-args.out")"
fi

# Text form: "0xADDR: FUNC at FILE:LINE", then " (inlined by) FUNC at FILE:LINE"
# lines for outer frames; each address's block ends with an empty line.
bad_lines=$(grep -v -E '^(0x[0-9a-f]+: | \(inlined by\) )[^ ].* at [^ ]*:[0-9]+$|^$' "$w/lk-args.out")
first_main=$(grep -m1 "^$main_addr: " "$w/lk-args.out")
if [ -z "$bad_lines" ] && [[ $first_main == "$main_addr: main at "* ]] &&
	grep -q "^$fact_addr: fact at " "$w/lk-args.out" && grep -q '^0x1: ' "$w/lk-args.out"; then
	ok "lookup text output: '0xADDR: func at file:line'"
else
	not_ok "lookup text output: '0xADDR: func at file:line'" "lines not of that form: ${bad_lines:-none}" \
		"main at $main_addr: ${first_main:-missing}" "$(first_lines 12 "$w/lk-args.out")"
fi

run "$w/lk-notlidia" "$L" lookup "$w/notes.txt" 0x1000
if [ "$RC" -eq 1 ] && grep -q "^lidiagen: $w/notes.txt: " "$w/lk-notlidia.err"; then
	ok "lookup of a file that is not lidia: error naming it, exit 1"
else
	not_ok "lookup of a file that is not lidia: error naming it, exit 1" "exit $RC" \
		"stderr: $(first_lines 3 "$w/lk-notlidia.err")"
fi
# A malformed address is a usage error, found before any lookup.
run "$w/lk-badaddr" "$L" lookup "$ref" "$main_addr" nonsense
if [ "$RC" -eq 2 ] && grep -q "^lidiagen: invalid address 'nonsense'" "$w/lk-badaddr.err" &&
	[ ! -s "$w/lk-badaddr.out" ]; then
	ok "lookup of an invalid address: usage error naming it, exit 2, nothing looked up"
else
	not_ok "lookup of an invalid address: usage error naming it, exit 2, nothing looked up" "exit $RC" \
		"stderr: $(first_lines 3 "$w/lk-badaddr.err")" "stdout: $(first_lines 3 "$w/lk-badaddr.out")"
fi

# glibc's malloc on huge pages (cmd/lidiagen/util/huge_heap.c; unit/test_huge_heap
# holds the mechanism): convert and index execute themselves again, once, with
# glibc.malloc.hugetlb=1 where THP is in madvise mode; lookup does not; a user's
# own glibc.malloc.hugetlb is kept; the bytes are the same either way.
execs() { grep -c 'execve(' "$1"; }
if ! command -v strace >/dev/null; then
	skip "huge pages for malloc: no strace here"
elif [ -n "${SANITIZE:-}" ] || ! grep -q '\[madvise\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; then
	# LeakSanitizer cannot run under ptrace: no leak check for this run.
	run "$w/hh-none" strace -f -qq -e trace=execve -o "$w/hh-none.trace" env -u GLIBC_TUNABLES \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$L" -q -o "$w/hh-none" "$A"
	if [ "$RC" -eq 0 ] && [ "$(execs "$w/hh-none.trace")" -eq 2 ]; then # env's, then lidiagen's
		ok "huge pages for malloc: a sanitizer's malloc or no THP madvise mode here, not executed again"
	else
		not_ok "huge pages for malloc: not executed again here" "exit $RC" "$(cat "$w/hh-none.trace")"
	fi
else
	run "$w/hh-conv" strace -f -qq -v -s 4096 -e trace=execve -o "$w/hh-conv.trace" \
		env -u GLIBC_TUNABLES -u LD_PRELOAD "$L" -q -o "$w/hh-conv" "$A"
	if [ "$RC" -eq 0 ] && [ "$(execs "$w/hh-conv.trace")" -eq 3 ] &&
		grep -q 'execve("/proc/self/exe".*"GLIBC_TUNABLES=glibc.malloc.hugetlb=1"' "$w/hh-conv.trace"; then
		ok "huge pages for malloc: convert executes itself again, once, with glibc.malloc.hugetlb=1"
	else
		not_ok "huge pages for malloc: convert executes itself again with glibc.malloc.hugetlb=1" \
			"exit $RC" "$(cut -c1-300 "$w/hh-conv.trace")"
	fi
	run "$w/hh-user" strace -f -qq -e trace=execve -o "$w/hh-user.trace" \
		env GLIBC_TUNABLES=glibc.malloc.hugetlb=0 "$L" -q -o "$w/hh-user" "$A"
	run "$w/hh-lookup" strace -f -qq -e trace=execve -o "$w/hh-lookup.trace" \
		env -u GLIBC_TUNABLES "$L" lookup "$(pyro "$w/hh-conv" "$IDA")" 0x1000
	if [ "$(execs "$w/hh-user.trace")" -eq 2 ] && [ "$(execs "$w/hh-lookup.trace")" -eq 2 ]; then
		ok "huge pages for malloc: not for lookup, nor where the user set glibc.malloc.hugetlb"
	else
		not_ok "huge pages for malloc: not for lookup, nor where the user set glibc.malloc.hugetlb" \
			"$(cat "$w/hh-user.trace" "$w/hh-lookup.trace")"
	fi
	# Started by the dynamic loader as a command, /proc/self/exe is the loader:
	# executing it again would run the first argument (an input) as the program.
	loader=$(readelf -l "$L" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
	if [ -x "$loader" ]; then
		run "$w/hh-ldso" strace -f -qq -e trace=execve -o "$w/hh-ldso.trace" \
			env -u GLIBC_TUNABLES -u LD_PRELOAD "$loader" "$L" -q "$A" -o "$w/hh-ldso"
		if [ "$RC" -eq 0 ] && [ "$(execs "$w/hh-ldso.trace")" -eq 2 ] &&
			cmp -s "$(pyro "$w/hh-conv" "$IDA")" "$(pyro "$w/hh-ldso" "$IDA")"; then
			ok "huge pages for malloc: started as $loader PROGRAM, not executed again, the same file"
		else
			not_ok "huge pages for malloc: started as $loader PROGRAM, not executed again" \
				"exit $RC" "$(cut -c1-300 "$w/hh-ldso.trace")" "$(first_lines 3 "$w/hh-ldso.err")"
		fi
	else
		skip "huge pages for malloc: no program interpreter found for $L"
	fi
	if cmp -s "$(pyro "$w/hh-conv" "$IDA")" "$(pyro "$w/hh-user" "$IDA")"; then
		ok "huge pages for malloc: the same bytes with and without"
	else
		not_ok "huge pages for malloc: the same bytes with and without"
	fi
fi
