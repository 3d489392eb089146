#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/dwarf_bench.sh [LIDIAGEN]: lidiagen's full DWARF conversion (inline
# frames, lines, files, demangled names) against llvm-gsymutil --convert on
# one large real debug file: wall time, CPU time, peak RSS, output size.
# See bench/README.md ("DWARF conversion against llvm-gsymutil").
#
# Input: the largest debug file of Debian's librados2-dbg (Ceph's librados.so.2,
# C++, GCC 12 -O2 -g, DWARF 5, zlib-compressed sections, no dwz): 95 MB on
# disk, 275 MB of DWARF once decompressed. It is measured twice: as shipped
# (compressed), and decompressed with `objcopy --decompress-debug-sections`,
# which takes zlib out of both tools' times.
#
# Commands (each run writes a new output; one untimed warm-up run first):
#   lidiagen -q --no-debug-search INPUT -o - > OUT.lidia
#   llvm-gsymutil --quiet --num-threads=N --convert=INPUT --out-file=OUT.gsym
# timed with /usr/bin/time -f '%e %U %S %M' (wall, user, sys, peak RSS KiB).
# lidiagen converts one file on one thread; gsymutil runs with 1 and 2 threads.
#
# Environment:
#   BENCH_CACHE            downloads (default: bench/.cache)
#   DWARF_BENCH_RUNS       timed runs per command (default 3; the median is reported)
#   DWARF_BENCH_INPUT      another input file instead of librados2-dbg's
#   DWARF_BENCH_GSYM_THREADS  gsymutil thread counts (default "1 2")
#   DWARF_BENCH_PROFILE=1  also `perf record --call-graph dwarf` lidiagen on the
#                          compressed input and print where the time goes
#   DWARF_BENCH_STRICT=1   exit 1 when a target is missed
# Targets: lidiagen at least 2x faster (wall) than gsymutil with 1 thread, and
# at most half its peak RSS, on each input.
set -euo pipefail
# shellcheck source=bench/lib_deb.sh
. "$(dirname "$0")/lib_deb.sh"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
LIDIAGEN=${1:-$root/build/lidiagen}
case $LIDIAGEN in /*) ;; *) LIDIAGEN=$PWD/$LIDIAGEN ;; esac
CACHE=${BENCH_CACHE:-$here/.cache}
RUNS=${DWARF_BENCH_RUNS:-3}
GSYM_THREADS=${DWARF_BENCH_GSYM_THREADS:-"1 2"}
GSYMUTIL=${GSYMUTIL:-/usr/lib/llvm-16/bin/llvm-gsymutil}
SPEEDUP=2
RSS_FRAC=0.5

die() { echo "dwarf_bench: $*" >&2; exit 2; }
say() { echo "dwarf_bench: $*" >&2; }

[ -x "$LIDIAGEN" ] || die "$LIDIAGEN: not an executable (run make first)"
[ "$RUNS" -ge 1 ] 2>/dev/null || die "DWARF_BENCH_RUNS must be a number >= 1"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }
apt_opts=()
[ "$(id -u)" = 0 ] && apt_opts=(-o APT::Sandbox::User=root)
apt_install() {
	as_root apt-get install -y -q "$@" >/dev/null 2>&1 ||
		{ as_root apt-get update -q >/dev/null 2>&1 && as_root apt-get install -y -q "$@" >/dev/null 2>&1; }
}
need=()
/usr/bin/time -f %M true >/dev/null 2>&1 || need+=(time)
[ -x "$GSYMUTIL" ] || need+=(llvm-16)
command -v objcopy >/dev/null || need+=(binutils)
if [ "${DWARF_BENCH_PROFILE:-0}" = 1 ] && ! command -v perf >/dev/null; then need+=(linux-perf); fi
if [ ${#need[@]} -gt 0 ]; then
	say "installing ${need[*]}"
	apt_install "${need[@]}" || die "cannot install ${need[*]}"
fi

# ---- inputs -------------------------------------------------------------------
if [ -n "${DWARF_BENCH_INPUT:-}" ]; then
	[ -f "$DWARF_BENCH_INPUT" ] || die "$DWARF_BENCH_INPUT: no such file"
	compressed=$DWARF_BENCH_INPUT
	label=$(basename "$compressed")
else
	pkg=librados2-dbg
	dir=$CACHE/dwarf_bench/$pkg
	unpack_deb "$pkg" "$dir" >/dev/null
	deb=$(fetch_deb "$pkg")
	compressed=$(find "$dir/usr/lib/debug" -type f -name '*.debug' -printf '%s %p\n' |
		sort -n | tail -n 1 | cut -d' ' -f2-)
	[ -n "$compressed" ] || die "no debug file in $deb"
	label="$pkg $(basename "$deb" .deb | cut -d_ -f2 | sed "s/%3a/:/") ${compressed##*/.build-id/}"
