#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/speed_aims.sh [LIDIAGEN [BASELINE]]: the speed and memory aims of
# issue 26, one line each, the figure beside its aim (bench/README.md,
# "Speed aims"). Each command runs BENCH_AIMS_RUNS times (default 3),
# alternating with its peer (and BASELINE, another lidiagen, when given),
# under /usr/bin/time -f '%e %U %S %M'; medians are printed. CPU is
# user + system. The machine should be otherwise idle for the wall line.
#
#   ceph -j2      libceph-common's debug file (ceph-common-dbg): wall of -j 1
#                 over wall of -j 2                                  aim >= 1.7
#                 (beside it, with no aim: twice the wall of -j 1 over the wall
#                 of two -j 1 runs at once, the most two threads here give)
#   ceph CPU      lidiagen -j 1 CPU over llvm-gsymutil-16 --num-threads 1   <= 0.5
#   gold CPU      ld.gold's debug file with its dwz file (binutils-x86-64-
#                 linux-gnu-dbg), the same ratio                            <= 0.5
#                 (beside it, with no aim: the floor the issue names, one
#                 inflate plus one pass, by others' code, bench/dwarf_floor.c:
#                 libdeflate alone, then with libdw's pass over every DIE and
#                 line program, over gsymutil's CPU)
#   llvm symbols  libLLVM-16.so.1 (libllvm16, stripped: .dynsym only),
#                 lidiagen --allow-dynsym-only CPU over Pyroscope's writer
#                 (CreateLidia with CRC, files and lines, as its symbolizer
#                 calls it), demangled and --no-demangle; each timed over
#                 BENCH_AIMS_REPEAT (10) runs one after the other, as one
#                 run is a few of /usr/bin/time's 10 ms ticks              <= 0.30
#                 (beside it, with no aim: LLVM's demangler alone over the
#                 library's exported function names, bench/demangle_floor.cc,
#                 and that plus the --no-demangle run: the floor of the line)
#   libc RSS      libc6-dbg's libc.so.6 debug file: peak RSS over the
#                 inflated DWARF                                            <= 2
# The sixth aim (index + 4 shards over 7 .debs <= 1.3x one run) is
# bench/shard_bench.sh's last lines.
#
# Pyroscope's writer: PYROSCOPE_WRITER=BINARY, or PYROSCOPE_SRC=a checkout
# of github.com/grafana/pyroscope (its lidia module needs only Go's
# standard library): bench/go/pyroscope_writer is built against it with the
# newest Go found in /usr/lib/go-*. Without either, that line is skipped.
#
# Environment: BENCH_CACHE (default bench/.cache), BENCH_AIMS_RUNS (3),
# BENCH_AIMS_REPEAT (10), BENCH_AIMS (default "ceph gold llvm libc"),
# GSYMUTIL (llvm-gsymutil-16).
set -euo pipefail
# shellcheck source=bench/lib_deb.sh
. "$(dirname "$0")/lib_deb.sh"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
abspath() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
LIDIAGEN=$(abspath "${1:-$root/build/lidiagen}")
BASELINE=${2:+$(abspath "$2")}
CACHE=${BENCH_CACHE:-$here/.cache}
RUNS=${BENCH_AIMS_RUNS:-3}
REPEAT=${BENCH_AIMS_REPEAT:-10}
AIMS=${BENCH_AIMS:-"ceph gold llvm libc"}
GSYMUTIL=${GSYMUTIL:-llvm-gsymutil-16}
LLVM_CONFIG=${LLVM_CONFIG:-llvm-config-16}

