#!/usr/bin/env bash
# Hostile runs of the command (each case once broke it): paths checked before
# any work (usage errors, exit 2), files that cannot be written (exit 1),
# temporary files a killed run left, an input truncated while read, devices
# given as files, build IDs too short to be keys, hidden tenants and repeated
# config keys.
set -u
. "$(dirname "$0")/lib/common.sh"

L=$LIDIAGEN
w=$(scratch work)

# A small program with a 20-byte build ID, and a second one with another.
printf 'int work(int x) { return x * 3; }\nint main(int c, char **v) { (void)v; return work(c); }\n' \
	>"$w/tiny.c"
if ! gcc -O2 -g -Wl,--build-id=sha1 -o "$w/tiny" "$w/tiny.c" 2>"$w/cc.err" ||
	! gcc -O2 -g -Wl,--build-id=md5 -o "$w/other" "$w/tiny.c" 2>>"$w/cc.err"; then
	not_ok "hostile: the test programs build" "$(cat "$w/cc.err")"
	exit 0
fi
ID=$(build_id "$w/tiny") IDO=$(build_id "$w/other")
note "inputs: gcc -O2 -g -Wl,--build-id=sha1|md5 tiny.c ($ID, $IDO)"

# files_in DIR: every file under DIR, relative, sorted (dot files too).
files_in() { (cd "$1" 2>/dev/null && find . -type f | sed 's|^\./||' | sort); }

# ---- paths checked before any work: usage errors ------------------------------

# usage_case WHAT ARG...: `lidiagen tiny ARG...` run in a fresh directory
# (u/, holding an empty out/ and a file named file) exits 2 with one line
# naming the problem (and the "Try 'lidiagen ... --help'" line of every usage
# error, tests/t_usage.sh), and writes nothing anywhere in u/.
usage_case() {
	local what=$1
	shift
	rm -rf "$w/u" && mkdir -p "$w/u/out" && : >"$w/u/file" && mkfifo "$w/u/fifo"
	(cd "$w/u" && "$L" "$w/tiny" "$@" >"$w/u.out" 2>"$w/u.err" </dev/null)
	RC=$?
	local lines written
	lines=$(grep -vc "^Try 'lidiagen" "$w/u.err")
	written=$(cd "$w/u" && find . -mindepth 1 | grep -v -x -e ./out -e ./file -e ./fifo)
	if [ "$RC" -eq 2 ] && [ "$lines" -eq 1 ] && grep -q '^lidiagen: ' "$w/u.err" && [ -z "$written" ]; then
		ok "usage: $what: exit 2, one line: $(head -n 1 "$w/u.err")"
	else
		not_ok "usage: $what: exit 2, one line, nothing written" "exit $RC" \
			"stderr: $(first_lines 5 "$w/u.err")" "written: $written"
	fi
}
root_before=$(ls /symbolizer/anonymous 2>/dev/null | grep -c -x "$ID")
usage_case "-o '' (an unset variable)" -o ''
root_after=$(ls /symbolizer/anonymous 2>/dev/null | grep -c -x "$ID")
if [ "$root_after" -eq "$root_before" ]; then
	ok "usage: -o '' writes nothing under /"
else
	not_ok "usage: -o '' writes nothing under /" "/symbolizer/anonymous/$ID appeared"
	rm -f "/symbolizer/anonymous/$ID"
fi
usage_case "-o FILE (not a directory)" -o file
usage_case "-o /dev/null" -o /dev/null
usage_case "-o FILE/ (a file, with a slash)" -o file/
usage_case "--manifest ''" -o out --manifest ''
usage_case "--manifest inside the output directory" -o out --manifest out/m.jsonl
usage_case "--manifest naming a directory" -o out --manifest out
# A FIFO stands for /dev/null: a lidiagen without the check would rename
# over the device itself.
usage_case "--manifest naming a FIFO (renaming over /dev/null, say)" -o out --manifest fifo
usage_case "--state ''" -o out --state ''
usage_case "--state inside the output directory" -o out --state out/.state
usage_case "--state in a missing directory" -o out --state nodir/state
usage_case "--state and --manifest the same file" -o out --state m --manifest ./m
usage_case "--tenant .hidden (a hidden directory)" -o out --tenant .hidden
usage_case "--tenant .." -o out --tenant ..

# ---- files that cannot be written: loud, exit 1 --------------------------------

