#!/usr/bin/env bash
# Reader vs Pyroscope: for every golden case NAME (files written by Pyroscope's
# own writer, tests/golden/NAME.lidia), `lidiagen lookup --json` must give,
# at every address of NAME.lookups, the frames Pyroscope's reader gave:
# the same (function, file) list, innermost first. Lines are not compared
# (Pyroscope's reader returns 0).
set -u
. "$(dirname "$0")/lib/common.sh"

golden=$GOLDEN
n=0
for lookups in "$golden"/*.lookups; do
	[ -f "$lookups" ] || continue
	name=$(basename "$lookups" .lookups)
	lidia=$golden/$name.lidia
	n=$((n + 1))
	if [ ! -f "$lidia" ]; then
		not_ok "golden $name: $name.lidia exists" "missing $lidia"
		continue
	fi
	"$PYTHON" "$TESTS_LIB/lidiacheck.py" golden "$LIDIAGEN" "$name" "$lookups" "$lidia"
done
if [ "$n" -eq 0 ]; then
	not_ok "golden cases found" "no *.lookups under $golden"
fi

# The files here came from ../shared/golden/ (tests/golden/README.md); where
# that directory sits beside the tree, they must still be its copies.
shared=$TESTS_ROOT/../shared/golden
if [ -d "$shared" ]; then
	differ=$(cd "$golden" && find . -type f ! -name 'README*' | sort | while read -r f; do
		cmp -s "$f" "$shared/$f" || echo "${f#./}"
	done)
	if [ -z "$differ" ]; then
		ok "golden files equal their copies in $shared"
	else
		not_ok "golden files equal their copies in $shared" "differ or missing there:" "$differ"
	fi
fi