fi
plain=$CACHE/dwarf_bench/$(basename "$compressed").decompressed
if [ ! -f "$plain" ] || [ "$plain" -ot "$compressed" ]; then
	say "decompressing the debug sections into $plain"
	mkdir -p "$(dirname "$plain")"
	objcopy --decompress-debug-sections "$compressed" "$plain.tmp" && mv "$plain.tmp" "$plain"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- measuring ------------------------------------------------------------------
# measure NAME OUTFILE CMD...: warm-up, then RUNS timed runs; prints
# "NAME wall_median cpu_median rss_max_kib out_bytes" to $tmp/results.
measure() {
	local name=$1 out=$2; shift 2
	local i
	rm -f "$out"
	"$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; die "$name: warm-up run failed"; }
	: >"$tmp/times"
	for ((i = 0; i < RUNS; i++)); do
		rm -f "$out"
		/usr/bin/time -o "$tmp/t" -f '%e %U %S %M' "$@" >/dev/null 2>"$tmp/err" ||
			{ cat "$tmp/err" >&2; die "$name: run failed"; }
		cat "$tmp/t" >>"$tmp/times"
	done
	python3 - "$name" "$(stat -c %s "$out")" "$tmp/times" >>"$tmp/results" <<'EOF'
import statistics, sys
name, size, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = [list(map(float, l.split())) for l in open(path) if l.strip()]
wall = statistics.median(r[0] for r in rows)
cpu = statistics.median(r[1] + r[2] for r in rows)
rss = max(r[3] for r in rows)
print("%s %.3f %.3f %d %d %s" % (name, wall, cpu, rss, size,
      ",".join("%.2f" % r[0] for r in rows)))
EOF
}

# lidiagen writes to stdout (bash execs it: time sees lidiagen itself);
# gsymutil to --out-file.
: >"$tmp/results"
for which in compressed plain; do
	input=${!which}
	say "input ($which): $input"
	measure "lidiagen:$which" "$tmp/out.lidia" \
		bash -c '"$0" -q --no-debug-search "$1" -o - >"$2"' "$LIDIAGEN" "$input" "$tmp/out.lidia"
	cp "$tmp/out.lidia" "$tmp/$which.lidia"
	for t in $GSYM_THREADS; do
		measure "gsymutil-$t:$which" "$tmp/out.gsym" \
			"$GSYMUTIL" --quiet --num-threads="$t" --convert="$input" --out-file="$tmp/out.gsym"
		cp "$tmp/out.gsym" "$tmp/$which-$t.gsym"
	done
done

