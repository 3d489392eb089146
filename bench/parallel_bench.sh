#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/parallel_bench.sh LIDIAGEN FILE: one big input on two threads (issue
# 14, part 2). lidiagen -j 1 and -j 2 (one input: -j 2 gives it both
# threads), then llvm-gsymutil-16 at two threads, each BENCH_PAR_RUNS times
# (default 3), alternating (-j 1, -j 2, gsymutil at 2 threads and at 1, -j 1, ...), each run under
# /usr/bin/time -f '%e %U %S %M', a fresh output each time; the medians are
# printed, with the ratios beside the aims:
#   lidiagen -q -j N --no-debug-search FILE -o TMPDIR
#   llvm-gsymutil-16 --convert FILE --out-file TMP.gsym --num-threads 2 (and 1)
#
# The input the aims are set on: libceph-common's debug file (C++, 262 MiB of
# DWARF, zlib), from Debian 12's ceph-common-dbg:
#   apt-get download ceph-common-dbg && dpkg-deb -x ceph-common-dbg_*.deb ceph
#   FILE=ceph/usr/lib/debug/.build-id/91/acc8c24572abce6fd068bc849b35157bc8bd97.debug
# The machine should be otherwise idle: wall time on a loaded one says little.
set -eu
[ $# -eq 2 ] || {
	echo "usage: $0 LIDIAGEN FILE" >&2
	exit 2
}
bin=$(realpath "$1")
file=$(realpath "$2")
runs=${BENCH_PAR_RUNS:-3}
gsym=${LLVM_GSYMUTIL:-llvm-gsymutil-16}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure NAME CMD...: one run; appends "wall user sys rss" to $tmp/NAME.
measure() {
	local name=$1
	shift
	rm -rf "$tmp/out" "$tmp/out.gsym"
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/t" "$@" >/dev/null 2>"$tmp/err" || {
		echo "$name failed:" >&2
		cat "$tmp/err" >&2
		exit 1
	}
	tail -n 1 "$tmp/t" >>"$tmp/$name"
}

# median NAME FIELD: the median of a column (1 wall, 2 user, 3 sys, 4 rss; 5 user+sys).
median() {
	awk -v f="$2" '{ print (f == 5 ? $2 + $3 : $f) }' "$tmp/$1" | sort -g |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

for i in $(seq "$runs"); do
	measure j1 "$bin" -q -j 1 --no-debug-search "$file" -o "$tmp/out"
	measure j2 "$bin" -q -j 2 --no-debug-search "$file" -o "$tmp/out"
	measure gsym "$gsym" --convert "$file" --out-file "$tmp/out.gsym" --num-threads 2
	measure gsym1 "$gsym" --convert "$file" --out-file "$tmp/out.gsym" --num-threads 1
done

w1=$(median j1 1) w2=$(median j2 1) wg=$(median gsym 1)
c1=$(median j1 5) c2=$(median j2 5) cg=$(median gsym 5) cg1=$(median gsym1 5)
r1=$(median j1 4) r2=$(median j2 4) rg=$(median gsym 4)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

echo "input: $file ($(du -m "$file" | cut -f1) MiB), medians of $runs runs, $(nproc) cores"
printf '%-22s %10s %10s %10s\n' "" "wall s" "CPU s" "peak RSS MiB"
printf '%-22s %10s %10s %10s\n' "lidiagen -j 1" "$w1" "$c1" "$((r1 / 1024))"
printf '%-22s %10s %10s %10s\n' "lidiagen -j 2" "$w2" "$c2" "$((r2 / 1024))"
printf '%-22s %10s %10s %10s\n' "gsymutil 2 threads" "$wg" "$cg" "$((rg / 1024))"
printf '%-22s %10s %10s %10s\n' "gsymutil 1 thread" "$(median gsym1 1)" "$cg1" "$(($(median gsym1 4) / 1024))"
echo
printf '%-44s %6s   %s\n' "ratio" "now" "aim"
printf '%-44s %6sx  %s\n' "-j 1 wall / -j 2 wall (speed-up)" "$(ratio "$w1" "$w2")" "at least 1.7x"
printf '%-44s %6sx  %s\n' "-j 2 wall / gsymutil wall (2 threads)" "$(ratio "$w2" "$wg")" "at most 0.5x"
printf '%-44s %6sx  %s\n' "-j 2 peak RSS / gsymutil peak RSS" "$(ratio "$r2" "$rg")" "at most 0.5x"
printf '%-44s %6sx  %s\n' "-j 2 CPU / -j 1 CPU (threads' overhead)" "$(ratio "$c2" "$c1")" "about 1x"
printf '%-44s %6sx  %s\n' "-j 1 CPU / gsymutil CPU (1 thread each)" "$(ratio "$c1" "$cg1")" "at most 0.5x"
