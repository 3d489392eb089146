#!/usr/bin/env bash
# The oracle of Pyroscope's reader (tests/tools/pyroscope_reader.py), which
# the other tests trust to say whether Pyroscope opens a file and what it
# finds there, proven here:
# - on every golden file (tests/golden/NAME.lidia, written by Pyroscope's own
#   writer), it prints byte for byte the lookups Pyroscope's own reader gave
#   (NAME.lookups);
# - it refuses every corrupt file tests/unit/test_corrupt.c makes (the images
#   lidiagen's reader refuses with its CRC check on: truncations, bad magic,
#   version, widths, counts, offsets that overflow, bad CRCs, hostile entries,
#   bytes set to 0xff), written out by LIDIA_CORRUPT_DIR, and opens the two
#   valid files they were made from, with lidiagen's frames.
# Every call goes through pyroscope_reader (tests/lib/env.sh): where
# $SHARED_PYROSCOPE exists, the second re-statement must agree on each.
set -u
. "$(dirname "$0")/lib/common.sh"

work=$(scratch out)
if [ -n "$SHARED_PYROSCOPE" ] && [ -f "$SHARED_PYROSCOPE" ]; then
	note "every answer compared with $SHARED_PYROSCOPE"
else
	note "no ${SHARED_PYROSCOPE:-second reader}: tests/tools/pyroscope_reader.py alone"
fi

# ---- golden files ------------------------------------------------------------
n=0 total=0
for lookups in "$GOLDEN"/*.lookups; do
	[ -f "$lookups" ] || continue
	name=$(basename "$lookups" .lookups)
	n=$((n + 1))
	addrs=$(cut -d' ' -f1 "$lookups")
	count=$(grep -c . <<<"$addrs")
	total=$((total + count))
	# shellcheck disable=SC2086
	pyroscope_reader --lines "$GOLDEN/$name.lidia" $addrs >"$work/$name.got" 2>"$work/$name.err"
	rc=$?
	if [ "$rc" -eq 0 ] && cmp -s "$work/$name.got" "$lookups"; then
		ok "golden $name: the $count answers of Pyroscope's reader, byte for byte"
	else
		not_ok "golden $name: the $count answers of Pyroscope's reader, byte for byte" \
			"exit $rc" "$(first_lines 5 "$work/$name.err")" \
			"$(diff "$lookups" "$work/$name.got" | head -n 10)"
	fi
done
[ "$n" -gt 0 ] || not_ok "golden cases found" "no *.lookups under $GOLDEN"
note "$n golden files, $total addresses"

# ---- corrupt files -------------------------------------------------------------
# About 1900 small files: in memory where there is /dev/shm (creating them
# on a disk file system takes seconds).
corrupt=$(mktemp -d /dev/shm/lidiagen-corrupt.XXXXXX 2>/dev/null) || {
	corrupt=$work/corrupt
	mkdir -p "$corrupt"
}
if [ ! -x "$BUILD/tests/test_corrupt" ]; then
	not_ok "test_corrupt is built" "no $BUILD/tests/test_corrupt (make check builds it)"
else
	LIDIA_CORRUPT_DIR=$corrupt "$BUILD/tests/test_corrupt" >"$work/test_corrupt.out" 2>&1
	rc=$?
	files=$(find "$corrupt" -name '[0-9]*.lidia' | sort)
	count=$(grep -c . <<<"$files")
	if [ "$rc" -eq 0 ] && [ "$count" -gt 0 ]; then
		ok "test_corrupt writes out its $count refused images (LIDIA_CORRUPT_DIR)"
	else
		not_ok "test_corrupt writes out its refused images (LIDIA_CORRUPT_DIR)" \
			"exit $rc, $count files" "$(grep -v '^ok' "$work/test_corrupt.out" | head -n 5)"
	fi
	# shellcheck disable=SC2086
	pyroscope_reader --each $files >"$work/corrupt.txt" 2>"$work/corrupt.err"
	rc=$?
	opened=$(grep -c '^ok ' "$work/corrupt.txt")
	refused=$(grep -c '^refused ' "$work/corrupt.txt")
	if [ "$count" -gt 0 ] && [ "$refused" -eq "$count" ] && [ "$rc" -eq 1 ] &&
		[ ! -s "$work/corrupt.err" ]; then
		ok "all $count corrupt images are refused"
	else
		not_ok "all $count corrupt images are refused" "$refused refused, $opened opened (exit $rc)" \
			"$(grep '^ok ' "$work/corrupt.txt" | head -n 5)" "$(first_lines 5 "$work/corrupt.err")"
	fi
	for s in truncation header overflow crc entries sweep; do
		note "$s: $(grep -c "^refused .*-$s-" "$work/corrupt.txt") refused"
	done

	# The valid files they were made from: opened, with lidiagen's frames.
	for g in narrow wide; do
		f=$corrupt/good-$g.lidia
		base=0
		[ "$g" = wide ] && base=0x500000000
		addrs=$("$PYTHON" -c 'import sys; b = int(sys.argv[1], 0)
print(" ".join("0x%x" % (b + o) for o in (0, 0xfff, 0x1000, 0x1010, 0x1020, 0x1024, 0x102b,
      0x1030, 0x10ff, 0x1100, 0x1108, 0x1140, 0x1200, 0x120f, 0x1210)))' "$base")
		# shellcheck disable=SC2086
		ours=$(pyroscope_reader --json "$f" $addrs 2>&1)
		rc=$?
		# shellcheck disable=SC2086
		theirs=$("$LIDIAGEN" lookup --json "$f" $addrs 2>&1)
		same=$("$PYTHON" -c 'import json, sys
a = [[(f["function"], f["file"]) for f in o["frames"]] for o in json.loads(sys.argv[1])]
b = [[(f["function"], f["file"]) for f in json.loads(l)["frames"]]
     for l in sys.argv[2].splitlines() if l.strip()]
print("yes" if a == b and any(a) else "no")' "$ours" "$theirs" 2>&1)
		if [ "$rc" -eq 0 ] && [ "$same" = yes ]; then
			ok "good-$g: opened, with lidiagen lookup's frames at 15 addresses"
		else
			not_ok "good-$g: opened, with lidiagen lookup's frames at 15 addresses" \
				"exit $rc" "oracle: $ours" "lidiagen: $theirs" "$same"
		fi
	done
fi
[ "${KEEP_TMP:-}" ] || rm -rf "$corrupt"
