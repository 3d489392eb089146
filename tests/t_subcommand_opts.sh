#!/usr/bin/env bash
# The options of lookup, info, dump, verify and upload: each command has one
# table of rows (cmd/lidiagen/cli/cli_opts.h) that makes both its parser and
# the option lines of its --help. So, for each command, from its --help:
#   - --help and -h: exit 0, the usage line first, nothing on stderr;
#   - every option listed is taken by the parser, by its long name (with a
#     plausible argument when its line shows one, apart and with '='), and
#     by its short name; the operands after it are still the operands;
#   - an option listed with an argument needs one, and a flag takes none:
#     the parser's table says what the help says;
#   - the parser knows each listed option: a near miss names it;
#   - the options the parser lists when a prefix is ambiguous are all in
#     the help (the other way round);
#   - an unknown option (long, long with a value, short) is a usage error:
#     exit 2, nothing on stdout, its message the one line naming it, then
#     the "Try 'lidiagen COMMAND --help'" line.
set -u
. "$(dirname "$0")/lib/common.sh"

L=$LIDIAGEN
w=$(scratch work)
G=$GOLDEN/c-o2-g.lidia
printf 'jobs: 3\n' >"$w/c.yaml"
NODIR=$w/no-such-dir

# operands SUB: what follows the options; the exit status and first line of
# stderr they end with once the options are parsed (upload stops, before any
# request, at a directory that does not exist).
operands() {
	case $1 in
	lookup) OPERANDS=("$G" 0x1000) ;;
	upload) OPERANDS=("$NODIR" s3://bucket/prefix) ;;
	*) OPERANDS=("$G") ;;
	esac
	WANT_RC=0 WANT_ERR=
	if [ "$1" = upload ]; then
		WANT_RC=2 WANT_ERR="lidiagen: '$NODIR' is not a directory"
	fi
}

# value NAME ARG: a plausible argument for option --NAME shown as ARG.
value() {
	case $1:$2 in
	config:*) echo "$w/c.yaml" ;;
	*:FILE) echo "$w/out.jsonl" ;;
	*:URL) echo "http://127.0.0.1:9" ;;
	*:SECONDS) echo 5 ;;
	*:N) echo 4 ;;
	*) echo x ;;
	esac
}

# help_rows FILE: "SHORT|LONG|ARG" for each option line of a --help.
help_rows() {
	sed -nE 's/^  (-([A-Za-z]), |    )--([a-z][a-z0-9-]*)( ([A-Z][A-Z0-9_]*))?(  .*)?$/\2|\3|\5/p' "$1"
}

# option_error FILE: the first line of FILE if it says an option was refused.
option_error() {
	grep -m 1 -E "unknown option|is ambiguous|needs a value|takes no value" "$1"
}

# taken SUB WHAT ARGS...: SUB ARGS OPERANDS ends as the operands alone do.
taken() {
	local sub=$1 what=$2
	shift 2
	run "$w/t" "$L" "$sub" "$@" "${OPERANDS[@]}"
	local err first
	err=$(option_error "$w/t.err")
	first=$(head -n 1 "$w/t.err")
	if [ -n "$err" ]; then
		WHY+=("$what: refused: $err")
	elif [ "$what" = --help ] || [ "$what" = -h ]; then
		[ "$RC" -eq 0 ] || WHY+=("$what: exit $RC, want 0")
	elif [ "$RC" -ne "$WANT_RC" ] || [ "$first" != "$WANT_ERR" ]; then
		WHY+=("$what: exit $RC, want $WANT_RC; stderr: ${first:-nothing}, want ${WANT_ERR:-nothing}")
	fi
}

