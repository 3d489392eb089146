#!/usr/bin/env bash
# The sha256 of every file lidiagen writes for a set of inputs, one line per
# output key, sorted: run it with the binary before and after a change that
# must not change outputs (a refactor), and diff the two lists.
#
#   bench/same_bytes.sh LIDIAGEN [INPUT...] > sums.txt
#   JOBS=4 bench/same_bytes.sh LIDIAGEN [INPUT...]   (lidiagen -j 4; 1 by default)
#   OPTS='--allow-dynsym-only' bench/same_bytes.sh ...  (more options for every run)
#
# Without INPUTs: the golden inputs (tests/golden/inputs, each alone) and
# the benchmark packages in bench/.cache, if bench/run.sh fetched them.
set -eu
bin=$(realpath "$1")
shift
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ $# -eq 0 ]; then
	set -- "$here"/../tests/golden/inputs/* "$here"/.cache/*.deb
fi
n=0
for input in "$@"; do
	[ -e "$input" ] || continue
	n=$((n + 1))
	out=$tmp/$n
	# Each input alone, so that its outputs are its own; errors are part of the result.
	# shellcheck disable=SC2086 # OPTS are words
	"$bin" -q -j "${JOBS:-1}" --no-debug-search ${OPTS:-} "$input" -o "$out" >"$tmp/log" 2>&1 || echo "exit $? for $input"
	[ -d "$out" ] || { echo "no output for $(basename "$input")"; continue; }
	(cd "$out" && find . -type f | sort | xargs -r sha256sum |
		sed "s|  \./|  $(basename "$input"): |")
done
