#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/dwz_bench.sh [LIDIAGEN [BASELINE]]: lidiagen against llvm-gsymutil on
# dwz'd Debian debug files with thousands of partial units (issue 14): CPU,
# wall time and peak RSS of one thread, and the peak RSS beside the inflated
# DWARF. With BASELINE (another lidiagen, say a build of an older commit) its
# figures are printed too.
#
# Inputs (Debian 12 -dbg packages, reachable with apt-get download; unpacked
# with dpkg-deb -x into BENCH_CACHE/dwz):
#   petsc-opt    libpetsc-real3.18-dbg: the largest .build-id/*.debug, the
#                optimized libpetsc_real.so's (47 MiB of DWARF, compressed;
#                ~6,100 partial units, in the file: dwz without -m)
#   petsc-debug  libpetsc-real3.18-dbg: petscdir/*-debug/lib/libpetsc_real.so,
#                PETSc built for debugging, its DWARF inside (69 MiB, ~6,200
#                partial units)
#   gold         binutils-x86-64-linux-gnu-dbg: the largest .build-id/*.debug,
#                ld.gold's (C++, LTO; ~740 partial units) with its dwz supplementary file
#                (.dwz/x86_64-linux-gnu/binutils-x86-64-linux-gnu.debug, ~1,200
#                more), found by lidiagen beside the unpacked tree
#   libc         libc6-dbg: the largest .build-id/*.debug (libc.so.6's; no dwz)
#
# Each input is converted BENCH_DWZ_RUNS times (default 3) by each tool in
# turn, alternating (lidiagen, gsymutil, [baseline,] lidiagen, ...), each run
# under /usr/bin/time -f '%e %U %S %M'; the medians are printed:
#   lidiagen -q -j 1 FILE -o TMPDIR
#   llvm-gsymutil-16 --convert FILE -o TMP.gsym --num-threads 1
# "DWARF" is the sum of the inflated sizes of the .debug_* sections of the
# file and of its dwz file (compressed sections counted at their ch_size).
# Aims (issue 14): CPU ratio lidiagen / gsymutil <= 0.5, RSS ratio <= 0.5, and
# RSS <= 2 x DWARF. RSS includes what the process takes before it reads
# anything (lidiagen --help: about 2.4 MiB; libcurl is loaded only to publish),
# which weighs on the smaller inputs. gsymutil 16 does not follow .gnu_debugaltlink: on gold
# it reads less than lidiagen does.
#
# Environment: BENCH_CACHE (default bench/.cache), BENCH_DWZ_RUNS (default 3),
# BENCH_DWZ_INPUTS (default "petsc-opt petsc-debug gold libc"),
# GSYMUTIL (default llvm-gsymutil-16).
set -euo pipefail
# shellcheck source=bench/lib_deb.sh
. "$(dirname "$0")/lib_deb.sh"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
LIDIAGEN=${1:-$root/build/lidiagen}
BASELINE=${2:-}
CACHE=${BENCH_CACHE:-$here/.cache}
RUNS=${BENCH_DWZ_RUNS:-3}
INPUTS=${BENCH_DWZ_INPUTS:-"petsc-opt petsc-debug gold libc"}
GSYMUTIL=${GSYMUTIL:-llvm-gsymutil-16}

die() { echo "dwz_bench: $*" >&2; exit 2; }
say() { echo "dwz_bench: $*" >&2; }

abspath() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
LIDIAGEN=$(abspath "$LIDIAGEN")
[ -x "$LIDIAGEN" ] || die "$LIDIAGEN: not an executable (run make first)"
if [ -n "$BASELINE" ]; then
	BASELINE=$(abspath "$BASELINE")
	[ -x "$BASELINE" ] || die "$BASELINE: not an executable"
fi
command -v "$GSYMUTIL" >/dev/null || die "$GSYMUTIL not found (Debian: llvm-16)"
/usr/bin/time -f %M true >/dev/null 2>&1 || die "/usr/bin/time not found (Debian: time)"
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
	die "needs apt-get and dpkg-deb (a Debian machine)"
[ "$RUNS" -ge 1 ] 2>/dev/null || die "BENCH_DWZ_RUNS must be a number >= 1"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }
apt_opts=()
[ "$(id -u)" = 0 ] && apt_opts=(-o APT::Sandbox::User=root)

# unpack PKG: PKG's .deb unpacked into $CACHE/dwz/PKG (once); prints the directory.
unpack() { unpack_deb "$1" "$CACHE/dwz/$1"; }

# input NAME: the file to convert for NAME.
input() {
	case $1 in
	petsc-opt) largest "$(unpack libpetsc-real3.18-dbg)" ;;
	petsc-debug)
		compgen -G "$(unpack libpetsc-real3.18-dbg)/usr/lib/petscdir/*/*-debug/lib/libpetsc_real.so.*.*.*" |
			head -n 1
		;;
	gold) largest "$(unpack binutils-x86-64-linux-gnu-dbg)" ;;
	libc) largest "$(unpack libc6-dbg)" ;;
	*) die "unknown input $1 (petsc-opt, petsc-debug, gold, libc)" ;;
	esac
}