# refused SUB OPTION NEEDLE ARGS...: a usage error whose first line holds
# NEEDLE, then the Try line; OPTION is named on exactly one line (the Try
# line names --help, whatever the option).
refused() {
	local sub=$1 opt=$2 needle=$3
	shift 3
	local try="Try 'lidiagen $sub --help' for more information." why=()
	run "$w/u" "$L" "$sub" "$@"
	[ "$RC" -eq 2 ] || why+=("exit status $RC, want 2")
	[ ! -s "$w/u.out" ] || why+=("stdout not empty: $(first_lines 2 "$w/u.out")")
	[ "$(wc -l <"$w/u.err")" -eq 2 ] || why+=("$(wc -l <"$w/u.err") lines on stderr, want 2")
	[[ $(head -n 1 "$w/u.err") == "lidiagen: "*"$needle"* ]] ||
		why+=("first line does not hold \"$needle\"")
	[ "$(grep -vxF -e "$try" "$w/u.err" | grep -cF -e "$opt")" -eq 1 ] ||
		why+=("not one line naming $opt (the Try line aside)")
	[ "$(sed -n 2p "$w/u.err")" = "$try" ] || why+=("second line not \"$try\"")
	REFUSED_WHY=("${why[@]}")
	[ ${#why[@]} -eq 0 ]
}

# check_help SUB: --help and -h print the usage, the usage line first.
check_help() {
	local sub=$1 flag
	for flag in --help -h; do
		run "$w/h" "$L" "$sub" "$flag"
		if [ "$RC" -eq 0 ] && [[ $(head -n 1 "$w/h.out") == "usage: lidiagen $sub "* ]] &&
			[ ! -s "$w/h.err" ]; then
			ok "$sub $flag: exit 0, the usage line first"
		else
			not_ok "$sub $flag: exit 0, the usage line first" "exit $RC" \
				"stdout: $(first_lines 2 "$w/h.out")" "stderr: $(first_lines 2 "$w/h.err")"
		fi
	done
}

# check_row SUB SHORT LONG ARG: the parser takes the option as its help line shows it.
check_row() {
	local sub=$1 s=$2 long=$3 arg=$4 v
	local what="$sub --$long${arg:+ $arg}${s:+ (-$s)}"
	WHY=()
	v=$(value "$long" "$arg")
	if [ -n "$arg" ]; then
		taken "$sub" "--$long $v" "--$long" "$v"
		taken "$sub" "--$long=$v" "--$long=$v"
		[ -z "$s" ] || taken "$sub" "-$s $v" "-$s" "$v"
	else
		taken "$sub" "--$long" "--$long"
		[ -z "$s" ] || taken "$sub" "-$s" "-$s"
	fi
	if [ ${#WHY[@]} -eq 0 ]; then
		ok "$what: taken by the parser"
	else
		not_ok "$what: taken by the parser" "${WHY[@]}"
	fi
	# Its argument, or none, as the help line shows.
	if [ -n "$arg" ]; then
		what="$what: needs a value, as its help line shows"
		refused "$sub" "--$long" "option '--$long' needs a value" "${OPERANDS[@]}" "--$long"
	else
		what="$what: takes no value, as its help line shows"
		refused "$sub" "--$long" "option '--$long' takes no value" "--$long=1" "${OPERANDS[@]}"
	fi
	if [ $? -eq 0 ]; then
		ok "$what"
	else
		not_ok "$what" "${REFUSED_WHY[@]}" "stderr: $(first_lines 3 "$w/u.err")"
	fi
	# The parser's table names it: its last letter left out, it is suggested.
	if refused "$sub" "--${long%?}" "did you mean '--$long'?" "--${long%?}" "${OPERANDS[@]}"; then
		ok "$sub --${long%?}: a near miss of --$long, which the parser suggests"
	else
		not_ok "$sub --${long%?}: a near miss of --$long, which the parser suggests" \
			"${REFUSED_WHY[@]}" "stderr: $(first_lines 3 "$w/u.err")"
	fi
}

# check_unknown SUB SHORTS: options no row has are usage errors naming them.
check_unknown() {
	local sub=$1 shorts=$2 bad=Z
	[[ $shorts == *Z* ]] && bad=Y
	refused "$sub" "--no-such-option" "unknown option '--no-such-option'" \
		--no-such-option "${OPERANDS[@]}" &&
		refused "$sub" "--no-such-option" "unknown option '--no-such-option'" \
			--no-such-option=1 "${OPERANDS[@]}" &&
		refused "$sub" "-$bad" "unknown option '-$bad'" "-$bad" "${OPERANDS[@]}"
	if [ $? -eq 0 ]; then
		ok "$sub: an unknown option (--no-such-option, with =1, -$bad) is a usage error naming it"
	else
		not_ok "$sub: an unknown option is a usage error naming it" "${REFUSED_WHY[@]}" \
			"stderr: $(first_lines 3 "$w/u.err")"
	fi
}

# check_prefixes SUB LONGS: every option the parser lists for an ambiguous
# one-letter prefix is in the help.
check_prefixes() {
	local sub=$1 longs=$2 c names n missing= seen=
	for c in {a..z}; do
		run "$w/p" "$L" "$sub" "--$c" "${OPERANDS[@]}"
		names=$(head -n 1 "$w/p.err" | sed -n 's/.* is ambiguous: //p' |
			grep -o "'--[a-z][a-z0-9-]*'" | tr -d "'" | sed 's/^--//')
		for n in $names; do
			seen+=" --$n"
			grep -qx -e "$n" <<<"$longs" || missing+=" --$n"
		done
	done
	if [ -z "$missing" ]; then
		ok "$sub: the options its parser names (ambiguous prefixes) are all in its --help${seen:+:$seen}"
	else
		not_ok "$sub: the options its parser names (ambiguous prefixes) are all in its --help" \
			"not in --help:$missing"
	fi
}

for sub in lookup info dump verify upload; do
	operands "$sub"
	check_help "$sub"
	run "$w/help" "$L" "$sub" --help
	rows=$(help_rows "$w/help.out")
	longs=$(cut -d'|' -f2 <<<"$rows")
	shorts=$(cut -d'|' -f1 <<<"$rows" | tr -d '\n')
	note "$sub --help lists: $(tr '\n' ' ' <<<"$longs")"
	if grep -qx help <<<"$longs" && [[ $shorts == *h* ]]; then
		ok "$sub --help lists -h, --help"
	else
		not_ok "$sub --help lists -h, --help" "$(first_lines 40 "$w/help.out")"
	fi
	# The options of the usage line ([--json], [-q|-v]) have option lines.
	missing=
	for o in $(head -n 1 "$w/help.out" | grep -oE -- '-[-a-z]+' | grep -v '^-$'); do
		if [[ $o == --* ]]; then
			grep -qx -e "${o#--}" <<<"$longs" || missing+=" $o"
		else
			[[ $shorts == *"${o#-}"* ]] || missing+=" $o"
		fi
	done
	if [ -z "$missing" ]; then
		ok "$sub: the options of its usage line have option lines"
	else
		not_ok "$sub: the options of its usage line have option lines" "missing:$missing"
	fi
	while IFS='|' read -r s long arg; do
		check_row "$sub" "$s" "$long" "$arg"
	done <<<"$rows"
	check_unknown "$sub" "$shorts"
	check_prefixes "$sub" "$longs"
done
