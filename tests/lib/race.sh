# Two publishers of one build ID racing (tests/t_publish_race.sh,
# tests/t_s3rver_race.sh); source it, do not run it. Needs bash, and from
# the script: L (lidiagen), SYM and DW (the symbols-only job's and the DWARF
# job's arguments), shaD (the DWARF job's object's sha256), SPREAD (ms).
#
#   race_jobs WHAT              builds the racing program in $w (w: the script's
#                               scratch) and sets bid, key, SYM, DW, and shaS
#                               and shaD (the sha256 of each job's object, made
#                               once in $w/sym and $w/dw); false, said as
#                               "WHAT: the test program builds", when it fails
#   status_of MANIFEST          the build ID's status, and its reason if any
#   race_round DIR OUT ARGS...  the two jobs at once, each after a random
#                               offset of up to SPREAD ms, writing OUT (with
#                               ARGS); their exit codes, output and manifests
#                               in DIR (sym.rc, sym.err, sym.json, dw.*)
#   judge_round DIR SHA CREATED [IGNORED]
#                               why the round is wrong ("" if right). SHA:
#                               the object's there; CREATED: the manifests'
#                               word for a new key. The manifests must tell
#                               one story: never both created it; the
#                               symbols job either kept what was there or
#                               was replaced by the DWARF job. IGNORED=1: the
#                               server ignores conditional writes, so two
#                               jobs that each found no key may both say they
#                               created it (the DWARF job's look once they
#                               had landed put its object back): the object
#                               left is what counts. IGNORED=2: the same, on a
#                               server that also shows an object's bytes
#                               before its metadata (s3rver writes them
#                               apart): the symbols job may have replaced
#                               the DWARF job's object seen in between, as
#                               the rule for an object without lidiagen's
#                               metadata says (doc/publishing.md).

race_jobs() {
	printf 'static inline int sq(int x) { return x * x; }\nint work(int x) { return sq(x) + 1; }\nint main(int c, char **v) { (void)v; return work(c); }\n' >"$w/p.c"
	bid=5555555555555555555555555555555555555555
	if ! gcc -O2 -g -Wl,--build-id=0x$bid -o "$w/p" "$w/p.c" 2>"$w/cc.err"; then
		not_ok "$1: the test program builds" "$(cat "$w/cc.err")"
		return 1
	fi
	key=symbolizer/anonymous/$bid
	SYM=(--symbols-only "$w/p")
	DW=("$w/p")
	"$L" -q "${SYM[@]}" -o "$w/sym" 2>/dev/null && "$L" -q "${DW[@]}" -o "$w/dw" 2>/dev/null
	shaS=$(sha256sum <"$w/sym/$key" | cut -c1-64)
	shaD=$(sha256sum <"$w/dw/$key" | cut -c1-64)
}

status_of() {
	sed -n '/"build_id"/{s/.*"status":"\([^"]*\)".*/\1/p;q}' "$1" 2>/dev/null | tr '\n' ' '
	sed -n '/"build_id"/{s/.*"reason":"\([^"]*\)".*/\1/p;q}' "$1" 2>/dev/null
}

race_round() {
	local d=$1 out=$2
	shift 2
	mkdir -p "$d"
	local a b
	(sleep "0.$(printf %03d $((RANDOM % SPREAD)))"
		"$L" -q -j 1 "${SYM[@]}" -o "$out" --manifest "$d/sym.json" "$@" >"$d/sym.err" 2>&1
		echo $? >"$d/sym.rc") &
	a=$!
	(sleep "0.$(printf %03d $((RANDOM % SPREAD)))"
		"$L" -q -j 1 "${DW[@]}" -o "$out" --manifest "$d/dw.json" "$@" >"$d/dw.err" 2>&1
		echo $? >"$d/dw.rc") &
	b=$!
	wait "$a" "$b" # not the servers
}

judge_round() {
	local d=$1 sha=$2 created=$3 ignored=${4:-0} s dws why=""
	s=$(status_of "$d/sym.json") dws=$(status_of "$d/dw.json")
	[ "$(cat "$d/sym.rc")" = 0 ] || why="$why symbols job exit $(cat "$d/sym.rc"): $(head -3 "$d/sym.err");"
	[ "$(cat "$d/dw.rc")" = 0 ] || why="$why DWARF job exit $(cat "$d/dw.rc"): $(head -3 "$d/dw.err");"
	[ "$sha" = "$shaD" ] || why="$why the object there is ${sha:-none}, not the DWARF job's;"
	case $s in
	"$created "*) [ "${dws%% *}" = replaced ] || [ "$ignored" != 0 ] ||
		why="$why both created it ($s / $dws);" ;;
	exists* | kept*) ;;
	replaced*) [ "$ignored" = 2 ] || why="$why symbols job: '$s';" ;;
	*) why="$why symbols job: '$s';" ;;
	esac
	case $dws in
	"$created "* | replaced*) ;;
	*) why="$why DWARF job: '$dws';" ;;
	esac
	printf '%s' "$why"
}