die() { echo "speed_aims: $*" >&2; exit 2; }
say() { echo "speed_aims: $*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }
# shellcheck disable=SC2034 # lib_deb.sh's fetch_deb reads it
apt_opts=()
[ "$(id -u)" = 0 ] && apt_opts=(-o APT::Sandbox::User=root)

[ -x "$LIDIAGEN" ] || die "$LIDIAGEN: not an executable (run make first)"
[ -z "$BASELINE" ] || [ -x "$BASELINE" ] || die "$BASELINE: not an executable"
/usr/bin/time -f %M true >/dev/null 2>&1 || die "/usr/bin/time not found (Debian: time)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# writer: Pyroscope's writer, built from PYROSCOPE_SRC once; empty when there is none.
writer() {
	local go src=${PYROSCOPE_SRC:-} out=$CACHE/pyroscope_writer
	if [ -n "${PYROSCOPE_WRITER:-}" ]; then
		echo "$PYROSCOPE_WRITER"
		return
	fi
	[ -n "$src" ] && [ -f "$src/lidia/go.mod" ] || return 0
	if [ ! -x "$out" ]; then
		go=$(compgen -G '/usr/lib/go-*/bin/go' | sort -V | tail -n 1 || true)
		[ -n "$go" ] || die "no Go in /usr/lib/go-* to build Pyroscope's writer"
		rm -rf "$tmp/w" && mkdir -p "$tmp/w" && cp -r "$src/lidia" "$tmp/w/lidia"
		# Its go.mod may ask for a newer Go than Debian's; the module needs none of it.
		sed -i -E 's/^go [0-9.]+$/go 1.21/; /^toolchain/d' "$tmp/w/lidia/go.mod"
		cp -r "$here/go/pyroscope_writer" "$tmp/w/lidia/pyroscope_writer"
		(cd "$tmp/w/lidia" && GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY=off \
			"$go" build -o "$out" ./pyroscope_writer) >&2 || die "cannot build Pyroscope's writer"
	fi
	echo "$out"
}

# run NAME CMD...: one run of CMD; appends "cpu wall rss_kib" to $tmp/NAME.
run() {
	local name=$1
	shift
	rm -rf "$tmp/out" "$tmp/out.x"
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" ||
		{ cat "$tmp/err" >&2; die "$name failed: $*"; }
	awk '{ printf "%.3f %.3f %d\n", $2 + $3, $1, $4 }' <"$tmp/time" | tail -n 1 >>"$tmp/$name"
}

# median NAME COLUMN (1 cpu, 2 wall, 3 rss KiB)
median() {
	sort -g -k"$2" "$tmp/$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# verdict VALUE OP AIM: PASS or MISS.
verdict() { awk -v v="$1" -v a="$3" -v op="$2" 'BEGIN { ok = op == "<=" ? v <= a : v >= a; print ok ? "PASS" : "MISS" }'; }

# line WHAT FIGURE OP AIM DETAIL: one aim's line.
line() {
	printf '%-40s %6s  aim %s %-5s %s  %s\n' "$1" "$2" "$3" "$4" "$(verdict "$2" "$3" "$4")" "$5"
}

# cells NAME...: "NAME cpu s / wall s / RSS MiB" of each.
cells() {
	local n out=""
	for n in "$@"; do
		out+="$(printf '%s %.2f/%.2f/%.0f  ' "$n" "$(median "$n" 1)" "$(median "$n" 2)" \
			"$(awk -v k="$(median "$n" 3)" 'BEGIN { print k / 1024 }')")"
	done
	echo "${out% }"
}

# alternate INPUT NAME:CMD...: RUNS rounds of every command, in turn.
alternate() {
	local r spec
	for spec in "$@"; do : >"$tmp/${spec%%:*}"; done
	for ((r = 0; r < RUNS; r++)); do
		for spec in "$@"; do
			# shellcheck disable=SC2086 # the command's words
			run "${spec%%:*}" ${spec#*:}
		done
	done
}

conv() { echo "$1 -q -j $2 $3 -o $tmp/out"; }

# repeated NAME CMD...: a script running CMD REPEAT times, the outputs
# removed before each; its path, for alternate() (one timed process tree).
repeated() {
	local name=$1 script=$tmp/repeat-$1.sh
	shift
	# shellcheck disable=SC2016 # $(seq ...) is the written script's to expand
	printf '#!/bin/sh\nfor i in $(seq %d); do rm -rf %s %s; %s >/dev/null || exit 1; done\n' \
		"$REPEAT" "$tmp/out" "$tmp/out.x" "$*" >"$script"
	echo "sh $script"
}
gsym() { echo "$GSYMUTIL --quiet --num-threads=1 --convert=$1 --out-file=$tmp/out.x"; }

# side_by_side NAME CMD: a script running CMD twice at once (outputs out
# and out.x), for alternate(): what two busy threads of this machine do
# beside each other, whatever the program.
side_by_side() {
	local name=$1 script=$tmp/pair-$1.sh
	shift
	printf '#!/bin/sh\n%s -o %s >/dev/null 2>&1 &\n%s -o %s >/dev/null 2>&1 || exit 1\nwait $! || exit 1\n' \
		"$*" "$tmp/out" "$*" "$tmp/out.x" >"$script"
	echo "sh $script"
}

# note WHAT FIGURE DETAIL: a line with no aim of its own.
note() { printf '%-40s %6s  %-19s %s\n' "$1" "$2" "" "$3"; }

aim_ceph() {
	local f
	f=$(largest "$(unpack_deb ceph-common-dbg "$CACHE/aims/ceph")")
	alternate "j1:$(conv "$LIDIAGEN" 1 "--no-debug-search $f")" \
		"j2:$(conv "$LIDIAGEN" 2 "--no-debug-search $f")" "gsym:$(gsym "$f")" \
		"pair:$(side_by_side pair "$LIDIAGEN -q -j 1 --no-debug-search $f")" \
		${BASELINE:+"b1:$(conv "$BASELINE" 1 "--no-debug-search $f")"} \
		${BASELINE:+"b2:$(conv "$BASELINE" 2 "--no-debug-search $f")"}
	line "ceph: -j 1 wall / -j 2 wall" "$(ratio "$(median j1 2)" "$(median j2 2)")" ">=" 1.7 \
		"$(cells j1 j2 ${BASELINE:+b1 b2})"
	# Two -j 1 runs at once each take longer than one alone when the two
	# vCPUs share a core or its caches: -j 2 cannot beat that ratio.
	note "  ceiling here: 2 x -j 1 / two at once" \
		"$(ratio "$(awk -v w="$(median j1 2)" 'BEGIN { print 2 * w }')" "$(median pair 2)")" \
		"$(cells pair)"
	line "ceph: CPU -j 1 / gsymutil 1 thread" "$(ratio "$(median j1 1)" "$(median gsym 1)")" \
		"<=" 0.5 "$(cells j1 gsym) RSS x$(ratio "$(median j1 3)" "$(median gsym 3)")"
}

aim_gold() {
	local f
	f=$(largest "$(unpack_deb binutils-x86-64-linux-gnu-dbg "$CACHE/aims/gold")")
	# Its dwz file is found through .gnu_debugaltlink, beside the unpacked tree.
	alternate "lg:$(conv "$LIDIAGEN" 1 "$f")" "gsym:$(gsym "$f")" \
		${BASELINE:+"bg:$(conv "$BASELINE" 1 "$f")"}
	line "gold+dwz: CPU -j 1 / gsymutil 1 thread" "$(ratio "$(median lg 1)" "$(median gsym 1)")" \
		"<=" 0.5 "$(cells lg gsym ${BASELINE:+bg})"
	dwarf_floor "$f" "$(compgen -G "$CACHE/aims/gold/usr/lib/debug/.dwz/*/*.debug" | head -n 1)" \
		"$(median gsym 1)" "$(median lg 1)"
}

# dwarf_floor ELF DWZ GSYM_CPU LG_CPU: the floor issue 26 names, one
# inflate plus one pass over the DWARF, by others' code
# (bench/dwarf_floor.c: libdeflate, then libdw over every DIE and line
# program; medians of RUNS), beside gsymutil. No aim: what bounds the line.
# It takes the library's list of the sections lidiagen reads, from the
# build tree's internal archive (make).
dwarf_floor() {
	local bin=$tmp/dwarf_floor lib=$root/build/liblidia-internal.a i d inc=(-I"$root/lib")
	[ -f "$lib" ] || die "$lib: not built (run make first)"
	for d in "$root"/lib/*/; do inc+=(-I"${d%/}"); done
	# shellcheck disable=SC2046 # pkg-config's words
	${CC:-cc} -O2 "${inc[@]}" -o "$bin" "$here/dwarf_floor.c" "$lib" \
		$(pkg-config --libs libelf libdw libzstd liblzma libdeflate) -lpthread -ldl ||
		die "cannot build bench/dwarf_floor.c"
	: >"$tmp/floor"
	for ((i = 0; i < RUNS; i++)); do "$bin" "$1" ${2:+"$2"} >>"$tmp/floor"; done
	note "  floor: libdeflate inflating alone" "$(ratio "$(median floor 1)" "$3")" \
		"$(median floor 1) s; lidiagen x$(ratio "$4" "$(median floor 1)") of it"
	note "  floor: + libdw's pass (DIEs, lines)" \
		"$(ratio "$(awk -v a="$(median floor 1)" -v b="$(median floor 2)" -v c="$(median floor 3)" \
			'BEGIN { print a + b + c }')" "$3")" "pass $(median floor 2) + $(median floor 3) s"
}

aim_llvm() {
	local f w
	f=$(compgen -G "$(unpack_deb libllvm16 "$CACHE/aims/llvm")/usr/lib/*/libLLVM-16.so.1" | head -n 1)
	w=$(writer)
	if [ -z "$w" ]; then
		say "llvm: no PYROSCOPE_WRITER or PYROSCOPE_SRC: skipped"
		return
	fi
	alternate "ls:$(repeated ls "$(conv "$LIDIAGEN" 1 "--allow-dynsym-only $f")")" \
		"ln:$(repeated ln "$(conv "$LIDIAGEN" 1 "--allow-dynsym-only --no-demangle $f")")" \
		"pw:$(repeated pw "$w $f $tmp/out.x")" \
		${BASELINE:+"bs:$(repeated bs "$(conv "$BASELINE" 1 "--allow-dynsym-only $f")")"}
	line "libLLVM-16 symbols: CPU / Pyroscope's" "$(ratio "$(median ls 1)" "$(median pw 1)")" \
		"<=" 0.30 "$(cells ls pw ${BASELINE:+bs}) (s: $REPEAT runs) RSS x$(ratio "$(median ls 3)" "$(median pw 3)")"
	line "  the same, --no-demangle" "$(ratio "$(median ln 1)" "$(median pw 1)")" "<=" 0.30 \
		"$(cells ln) ($REPEAT runs)"
	demangle_floor "$f" "$(median pw 1)" "$(median ln 1)"
}

# demangle_floor ELF PW_CPU LN_CPU: LLVM's demangler alone over ELF's
# exported function names (bench/demangle_floor.cc) beside Pyroscope's
# writer, then added to the --no-demangle run: what a demangled run cannot
# go below as long as names read as llvm-symbolizer's do. No aim: a floor.
demangle_floor() {
	local bin=$tmp/demangle_floor inc lib sec n
	command -v "$LLVM_CONFIG" >/dev/null || { say "llvm: no $LLVM_CONFIG: floor skipped"; return; }
	inc=$("$LLVM_CONFIG" --includedir)
	lib=$("$LLVM_CONFIG" --libdir)
	${CXX:-c++} -std=c++17 -O2 -I"$inc" -o "$bin" "$here/demangle_floor.cc" "$lib/libLLVMDemangle.a" ||
		die "cannot build bench/demangle_floor.cc"
	nm -D --defined-only "$1" | awk '$2 ~ /^[TWi]$/ { sub(/@.*/, "", $3); print $3 }' |
		sort -u >"$tmp/names"
	read -r sec n < <("$bin" "$tmp/names" 20)
	note "  floor: LLVM's demangler alone" \
		"$(ratio "$(awk -v s="$sec" -v r="$REPEAT" 'BEGIN { print s * r }')" "$2")" \
		"$n names, $(awk -v s="$sec" 'BEGIN { printf "%.1f", s * 1000 }') ms a pass"
	note "  floor: that + the --no-demangle run" \
		"$(ratio "$(awk -v s="$sec" -v r="$REPEAT" -v l="$3" 'BEGIN { print s * r + l }')" "$2")" ""
}

aim_libc() {
	local f dwarf
	f=$(largest "$(unpack_deb libc6-dbg "$CACHE/aims/libc")")
	dwarf=$(python3 "$here/lib_dwarf_sizes.py" "$f" | awk '$1 == "total" { print $3 }')
	alternate "lc:$(conv "$LIDIAGEN" 1 "$f")" ${BASELINE:+"bc:$(conv "$BASELINE" 1 "$f")"}
	line "libc: peak RSS / inflated DWARF" "$(ratio "$(($(median lc 3) * 1024))" "$dwarf")" "<=" 2 \
		"$(cells lc ${BASELINE:+bc}); DWARF $(awk -v b="$dwarf" 'BEGIN { printf "%.1f", b / 1048576 }') MiB"
}

say "lidiagen: $LIDIAGEN${BASELINE:+; baseline (b*): $BASELINE}; $RUNS runs each, alternating"
echo "aim                                      figure  aim       verdict  medians: cpu s/wall s/RSS MiB"
for a in $AIMS; do
	case $a in
	ceph | gold | llvm | libc) "aim_$a" ;;
	*) die "unknown aim $a (ceph, gold, llvm, libc)" ;;
	esac
done