# ---- report ---------------------------------------------------------------------
echo
echo "DWARF conversion: lidiagen vs llvm-gsymutil"
echo "input: $label"
echo "lidiagen: $LIDIAGEN ($("$LIDIAGEN" --version 2>/dev/null | head -n 1 || true))"
echo "gsymutil: $GSYMUTIL ($("$GSYMUTIL" --version 2>/dev/null | grep -m1 -i version | sed 's/^ *//'))"
echo "runs: $RUNS per command after one warm-up; wall and CPU are medians, RSS the largest"
for which in compressed plain; do
	input=${!which}
	echo
	echo "input $which: $input"
	python3 "$here/lib_dwarf_sizes.py" "$input" | awk '
		$1 == "total" { printf "  DWARF: %.1f MiB stored, %.1f MiB uncompressed (sum of .debug_* sections)\n", $2/1048576, $3/1048576 }'
	echo "  file: $(( $(stat -c %s "$input") / 1048576 )) MiB"
done
echo
"$LIDIAGEN" info "$tmp/compressed.lidia" | sed -n 's/^ *content */  lidiagen output: /p'
python3 - "$tmp/results" "$SPEEDUP" "$RSS_FRAC" <<'EOF'
import sys
rows = {}
for l in open(sys.argv[1]):
    name, wall, cpu, rss, size, walls = l.split()
    rows[name] = (float(wall), float(cpu), int(rss), int(size), walls)
speedup, rss_frac = float(sys.argv[2]), float(sys.argv[3])
fmt = "%-22s %8s %8s %10s %10s  %s"
print()
print(fmt % ("command:input", "wall s", "CPU s", "peak RSS", "output", "walls"))
for name, (wall, cpu, rss, size, walls) in rows.items():
    print(fmt % (name, "%.2f" % wall, "%.2f" % cpu, "%.0f MiB" % (rss / 1024),
                 "%.1f MiB" % (size / 1048576), walls))
missed = 0
print()
for which in ("compressed", "plain"):
    l = rows.get("lidiagen:" + which)
    g = rows.get("gsymutil-1:" + which)
    if not l or not g:
        continue
    sp = g[0] / l[0]
    rr = l[2] / g[2]
    ok_t = sp >= speedup
    ok_m = rr <= rss_frac
    missed += (not ok_t) + (not ok_m)
    line = "%-10s speed: gsymutil-1 wall / lidiagen wall = %.2fx (target >= %gx: %s); " \
           "RSS: lidiagen / gsymutil-1 = %.2f (target <= %g: %s)" % (
               which, sp, speedup, "met" if ok_t else "MISSED", rr, rss_frac,
               "met" if ok_m else "MISSED")
    print(line)
    g2 = rows.get("gsymutil-2:" + which)
    if g2:
        print("%-10s (gsymutil with 2 threads: %.2f s wall, %.2f s CPU, %.0f MiB)"
              % ("", g2[0], g2[1], g2[2] / 1024))
open(sys.argv[1] + ".missed", "w").write(str(missed))
EOF
missed=$(cat "$tmp/results.missed")

if [ "${DWARF_BENCH_PROFILE:-0}" = 1 ]; then
	echo
	echo "profile: perf record --call-graph dwarf on lidiagen, compressed input (inclusive %)"
	perf record -q -F 2000 --call-graph dwarf,16384 -o "$tmp/perf.data" \
		"$LIDIAGEN" -q --no-debug-search "$compressed" -o "$tmp/p.lidia" >/dev/null 2>&1 || true
	perf report -i "$tmp/perf.data" --children --sort symbol --stdio -g none 2>/dev/null |
		grep -E '^ +[0-9]' | grep -v '\[k\]' |
		grep -E ' (extract_dwarf|scan_dies|collect_inlines|do_subprog|die_name|demangle|inflate|dwarf_begin_elf|dwarf_siblingof|dwarf_attr_integrate|dwarf_ranges|dwarf_getsrclines|__GI___qsort_r|strtab_intern|lidia_builder_add|lidia_builder_finalize|lidia_builder_write|frames_segment|resolve_overlaps|extract_symbols|pthread_rwlock_tryrdlock.*|malloc|free)( |$)' |
		awk '{printf "  %7s  %s\n", $1, $4}' | head -40
fi

if [ "$missed" != 0 ] && [ "${DWARF_BENCH_STRICT:-0}" = 1 ]; then
	exit 1
fi
exit 0
