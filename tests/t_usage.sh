#!/usr/bin/env bash
# The contract of usage errors, for every command: exit 2; nothing on
# stdout; at most 3 lines on stderr, never the help: the first
# "lidiagen: <what is wrong>", with "did you mean '...'?" for a near miss
# of an option or a command, and a "Try 'lidiagen[ COMMAND] --help' ..."
# line; nothing written. Also: each command's --help on stdout, exit 0, and
# lookup --help saying what an address is.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/fixtures.sh"

L=$LIDIAGEN
w=$(scratch work)

if ! fx_build c-gcc-O2; then
	not_ok "usage: fixture c-gcc-O2 builds" "$FX_LOG"
	exit 0
fi
A=$FX/c-gcc-O2
note "build c-gcc-O2: $(cat "$FX/.cmd")"
if ! "$L" -q "$A" -o "$w/ref" --layout flat >"$w/ref.log" 2>&1; then
	not_ok "usage: lidiagen converts c-gcc-O2" "$(first_lines 5 "$w/ref.log")"
	exit 0
fi
REF=$(find "$w/ref" -name '*.lidia' | head -n 1)

# usage_case WHAT CMD NEEDLE ARGS...: lidiagen ARGS, run in $w/cwd (an
# empty directory, so that no argument names a file by chance), is a usage
# error of CMD ("" for the top level) whose first line holds NEEDLE.
usage_case() {
	local what=$1 cmd=$2 needle=$3
	shift 3
	local try="Try 'lidiagen${cmd:+ $cmd} --help' for more information."
	rm -rf "$w/cwd" && mkdir -p "$w/cwd"
	(cd "$w/cwd" && "$L" "$@" >"$w/u.out" 2>"$w/u.err" </dev/null)
	RC=$?
	local lines first why=()
	lines=$(wc -l <"$w/u.err")
	first=$(head -n 1 "$w/u.err")
	[ "$RC" -eq 2 ] || why+=("exit status $RC, want 2")
	[ ! -s "$w/u.out" ] || why+=("stdout not empty: $(first_lines 2 "$w/u.out")")
	[ "$lines" -ge 1 ] && [ "$lines" -le 3 ] || why+=("$lines lines on stderr, want 1 to 3")
	[[ $first == "lidiagen: "* ]] || why+=("first line not prefixed 'lidiagen: '")
	grep -qxF -e "$try" "$w/u.err" || why+=("no line \"$try\"")
	[[ $first == *"$needle"* ]] || why+=("first line does not hold \"$needle\"")
	[ -z "$(ls -A "$w/cwd")" ] || why+=("wrote: $(ls -A "$w/cwd")")
	if [ ${#why[@]} -eq 0 ]; then
		ok "$what: usage error ($first)"
	else
		not_ok "$what: usage error" "lidiagen $*" "${why[@]}" "stderr: $(first_lines 5 "$w/u.err")"
	fi
}

# ---- the top level and convert ------------------------------------------------------

usage_case "no argument" "" "no command or input given"
usage_case "unknown option" convert "unknown option '--no-such-option'" --no-such-option "$A" -o out
usage_case "unknown short option" convert "unknown option '-x'" -x "$A" -o out
usage_case "near-miss option (a letter left out)" convert "did you mean '--recursive'?" \
	--recursve "$A" -o out
# -o that looks like a URL but is not s3:// exactly: never a local directory "s3:".
for o in s3:/bucket/x S3://bucket/x s3:bucket/x; do
	usage_case "-o $o (a typo of s3://)" convert "did you mean 's3://bucket/x'?" "$A" -o "$o"
done
usage_case "-o gs://b (another scheme)" convert "'gs://b' looks like a URL (gs:)" "$A" -o gs://b
usage_case "output: s3:/b in the config" convert "did you mean 's3://b'?" "$A" \
	--config <(printf 'output: s3:/b\n')
for t in s3:/bucket S3://bucket; do
	usage_case "upload to $t (a typo of s3://)" upload "did you mean 's3://bucket'?" upload "$w" "$t"
done
usage_case "near-miss option (two letters swapped)" convert "did you mean '--tenant'?" \
	--tneant t1 "$A" -o out
usage_case "near-miss option (two edits)" convert "did you mean '--manifest'?" \
	--manfst=m.jsonl "$A" -o out
usage_case "abbreviated option refused" convert "unknown option '--recursiv'; did you mean '--recursive'?" \
	--recursiv "$A" -o out
usage_case "abbreviated option with a value refused" convert "did you mean '--layout-template'?" \
	--layout-t 'x/{build_id}' "$A" -o out
usage_case "near-miss option of convert named" convert "did you mean '--no-dwarf'?" \
	convert --no-dwraf "$A" -o out
usage_case "ambiguous option" convert "option '--no-d' is ambiguous" --no-d "$A" -o out
usage_case "long option with one dash" convert "did you mean '--recursive'?" -recursive "$A" -o out
usage_case "flag given a value" convert "option '--force' takes no value" --force=yes "$A" -o out
usage_case "missing value (-o last)" convert "option '-o' needs a value" "$A" -o
usage_case "missing value (--output last)" convert "option '--output' needs a value" "$A" --output
usage_case "missing value (--layout last)" convert "option '--layout' needs a value" "$A" -o out --layout
usage_case "no -o" convert "no output directory" "$A"
usage_case "no input" convert "no input given" -o out
usage_case "empty -o" convert "-o: the output directory is empty" "$A" -o ''
usage_case "bad value: --layout" convert "'nested'" --layout nested "$A" -o out
usage_case "bad value: --jobs 0" convert "'0' is not a number from 1" -j 0 "$A" -o out
usage_case "bad value: --shard 5/4" convert "'5/4'" --shard 5/4 "$A" -o out
usage_case "bad value: --tenant" convert "'../x'" --tenant ../x "$A" -o out
usage_case "bad value: --max-member-size" convert "'12Q'" --max-member-size 12Q "$A" -o out
usage_case "bad value: --fallback-key" convert "'md5'" --fallback-key md5 "$A" -o out
usage_case "bad value: --layout template without a template" convert "--layout-template" \
	--layout template "$A" -o out
usage_case "missing --config file" convert "no-such.yaml" --config no-such.yaml "$A" -o out

# ---- commands: near misses, and a file that merely looks like one ----------------------

usage_case "near-miss command lokup" "" "did you mean 'lookup'?" lokup x.lidia 0x10
usage_case "near-miss command verfy" "" "did you mean 'verify'?" verfy out
usage_case "near-miss command dmup" "" "did you mean 'dump'?" dmup x.lidia
usage_case "near-miss command inf (a prefix)" "" "did you mean 'info'?" inf x.lidia
rm -rf "$w/typo" && mkdir -p "$w/typo"
printf 'not an ELF file\n' >"$w/typo/lokup"
(cd "$w/typo" && "$L" lokup -o out >"$w/typo.out" 2>"$w/typo.err" </dev/null)
RC=$?
if [ "$RC" -eq 1 ] && grep -q "^lidiagen: lokup: " "$w/typo.err" && ! grep -q 'did you mean' "$w/typo.err"; then
	ok "a file named like a near-miss command is an input of convert (exit 1, not ELF)"
else
	not_ok "a file named like a near-miss command is an input of convert (exit 1, not ELF)" \
		"exit $RC" "stderr: $(first_lines 3 "$w/typo.err")"
fi

# ---- the subcommands' options and arguments ---------------------------------------------

usage_case "lookup: near-miss option" lookup "did you mean '--json'?" lookup --jsno "$REF" 0x10
usage_case "lookup: long option with one dash" lookup "did you mean '--json'?" lookup -json "$REF" 0x10
usage_case "lookup: abbreviated option" lookup "did you mean '--no-crc'?" lookup --no-cr "$REF" 0x10
usage_case "lookup: unknown option" lookup "unknown option '--bogus'" lookup --bogus "$REF"
usage_case "lookup: no file" lookup "no lidia file given" lookup
usage_case "lookup: no file after an option" lookup "no lidia file given" lookup --json
usage_case "lookup: malformed address" lookup "invalid address 'nonsense'" lookup "$REF" 0x1000 nonsense
usage_case "lookup: address with junk" lookup "invalid address '0x10zz'" lookup "$REF" 0x10zz
usage_case "lookup: negative address" lookup "invalid address '-5'" lookup "$REF" -- -5
usage_case "lookup: address past 64 bits" lookup "invalid address '0x10000000000000000'" \
	lookup "$REF" 0x10000000000000000
usage_case "lookup: malformed address, file missing" lookup "invalid address 'zz'" lookup no-such.lidia zz
usage_case "info: no file" info "no lidia file given" info
usage_case "info: unknown option" info "unknown option '--bogus'" info --bogus "$REF"
usage_case "dump: no file" dump "no lidia file given" dump
usage_case "dump: two files" dump "one file at a time" dump "$REF" "$REF"
usage_case "dump: near-miss option" dump "did you mean '--json'?" dump --jsn "$REF"
usage_case "dump: flag given a value" dump "option '--json' takes no value" dump --json=1 "$REF"
usage_case "verify: no path" verify "no path given" verify
usage_case "verify: near-miss option" verify "did you mean '--quiet'?" verify --quite "$w/ref"
usage_case "verify: unknown short option" verify "unknown option '-z'" verify -z "$w/ref"

# Addresses from stdin: a bad line is said and passed over, the others
# answered; the exit status is a usage error's.
printf '0x1000\nbogus\n0x1001\n' | "$L" lookup "$REF" >"$w/stdin.out" 2>"$w/stdin.err"
RC=$?
if [ "$RC" -eq 2 ] && grep -q "^lidiagen: stdin:2: invalid address 'bogus'" "$w/stdin.err" &&
	grep -q '^0x1000: ' "$w/stdin.out" && grep -q '^0x1001: ' "$w/stdin.out"; then
	ok "lookup: a malformed address on stdin: said with its line, the others answered, exit 2"
else
	not_ok "lookup: a malformed address on stdin: said with its line, the others answered, exit 2" \
		"exit $RC" "stderr: $(first_lines 3 "$w/stdin.err")" "stdout: $(first_lines 4 "$w/stdin.out")"
fi
# Not usage errors: a file that cannot be read is an input that failed.
run "$w/nofile" "$L" lookup "$w/no-such.lidia" 0x10
if [ "$RC" -eq 1 ] && grep -q "^lidiagen: $w/no-such.lidia: " "$w/nofile.err"; then
	ok "lookup of a missing file with a good address: exit 1, naming it"
else
	not_ok "lookup of a missing file with a good address: exit 1, naming it" "exit $RC" \
		"stderr: $(first_lines 3 "$w/nofile.err")"
fi

# ---- help -------------------------------------------------------------------------------

for sub in "" convert lookup info dump verify index; do
	run "$w/help" "$L" $sub --help
	if [ "$RC" -eq 0 ] && grep -q '^usage: lidiagen' "$w/help.out" && [ ! -s "$w/help.err" ]; then
		ok "lidiagen${sub:+ $sub} --help: usage on stdout, exit 0"
	else
		not_ok "lidiagen${sub:+ $sub} --help: usage on stdout, exit 0" "exit $RC" \
			"stdout: $(first_lines 3 "$w/help.out")" "stderr: $(first_lines 3 "$w/help.err")"
	fi
done
run "$w/lkhelp" "$L" lookup --help
if grep -q 'virtual address' "$w/lkhelp.out" &&
	grep -qF 'ADDR = PC - START + OFFSET - (Offset - VirtAddr)' "$w/lkhelp.out" &&
	grep -qF 'PC - load' "$w/lkhelp.out"; then
	ok "lookup --help: an address is an ELF virtual address; how to get one from a PC"
else
	not_ok "lookup --help: an address is an ELF virtual address; how to get one from a PC" \
		"$(first_lines 30 "$w/lkhelp.out")"
fi