# A name longer than NAME_MAX once ".lidiagen.tmp.XXXXXX" is added: its directory is
# there, so the checks up front pass, and the write fails even for root.
long=$(printf 'x%.0s' $(seq 250))
for what in state manifest; do
	rm -rf "$w/f" && mkdir -p "$w/f"
	run "$w/f/run" "$L" -j 1 "$w/tiny" -o "$w/f/out" --"$what" "$w/f/$long"
	if [ "$RC" -eq 1 ] && grep -q "cannot write the $what" "$w/f/run.err" &&
		[ -f "$w/f/out/symbolizer/anonymous/$ID" ]; then
		ok "--$what that cannot be written: exit 1, said, outputs still written"
	else
		not_ok "--$what that cannot be written: exit 1, said, outputs still written" \
			"exit $RC" "stderr: $(first_lines 5 "$w/f/run.err")" "out: $(files_in "$w/f/out")"
	fi
done
if [ "$(id -u)" -ne 0 ]; then
	rm -rf "$w/ro" && mkdir -p "$w/ro/dir" && chmod 555 "$w/ro/dir"
	run "$w/ro/run" "$L" -j 1 "$w/tiny" -o "$w/ro/out" --state "$w/ro/dir/state"
	if [ "$RC" -eq 1 ] && grep -q "cannot write the state" "$w/ro/run.err"; then
		ok "--state in a read-only directory: exit 1, said"
	else
		not_ok "--state in a read-only directory: exit 1, said" "exit $RC" \
			"stderr: $(first_lines 5 "$w/ro/run.err")"
	fi
	chmod 755 "$w/ro/dir"
else
	note "running as root: read-only directories do not stop root; the long name stands for them"
fi

# ---- temporary files of a killed run ----------------------------------------------

t=$w/tmp
rm -rf "$t" && mkdir -p "$t/out/symbolizer/anonymous" "$t/dbg/buildid/$ID"
stale=$t/out/symbolizer/anonymous/.$IDO.lidiagen.tmp.Ab12Cd
live=$t/out/symbolizer/anonymous/.$ID.lidiagen.tmp.Zz99Yy
stale_dbg=$t/dbg/buildid/$ID/.lidia.lidiagen.tmp.q1W2e3
head -c 100 /dev/urandom >"$stale"
head -c 100 /dev/urandom >"$stale_dbg"
: >"$t/ready"
# A live writer: holds the lock on its temporary file while the run goes on.
flock -x "$live" sh -c ": >'$t/locked'; sleep 30" &
lock_pid=$!
for _ in $(seq 50); do [ -e "$t/locked" ] && break; sleep 0.1; done
run "$t/run" "$L" -j 1 "$w/tiny" "$w/other" -o "$t/out"
run "$t/dbg-run" "$L" -j 1 "$w/tiny" -o "$t/dbg" --layout debuginfod
if [ "$RC" -eq 0 ] && [ ! -e "$stale" ] && [ ! -e "$stale_dbg" ] && [ -e "$live" ]; then
	ok "temporary files: a killed run's are removed by the next (pyroscope, debuginfod), a live writer's kept"
else
	not_ok "temporary files: a killed run's are removed by the next, a live writer's kept" \
		"exit $RC; stale left: $([ -e "$stale" ] && echo yes || echo no)" \
		"debuginfod stale left: $([ -e "$stale_dbg" ] && echo yes || echo no)" \
		"live kept: $([ -e "$live" ] && echo yes || echo no)"
fi
head -c 100 /dev/urandom >"$stale"
run "$t/verify" "$L" verify "$t/out"
if [ "$RC" -eq 0 ] && grep -q '^2 ok, 0 invalid' "$t/verify.out"; then
	ok "verify passes over temporary files (2 ok, 0 invalid)"
else
	not_ok "verify passes over temporary files" "exit $RC" "$(cat "$t/verify.out" "$t/verify.err")"
fi
kill "$lock_pid" 2>/dev/null
wait "$lock_pid" 2>/dev/null

# ---- an input truncated while it is read ------------------------------------------
# No input is mapped (lib/input/elf_load.c): a file cut short by another
# process makes a read come back short, never a SIGBUS inside libelf or
# libdw. The shim cuts it at one read of one of its opens: the 1st open is
# the walk's sniff, the 2nd identify's, the 3rd the conversion's (headers,
# then one bulk read of the rest).

