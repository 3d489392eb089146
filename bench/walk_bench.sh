#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/walk_bench.sh [LIDIAGEN]: the directory walk's cost against the
# number of directories (issue 21, part 8). Trees of 20,000, 40,000 and
# 80,000 empty directories (100 at the top, the rest below them) are walked
# with `lidiagen -r TREE -o OUT` (nothing to convert); each size's CPU
# (user + system, /usr/bin/time) is the median of BENCH_RUNS runs (default
# 5). Printed with the aim: linear, so 80k costs at most 4.5 times 20k
# (4 for a straight line, with room for the cache). BENCH_STRICT=1 exits 1
# when the aim is missed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LIDIAGEN=${1:-$here/../build/lidiagen}
RUNS=${BENCH_RUNS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cpu_of() { # TREE: the median CPU seconds of RUNS walks
	local t=$1 i
	for i in $(seq "$RUNS"); do
		/usr/bin/time -f '%U %S' -o "$tmp/t" "$LIDIAGEN" -q -r "$t" -o "$tmp/out" >/dev/null 2>&1
		awk '{ printf "%.3f\n", $1 + $2 }' "$tmp/t"
	done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

declare -A cpu
for n in 20000 40000 80000; do
	python3 -c "
import os, sys
n, root = int(sys.argv[1]), sys.argv[2]
for i in range(n - 100):
    os.makedirs(f'{root}/d{i % 100}/e{i}', exist_ok=True)
" "$n" "$tmp/tree$n"
	cpu[$n]=$(cpu_of "$tmp/tree$n")
	printf '%6d directories: %s s CPU (median of %d)\n' "$n" "${cpu[$n]}" "$RUNS"
done
ratio=$(awk -v a="${cpu[80000]}" -v b="${cpu[20000]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 4.5) ? "met" : "MISSED" }')
echo "80k / 20k CPU: ${ratio}x (aim <= 4.5x: $verdict)"
[ "${BENCH_STRICT:-}" = 1 ] && [ "$verdict" != met ] && exit 1
exit 0
