#!/usr/bin/env bash
# JSON for any path: file names are bytes, JSON text is Unicode. A name that
# is not UTF-8 (a 0xff byte, a cut sequence) is written in the manifest and
# the index as valid JSON that Python's json module reads (the oracle: it
# rejects invalid UTF-8 and raw control characters), whose string gives the
# name's very bytes back through os.fsencode (surrogateescape); the index
# reader reads it back to the same bytes, so convert --index finds the file.
set -u
. "$(dirname "$0")/lib/common.sh"

L=$LIDIAGEN
w=$(scratch work)

printf 'int work(int x) { return x * 3; }\nint main(int c, char **v) { (void)v; return work(c); }\n' \
	>"$w/tiny.c"
mkdir -p "$w/dist"
names=$(printf 'bad\xffname\nhalf\xc3\ncjk-\xe6\x97\xa5\nover\xc0\xaflong\nsurr\xed\xa0\x80')
i=0
while IFS= read -r n; do
	i=$((i + 1))
	if ! gcc -O1 -g -Wl,--build-id=0x$(printf '%040x' $((0xabc000 + i))) -o "$w/dist/$n" \
		"$w/tiny.c" 2>"$w/cc.err"; then
		not_ok "json paths: the test programs build" "$(cat "$w/cc.err")"
		exit 0
	fi
done <<<"$names"

# names_back FILE KEY: every string of KEY (a string, or a list of them) in the
# JSON Lines FILE, as bytes (one a line).
names_back() {
	"$PYTHON" - "$1" "$2" <<'PY'
import json, os, sys
out = sys.stdout.buffer
for line in open(sys.argv[1], "rb"):
    rec = json.loads(line.decode("utf-8"))  # strict: invalid UTF-8 raises
    v = rec.get(sys.argv[2])
    for item in v if isinstance(v, list) else [v]:
        if isinstance(item, str):
            out.write(os.fsencode(item) + b"\n")
PY
}

"$L" -q -r "$w/dist" -o "$w/out" --manifest "$w/m.jsonl" >/dev/null 2>"$w/run.err"
rc=$?
want=$(cd "$w/dist" && printf '%s\n' * | sed "s|^|$w/dist/|" | sort)
got=$(names_back "$w/m.jsonl" inputs 2>"$w/py.err" | sort -u)
if [ "$rc" -eq 0 ] && [ "$got" = "$want" ]; then
	ok "manifest: names that are not UTF-8 are valid JSON, and give their bytes back (5 names)"
else
	not_ok "manifest: names that are not UTF-8 are valid JSON, and give their bytes back" \
		"exit $rc" "$(head -3 "$w/py.err")" "got: $(printf '%s' "$got" | od -c | head -5)"
fi

(cd "$w" && "$L" index -q -r dist -o "$w/index.jsonl" 2>"$w/ix.err")
rc=$?
got=$(names_back "$w/index.jsonl" input 2>"$w/py.err" | sort -u)
want=$(cd "$w" && printf '%s\n' dist/* | sort)
if [ "$rc" -eq 0 ] && [ "$got" = "$want" ]; then
	ok "index: names that are not UTF-8 are valid JSON, and give their bytes back"
else
	not_ok "index: names that are not UTF-8 are valid JSON, and give their bytes back" \
		"exit $rc" "$(head -3 "$w/py.err")" "$(head -3 "$w/ix.err")"
fi
(cd "$w" && "$L" -q --index "$w/index.jsonl" -o "$w/out2" >/dev/null 2>"$w/cv.err")
rc=$?
if [ "$rc" -eq 0 ] && diff -r "$w/out" "$w/out2" >/dev/null; then
	ok "convert --index reads those names back to the same bytes: the same tree as a plain run"
else
	not_ok "convert --index reads those names back to the same bytes" "exit $rc" \
		"$(head -5 "$w/cv.err")"
fi