if ! gcc -shared -fPIC -O2 -o "$w/shrink.so" "$TESTS_LIB/shrink_read.c" -ldl 2>"$w/shrink.err"; then
	not_ok "the read-shrinking shim builds" "$(cat "$w/shrink.err")"
else
	# ASan must come first among the libraries unless told otherwise.
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
	for cut in "2 3 while identified" "3 3 while its headers are read for conversion" \
		"3 big while read whole for conversion"; do
		# shellcheck disable=SC2086
		set -- $cut
		nth=$1 read=$2
		shift 2
		phase="$*"
		s=$w/shrink$nth$read
		rm -rf "$s" && mkdir -p "$s"
		cp "$w/tiny" "$s/victim"
		run "$s/run" env SHRINK_PATH="$s/victim" SHRINK_OPEN=$nth SHRINK_READ=$read \
			LD_PRELOAD="$w/shrink.so" "$L" -j 1 --no-debug-search "$s/victim" "$w/other" -o "$s/out"
		if [ "$RC" -eq 1 ] && grep -q "victim: changed while being read" "$s/run.err" &&
			[ "$(stat -c %s "$s/victim")" -eq 4096 ] &&
			[ -f "$s/out/symbolizer/anonymous/$IDO" ] && [ ! -e "$s/out/symbolizer/anonymous/$ID" ]; then
			ok "cut $phase: that input fails (changed while being read), the other is converted"
		else
			not_ok "cut $phase: that input fails, the other is converted" "exit $RC" \
				"stderr: $(first_lines 5 "$s/run.err")" "out: $(files_in "$s/out")" \
				"victim: $(stat -c %s "$s/victim") bytes"
		fi
	done
	unset ASAN_OPTIONS
fi

# ---- devices and endless files ------------------------------------------------------

for cmd in "lookup /dev/zero 0x1000" "info /dev/zero" "verify /dev/zero" "--config /dev/zero $w/tiny -o $w/z"; do
	# shellcheck disable=SC2086
	timeout 20 "$L" $cmd >"$w/dev.out" 2>"$w/dev.err" </dev/null
	RC=$?
	want=1
	case $cmd in --config*) want=2 ;; esac
	if [ "$RC" -eq "$want" ] && [ "$(grep -vc "^Try 'lidiagen" "$w/dev.err")" -eq 1 ]; then
		ok "lidiagen $cmd: ends at once, exit $want: $(head -n 1 "$w/dev.err")"
	else
		not_ok "lidiagen $cmd: ends at once, exit $want" "exit $RC (124: timed out)" \
			"stderr: $(first_lines 3 "$w/dev.err")"
	fi
done

# ---- a build ID too short to be a key ---------------------------------------------

# GNU ld pads a one-byte note wrongly (libdw then sees none): four bytes
# make a well-formed note that is still too short to tell binaries apart.
if gcc -O2 -Wl,--build-id=0xc1c2c3c4 -o "$w/short" "$w/tiny.c" 2>"$w/short.err"; then
	rm -rf "$w/sh"
	run "$w/sh" "$L" -j 1 "$w/short" "$w/other" -o "$w/sh"
	if [ "$RC" -eq 0 ] && grep -q "short.*too short" "$w/sh.err" &&
		[ "$(files_in "$w/sh")" = "symbolizer/anonymous/$IDO" ]; then
		ok "a four-byte build ID: warned, skipped, no file named c1c2c3c4"
	else
		not_ok "a four-byte build ID: warned, skipped, no file named c1c2c3c4" "exit $RC" \
			"stderr: $(first_lines 3 "$w/sh.err")" "out: $(files_in "$w/sh")"
	fi
else
	not_ok "gcc -Wl,--build-id=0xc1c2c3c4 links" "$(cat "$w/short.err")"
fi

# ---- a config that says one thing twice ------------------------------------------

printf 'jobs: 1\ntenant: a\njobs: 2\n' >"$w/dup.yaml"
run "$w/dup" "$L" --config "$w/dup.yaml" "$w/tiny" -o "$w/dupout"
if [ "$RC" -eq 2 ] && grep -q "dup.yaml:3:1: 'jobs' is given twice" "$w/dup.err" && [ ! -e "$w/dupout" ]; then
	ok "config: a repeated key is an error naming its line (exit 2)"
else
	not_ok "config: a repeated key is an error naming its line (exit 2)" "exit $RC" \
		"stderr: $(first_lines 3 "$w/dup.err")"
fi
