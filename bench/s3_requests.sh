#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/s3_requests.sh [LIDIAGEN]: the requests `lidiagen -r TREE -o s3://`
# sends to a local s3rver (tests/lib/s3rver.sh), on a tree of this machine's
# shared libraries and programs with a GNU build ID (a few hundred build
# IDs; BENCH_S3_TREE to give another), in three cases:
#   first    into an empty prefix, with --state
#   rerun    the same again, with the state of the first: nothing changed
#   fresh    the same again without a state, as on a new CI runner
# It prints the requests of each case by method. The aims (issue 23): a
# re-run with nothing new makes one listing request per 1,000 keys and
# nothing else (besides the bucket check and the probe of conditional
# writes); a fresh runner at most one HEAD per key. Not part of `make test`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
L=$(realpath "${1:-$root/build/lidiagen}")
tmp=$(mktemp -d)
. "$root/tests/lib/s3rver.sh"
trap 's3rver_stop; rm -rf "$tmp"' EXIT

tree=${BENCH_S3_TREE:-}
if [ -z "$tree" ]; then
	tree=$tmp/tree
	mkdir -p "$tree"
	for f in /usr/lib/x86_64-linux-gnu/*.so* /usr/bin/*; do
		[ -f "$f" ] && [ ! -L "$f" ] && readelf -n "$f" 2>/dev/null | grep -q 'Build ID' &&
			cp "$f" "$tree/" 2>/dev/null || true
	done
fi
s3rver_start "$tmp/srv" bench >/dev/null
s3_env "$tmp/home"
E=(--endpoint-url "$S3RVER_URL" --path-style --allow-dynsym-only -q -r "$tree")

case_run() { # NAME ARGS...: one run, its summary and the requests by method
	local name=$1
	shift
	s3rver_mark
	"$L" "${E[@]}" "$@" 2>"$tmp/$name.err" || true
	printf '%-6s %s\n' "$name" "$(tail -n 1 "$tmp/$name.err" | sed 's/^lidiagen: //')"
	for m in GET HEAD PUT DELETE; do
		printf '       %-6s %s\n' "$m" "$(s3rver_count "$m")"
	done
}
case_run first -o s3://bench/p --state "$tmp/state"
case_run rerun -o s3://bench/p --state "$tmp/state"
case_run fresh -o s3://bench/p
