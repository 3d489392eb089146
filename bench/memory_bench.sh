#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/memory_bench.sh LIDIAGEN [OLD_LIDIAGEN]: peak RSS where members
# claim more than they hold, and on real packages (issue 21, part 2). Each
# run under /usr/bin/time -f '%e %M', a fresh output each time:
#
#   sparse:  two tars, each of one ELF file (tests/fixtures/batch/batch_prog.c)
#            extended to 1 GiB with truncate(1) and put in with tar --sparse
#            (30 KB each): lidiagen -q -j 2 A.tar B.tar. Aim: under 300 MiB.
#   sparse3: one such tar of a 3 GiB member, -j 1.
#   debs:    four large real .debs of Debian 12 (libllvm15, libllvm14,
#            libclang-cpp15, rclone: members of 30 to 112 MiB), -j 4, with the
#            default budget and with --max-memory 512M. Aim: within the budget.
#
# OLD_LIDIAGEN, when given, runs the sparse cases too (for the before/after
# figures of bench/README.md). The .debs are downloaded with apt-get
# download into bench/.cache/debs (bench/lib_deb.sh); without network they
# are skipped, said so.
set -eu
[ $# -ge 1 ] && [ $# -le 2 ] || {
	echo "usage: $0 LIDIAGEN [OLD_LIDIAGEN]" >&2
	exit 2
}
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "$1")
old=${2:+$(realpath "$2")}
CACHE=${BENCH_CACHE:-$here/.cache}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
apt_opts=()
say() { echo "# $*" >&2; }
die() {
	echo "memory_bench: $*" >&2
	exit 1
}
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
. "$here/lib_deb.sh"

# measure LABEL AIM_MIB CMD...: one run; prints "LABEL  wall  peak RSS  (aim)".
measure() {
	local label=$1 aim=$2 rss wall
	shift 2
	rm -rf "$tmp/out"
	/usr/bin/time -f '%e %M' -o "$tmp/t" "$@" -o "$tmp/out" >/dev/null 2>"$tmp/err" || {
		echo "$label failed:" >&2
		head -5 "$tmp/err" >&2
		return 0
	}
	read -r wall rss <"$tmp/t"
	printf '%-34s %7.2f s %8d MiB   %s\n' "$label" "$wall" $((rss / 1024)) \
		"$([ "$aim" -gt 0 ] && echo "aim < $aim MiB: $([ $((rss / 1024)) -lt "$aim" ] && echo met || echo MISSED)")"
}

cd "$tmp"
cc -O1 -g -Wl,--build-id -DVARIANT=1 "$here/../tests/fixtures/batch/batch_prog.c" -o app1
cc -O1 -g -Wl,--build-id -DVARIANT=2 "$here/../tests/fixtures/batch/batch_prog.c" -o app2
for v in 1 2; do
	mkdir -p s$v && cp app$v s$v/app && truncate -s 1G s$v/app
	tar -C s$v --sparse -cf sparse$v.tar app
	rm -rf s$v
done
mkdir -p s3 && cp app1 s3/app && truncate -s 3G s3/app && tar -C s3 --sparse -cf sparse3.tar app && rm -rf s3
echo "case                               wall        peak RSS"
measure "sparse: 2 x 1 GiB, -j 2" 300 "$bin" -q -j 2 sparse1.tar sparse2.tar
measure "sparse3: 1 x 3 GiB, -j 1" 300 "$bin" -q -j 1 sparse3.tar
if [ -n "$old" ]; then
	measure "sparse: 2 x 1 GiB, -j 2 (old)" 0 "$old" -q -j 2 sparse1.tar sparse2.tar
	measure "sparse3: 1 x 3 GiB, -j 1 (old)" 0 "$old" -q -j 1 sparse3.tar
fi

debs=()
for pkg in libllvm15 libllvm14 libclang-cpp15 rclone; do
	deb=$( (fetch_deb "$pkg") 2>/dev/null) || {
		say "cannot download $pkg (offline?): the .deb case is skipped"
		exit 0
	}
	debs+=("$deb")
done
budget=$("$bin" -vv -j 4 --dry-run app1 -o "$tmp/dry" 2>&1 | sed -n 's/.*memory budget \([0-9]*\) MiB.*/\1/p')
measure "debs: 4 real, -j 4 (budget ${budget:-?} MiB)" "${budget:-0}" "$bin" -q -j 4 "${debs[@]}"
measure "debs: 4 real, -j 4, --max-memory 512M" 512 "$bin" -q -j 4 --max-memory 512M "${debs[@]}"
if [ -n "$old" ]; then
	measure "debs: 4 real, -j 4 (old)" 0 "$old" -q -j 4 "${debs[@]}"
fi
