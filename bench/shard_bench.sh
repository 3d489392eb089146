#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/shard_bench.sh [LIDIAGEN]: what N shards cost together, with and
# without an index (issues 15 and 26, doc/sharding.md), on a tree of real
# Debian packages and their -dbg packages. For N = 1, 2, 4: the N shards run
# one after the other (as N machines would, each alone), and each one's
# bytes read (rchar of /proc/PID/io, read after it exits and before it is
# reaped: every read(2) of every thread, the index included) and CPU (user
# + system, wait4's rusage, as /usr/bin/time gives them) are summed. Printed
# beside one plain run's (lidiagen -r debs -o OUT), with the aims:
#  - the index made as a CI makes it, 2 slices (lidiagen index --shard K/2)
#    and their merge, then 4 shards (--index, the default --shard-by input):
#    all of it within 1.3x of one run, in CPU and in bytes read (issue 26);
#  - the 4 shards alone, with the index: within 1.2x of one run (issue 15).
# Modes: plain (--shard K/N, no index), index (--index, --shard-by key: the
# build IDs by their digits, as plain), by-input (--index --shard-by input).
# See bench/README.md, "Sharding with an index".
#
# Environment:
#   BENCH_CACHE     where the .debs are kept (default: bench/.cache/shard)
#   BENCH_PACKAGES  packages to apt-get download (default below)
#   BENCH_PARPK     a directory the .debs are taken from instead of downloaded
#                   (default /tmp/parpk, if there; its ceph-common-dbg is added
#                   only with BENCH_CEPH=1: 520 MiB alone)
#   BENCH_JOBS      -j of every run (default 2)
#   BENCH_KEEP=1    keep the temporary directory
#   BENCH_STRICT=1  exit 1 when an aim of the default way is missed (key
#                   sharding reads every package that holds build IDs of
#                   every shard: reported, not failed)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
LIDIAGEN=${1:-$root/build/lidiagen}
case $LIDIAGEN in /*) ;; *) LIDIAGEN=$PWD/$LIDIAGEN ;; esac
CACHE=${BENCH_CACHE:-$here/.cache/shard}
PACKAGES=${BENCH_PACKAGES:-binutils-x86-64-linux-gnu binutils-x86-64-linux-gnu-dbg libpetsc-real3.18 libpetsc-real3.18-dbg libc6 libc6-dbg restic}
PARPK=${BENCH_PARPK:-/tmp/parpk}
JOBS=${BENCH_JOBS:-2}

# ---- the inputs ----------------------------------------------------------------------
mkdir -p "$CACHE/debs"
for p in $PACKAGES; do
	for f in "$PARPK/${p}"_*.deb; do
		[ -f "$f" ] && [ ! -f "$CACHE/debs/$(basename "$f")" ] && cp "$f" "$CACHE/debs/"
	done
done
if [ "${BENCH_CEPH:-}" = 1 ]; then
	for f in "$PARPK"/ceph-common-dbg_*.deb; do
		[ -f "$f" ] && [ ! -f "$CACHE/debs/$(basename "$f")" ] && cp "$f" "$CACHE/debs/"
	done
fi
missing=
for p in $PACKAGES; do
	ls "$CACHE/debs/${p}_"*.deb >/dev/null 2>&1 || missing+=" $p"
done
if [ -n "$missing" ]; then
	(cd "$CACHE/debs" && apt-get download $missing >/dev/null 2>&1) ||
		(apt-get update >/dev/null 2>&1 && cd "$CACHE/debs" && apt-get download $missing >/dev/null)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/lidiagen-shard-bench.XXXXXX")
[ "${BENCH_KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT
cd "$CACHE"
echo "inputs: $(ls debs | wc -l) .debs, $(du -sm debs | cut -f1) MiB in $CACHE/debs"
ls debs | sed 's/^/  /'

# measure CMD...: run CMD; print "RCHAR CPU_SECONDS" (rchar read from /proc
# before the process is reaped, CPU from its rusage). Fails when CMD fails.
cat >"$work/measure.py" <<'EOF'
import os, sys
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, 0)
    os.execvp(sys.argv[1], sys.argv[1:])
os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)   # exited, not reaped: /proc/PID/io is still there
io = dict(l.split(": ") for l in open("/proc/%d/io" % pid).read().splitlines())
_, status, ru = os.wait4(pid, 0)
print(int(io["rchar"]), "%.2f" % (ru.ru_utime + ru.ru_stime))
sys.exit(os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8)
EOF
measure() { python3 "$work/measure.py" "$@" 2>>"$work/stderr.log"; }

# run_shards N MODE [DIR]: the N shards of MODE (plain; index: --shard-by key; by-input:
# --shard-by input) one after the other,
# into DIR (default $work/MODE-N, emptied first); prints "BYTES CPU".
run_shards() {
	local n=$1 mode=$2 out=${3:-$work/$2-$1} k bytes=0 cpu=0 b c
	rm -rf "$out"
	for k in $(seq 1 "$n"); do
		if [ "$mode" = plain ]; then
			read -r b c < <(measure "$LIDIAGEN" -r debs --shard "$k/$n" -o "$out" -j "$JOBS" -q)
		else
			read -r b c < <(measure "$LIDIAGEN" --index "$work/index.jsonl" --shard "$k/$n" \
				--shard-by "$([ "$mode" = by-input ] && echo input || echo key)" \
				-o "$out" -j "$JOBS" -q)
		fi
		bytes=$((bytes + b))
		cpu=$(echo "$cpu + $c" | bc)
	done
	echo "$bytes $cpu"
}

mib() { printf '%.1f' "$(echo "scale=3; $1 / 1048576" | bc)"; }
ratio() { printf '%.2f' "$(echo "scale=4; $1 / $2" | bc)"; }

# within VALUE AIM: "met" or "missed", VALUE a ratio.
within() { [ "$(echo "$1 <= $2" | bc)" = 1 ] && echo met || echo missed; }

read -r one_b one_c < <(run_shards 1 plain "$work/one")
# The index as CI makes it: two slices, one after the other, then their merge.
ix_b=0 ix_c=0
for k in 1 2; do
	read -r b c < <(measure "$LIDIAGEN" index -r debs --shard "$k/2" -o "$work/slice-$k.jsonl" -j "$JOBS" -q)
	ix_b=$((ix_b + b))
	ix_c=$(echo "$ix_c + $c" | bc)
done
read -r b c < <(measure "$LIDIAGEN" index --merge "$work/slice-1.jsonl" "$work/slice-2.jsonl" -o "$work/index.jsonl" -q)
ix_b=$((ix_b + b))
ix_c=$(echo "$ix_c + $c" | bc)
read -r whole_b whole_c < <(measure "$LIDIAGEN" index -r debs -o "$work/whole.jsonl" -j "$JOBS" -q)
cmp -s "$work/index.jsonl" "$work/whole.jsonl" || echo "  the 2 slices merged differ from one index run's" >&2
echo
echo "one plain run: $(mib "$one_b") MiB read, ${one_c} s CPU"
echo "lidiagen index, 2 slices + merge (before the shards): $(mib "$ix_b") MiB read, ${ix_c} s CPU" \
	"(in one run: $(mib "$whole_b") MiB, ${whole_c} s)"
echo
printf '%-3s %-8s %12s %8s %10s %8s   %s\n' N mode "MiB read" "x one" "CPU s" "x one" "aim (N=4, with the index: <= 1.20x)"
status=0
for n in 1 2 4; do
	for mode in plain index by-input; do
		read -r b c < <(run_shards "$n" "$mode")
		rb=$(ratio "$b" "$one_b")
		rc=$(ratio "$c" "$one_c")
		aim=
		if [ "$n" = 4 ] && [ "$mode" != plain ]; then
			aim="bytes $(within "$rb" 1.2), CPU $(within "$rc" 1.2)"
			[ "$mode" = index ] || [ "$aim" = "bytes met, CPU met" ] || status=1
		fi
		# The index's cost, and 4 shards': the whole of a CI's work (total, below).
		case $n-$mode in
		4-by-input) in_b=$((ix_b + b)) in_c=$(echo "$ix_c + $c" | bc) ;;
		4-index) key_b=$((ix_b + b)) key_c=$(echo "$ix_c + $c" | bc) ;;
		esac
		printf '%-3s %-8s %12s %8s %10s %8s   %s\n' "$n" "$mode" "$(mib "$b")" "$rb" "$c" "$rc" "$aim"
		if ! diff -r "$work/one" "$work/$mode-$n" >/dev/null; then
			echo "  the $n $mode shards' outputs differ from one run's" >&2
			status=1
		fi
	done
done
# total WAY MODE BYTES CPU: the line of index + 4 shards, each ratio beside its aim.
total() {
	local rb rc
	rb=$(ratio "$3" "$one_b")
	rc=$(ratio "$4" "$one_c")
	echo "index (2 slices + merge) + 4 shards ($1): $(mib "$3") MiB read = ${rb}x one run" \
		"(aim <= 1.30x: $(within "$rb" 1.3)), $4 s CPU = ${rc}x one run (aim <= 1.30x: $(within "$rc" 1.3))"
	[ "$2" != by-input ] || [ "$(within "$rb" 1.3)$(within "$rc" 1.3)" = metmet ] || status=1
}
echo
total "--shard-by input, the default with --index" by-input "$in_b" "$in_c"
total "--shard-by key" index "$key_b" "$key_c"
[ "${BENCH_STRICT:-}" = 1 ] && exit "$status"
exit 0
