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