# dwarf_info FILE: "<inflated DWARF bytes> <partial units>", the file's and its dwz file's.
dwarf_info() {
	python3 - "$1" <<'EOF'
import os, struct, sys

def sections(path):
    d = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
    names = hdrs[shstrndx][4]
    for h in hdrs:
        name = d[names + h[0]:d.index(b"\0", names + h[0])].decode()
        yield name, h, d

def inflated(path):
    total, altlink = 0, None
    for name, h, d in sections(path):
        if name == ".gnu_debugaltlink":
            altlink = d[h[4]:d.index(b"\0", h[4])].decode()
        if not name.startswith(".debug_") or h[1] == 8:  # SHT_NOBITS
            continue
        total += struct.unpack_from("<IIQ", d, h[4])[2] if h[2] & 0x800 else h[5]
    return total, altlink

path = sys.argv[1]
total, alt = inflated(path)
if alt:
    root = path[:path.find("/usr/lib/debug/")] if "/usr/lib/debug/" in path else ""
    for cand in (root + alt, alt, os.path.join(os.path.dirname(path), alt)):
        if os.path.exists(cand):
            total += inflated(cand)[0]
            break
print(total)
EOF
}

# count_pus FILE: the partial units of FILE itself.
count_pus() {
	local dump
	dump=$(dirname "$(readlink -f "$(command -v "$GSYMUTIL")")")/llvm-dwarfdump
	[ -x "$dump" ] || { echo "?"; return; }
	"$dump" --debug-info --recurse-depth=0 "$1" 2>/dev/null | grep -c DW_TAG_partial_unit || true
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure TOOL FILE: one run; appends "cpu wall rss_kib" to $tmp/TOOL.
measure() {
	local tool=$1 file=$2 t
	rm -rf "$tmp/out" "$tmp/out.gsym"
	case $tool in
	gsym) /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$GSYMUTIL" --convert "$file" \
		-o "$tmp/out.gsym" --num-threads 1 >/dev/null 2>&1 || say "gsymutil failed on $file" ;;
	lidiagen) /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$LIDIAGEN" -q -j 1 "$file" \
		-o "$tmp/out" >/dev/null 2>&1 || say "lidiagen failed on $file" ;;
	baseline) /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$BASELINE" -q -j 1 "$file" \
		-o "$tmp/out" >/dev/null 2>&1 || say "baseline failed on $file" ;;
	esac
	t=$(tail -n 1 "$tmp/time")
	awk '{ printf "%.2f %.2f %d\n", $2 + $3, $1, $4 }' <<<"$t" >>"$tmp/$tool"
}

# median TOOL COLUMN: the median of a column of $tmp/TOOL.
median() {
	sort -g -k"$2" "$tmp/$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}

tools=(lidiagen gsym)
[ -n "$BASELINE" ] && tools+=(baseline)
say "lidiagen: $LIDIAGEN${BASELINE:+; baseline: $BASELINE}; $GSYMUTIL; $RUNS runs each, alternating"
printf '%-12s %7s %5s | %-24s | %-24s |%s %6s %6s %8s\n' input DWARF PUs \
	"lidiagen cpu/wall/RSS" "gsymutil cpu/wall/RSS" "${BASELINE:+ baseline cpu/wall/RSS      |}" \
	cpu/g rss/g rss/DWARF
printf '%-12s %7s %5s | %-24s | %-24s |%s %6s %6s %8s\n' "" MiB "" "s / s / MiB" "s / s / MiB" \
	"${BASELINE:+ s / s / MiB               |}" "<=0.5" "<=0.5" "<=2"
for name in $INPUTS; do
	file=$(input "$name")
	[ -n "$file" ] && [ -f "$file" ] || die "$name: no input file found"
	dwarf=$(dwarf_info "$file")
	pus=$(count_pus "$file")
	for t in "${tools[@]}"; do : >"$tmp/$t"; done
	for ((r = 0; r < RUNS; r++)); do
		for t in "${tools[@]}"; do measure "$t" "$file"; done
	done
	declare -A cpu wall rss
	for t in "${tools[@]}"; do
		cpu[$t]=$(median "$t" 1)
		wall[$t]=$(median "$t" 2)
		rss[$t]=$(median "$t" 3)
	done
	cell() { printf '%6.2f / %6.2f / %6.1f' "${cpu[$1]}" "${wall[$1]}" "$(awk -v k="${rss[$1]}" 'BEGIN { print k / 1024 }')"; }
	base=""
	[ -n "$BASELINE" ] && base=" $(cell baseline) |"
	printf '%-12s %7.1f %5s | %s | %s |%s %6.2f %6.2f %8.2f\n' "$name" \
		"$(awk -v b="$dwarf" 'BEGIN { print b / 1048576 }')" "$pus" "$(cell lidiagen)" \
		"$(cell gsym)" "$base" \
		"$(awk -v a="${cpu[lidiagen]}" -v b="${cpu[gsym]}" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
		"$(awk -v a="${rss[lidiagen]}" -v b="${rss[gsym]}" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
		"$(awk -v a="${rss[lidiagen]}" -v b="$dwarf" 'BEGIN { print a * 1024 / b }')"
	say "$name: $file"
done
