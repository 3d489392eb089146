#!/usr/bin/env bash
# Run every libFuzzer target of FUZZ_DIR (built by `make fuzz`) for SECONDS
# each, on a copy of its corpus tests/fuzz/corpus/NAME (the tree's corpus is
# never written), one after the other:
#
#   tests/fuzz/fuzz_long.sh FUZZ_DIR SECONDS        (make fuzz-long FUZZ_SECONDS=N)
#
# Per target: "ok - fuzz_NAME: N runs in S s, no finding" or "not ok - ..."
# naming the crash-, timeout-, leak- or oom- file libFuzzer wrote, kept under
# $FUZZ_WORK/NAME/ (default: a new /tmp/lidiagen-fuzz.XXXXXX, kept when
# something was found). An input that runs 10 s (FUZZ_TIMEOUT) is a hang.
# Exit status: 0 when no target found anything, 1 otherwise, 2 for bad usage.
set -u
if [ $# -ne 2 ] || ! [ -d "$1" ] || ! [[ $2 =~ ^[0-9]+$ ]]; then
	echo "usage: $0 FUZZ_DIR SECONDS" >&2
	exit 2
fi
dir=$1 seconds=$2
corpora=$(cd "$(dirname "$0")/corpus" && pwd)
work=${FUZZ_WORK:-$(mktemp -d /tmp/lidiagen-fuzz.XXXXXX)}
timeout_s=${FUZZ_TIMEOUT:-10}
failed=0 n=0

for t in "$dir"/fuzz_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	src=$corpora/${name#fuzz_}
	w=$work/${name#fuzz_}
	n=$((n + 1))
	rm -rf "$w"
	mkdir -p "$w/corpus" "$w/artifacts"
	# -L: symbolic links in a corpus (reproducers kept elsewhere) become files.
	[ -d "$src" ] && cp -RL "$src/." "$w/corpus/"
	echo "== $name: ${seconds}s on a copy of ${src#"$corpora"/} ($(ls "$w/corpus" | wc -l) inputs)"
	"$t" -max_total_time="$seconds" -timeout="$timeout_s" -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$w/artifacts/" "$w/corpus" >"$w/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$w/log" | tail -1)
	found=$(ls "$w/artifacts")
	if [ "$rc" -eq 0 ] && [ -z "$found" ]; then
		echo "ok - $name: ${runs:-?} runs in ${seconds}s, no finding"
	else
		failed=1
		echo "not ok - $name: exit $rc after ${runs:-?} runs; found: ${found:-nothing written}"
		grep -E '^==[0-9]+==ERROR|SUMMARY|runtime error|ALARM|Test unit written' "$w/log" |
			head -10 | sed 's/^/# /'
		echo "# log: $w/log"
	fi
done
if [ "$n" -eq 0 ]; then
	echo "not ok - no libFuzzer target in $dir (make fuzz)"
	exit 1
fi
[ "$failed" -eq 0 ] && [ -z "${FUZZ_WORK:-}" ] && rm -rf "$work"
exit "$failed"
