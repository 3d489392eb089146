#!/usr/bin/env bash
# lidiagen dump, against independent oracles, on a C program with functions
# inlined two levels deep (tests/fixtures/dump/inline2.c, gcc -O2 -g):
#   - --json is JSON Lines (parsed by python3), one object per range, with
#     the fields `dump --help` lists; the text form says the same, one line
#     per range with its line rows indented under it;
#   - llvm-symbolizer (llvm-16) names, at each range's start, the range's
#     function at the range's depth (outermost frame = depth 0), and for an
#     inlined range the call site its caller's frame shows, and at each line
#     row's address the row's line;
#   - the counts agree with `info` and with the batch's manifest.
set -u
. "$(dirname "$0")/lib/common.sh"

L=$LIDIAGEN
w=$(scratch work)
need_tool llvm-symbolizer "$LLVM_SYMBOLIZER" || exit 0
need_tool gcc gcc || exit 0

# Built in $w/src, its path in DWARF mapped to /fixtures: the same bytes every run.
mkdir -p "$w/src"
cp "$FIXTURES_SRC/dump/inline2.c" "$w/src/"
cmd='gcc -O2 -g -ffile-prefix-map=$PWD=/fixtures -Wl,--build-id -o inline2 inline2.c'
note "build: $cmd"
if ! (cd "$w/src" && eval "$cmd") >"$w/build.log" 2>&1; then
	not_ok "dump: the fixture builds" "$(first_lines 10 "$w/build.log")"
	exit 0
fi
P=$w/src/inline2
run "$w/conv" "$L" "$P" -o "$w/out" --layout flat --manifest "$w/manifest.jsonl"
F=$(find "$w/out" -name '*.lidia' | head -n 1)
if [ "$RC" -ne 0 ] || [ -z "$F" ]; then
	not_ok "dump: lidiagen converts the fixture" "exit $RC" "$(first_lines 5 "$w/conv.err")"
	exit 0
fi

run "$w/text" "$L" dump "$F"
rc_text=$RC
run "$w/json" "$L" dump --json "$F"
rc_json=$RC
run "$w/info" "$L" info "$F"
if [ "$rc_text$rc_json$RC" = 000 ] && [ ! -s "$w/text.err" ] && [ ! -s "$w/json.err" ]; then
	ok "dump, dump --json and info of the file: exit 0, nothing on stderr"
else
	not_ok "dump, dump --json and info of the file: exit 0, nothing on stderr" \
		"exits $rc_text (text), $rc_json (json), $RC (info)" "$(first_lines 3 "$w/text.err")" \
		"$(first_lines 3 "$w/json.err")"
	exit 0
fi
note "first lines of the dump:" "$(head -n 6 "$w/text.out")"

addrs=$("$PYTHON" -c '
import json, sys
seen = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    for a in [r["va"]] + [l["va"] for l in r["lines"]]:
        if a not in seen:
            seen.add(a)
            print(a)
' "$w/json.out" 2>"$w/addrs.err")
"$LLVM_SYMBOLIZER" --obj="$P" --inlining --output-style=JSON <<<"$addrs" >"$w/llvm.json" 2>"$w/llvm.err"

# One python3 program checks everything and prints the TAP lines.
"$PYTHON" - "$w/json.out" "$w/text.out" "$w/info.out" "$w/manifest.jsonl" "$w/llvm.json" <<'EOF'
import json, re, sys

json_path, text_path, info_path, manifest_path, llvm_path = sys.argv[1:]

def ok(what):
    print("ok - " + what)

def not_ok(what, *details):
    print("not ok - " + what)
    for d in details:
        for line in str(d).splitlines():
            print("# " + line)

# --json: JSON Lines, the listed fields of the listed types.
FIELDS = {"va": str, "length": int, "depth": int, "function": str, "file": str,
          "call_file": str, "call_line": int, "lines": list}
ranges, bad = [], []
for n, line in enumerate(open(json_path), 1):
    try:
        r = json.loads(line)
    except ValueError as e:
        bad.append("line %d: %s: %s" % (n, e, line[:100]))
        continue
    if set(r) != set(FIELDS) or any(not isinstance(r[k], t) for k, t in FIELDS.items()) or \
            not re.fullmatch(r"0x[0-9a-f]+", r["va"]) or \
            any(set(l) != {"va", "offset", "line"} or int(l["va"], 16) != int(r["va"], 16) + l["offset"]
                for l in r["lines"]):
        bad.append("line %d: %s" % (n, line[:200]))
    ranges.append(r)
if ranges and not bad:
    ok("dump --json: %d JSON objects, one per line, with va, length, depth, function, file, "
       "call_file, call_line, lines [{va, offset, line}]" % len(ranges))
else:
    not_ok("dump --json: JSON Lines with the listed fields", *bad[:5])

# File order: by va, then depth.
keys = [(int(r["va"], 16), r["depth"]) for r in ranges]
if keys == sorted(keys):
    ok("dump: ranges in file order (by address, then depth)")
else:
    not_ok("dump: ranges in file order (by address, then depth)")

# The text form says what --json says.
def text_of(r):
    name = lambda s: s if s else "??"
    head = "0x%x len 0x%x depth %d: %s at %s" % (int(r["va"], 16), r["length"], r["depth"],
                                                name(r["function"]), name(r["file"]))
    if r["depth"]:
        head += " (inlined at %s:%d)" % (name(r["call_file"]), r["call_line"])
    return [head] + ["  0x%x line %d" % (int(l["va"], 16), l["line"]) for l in r["lines"]]
want = [l for r in ranges for l in text_of(r)]
got = open(text_path).read().splitlines()
if got == want:
    ok("dump: the text form, one line per range and its line rows indented under it, "
       "says what --json says (%d lines)" % len(got))
else:
    diff = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w][:3]
    not_ok("dump: the text form says what --json says",
           "%d lines, want %d" % (len(got), len(want)), *["line %d: %r, want %r" % d for d in diff])

# The counts of info and of the manifest.
functions = sum(1 for r in ranges if r["depth"] == 0)
inlines = sum(1 for r in ranges if r["depth"] > 0)
rows = sum(len(r["lines"]) for r in ranges)
info = open(info_path).read()
m = re.search(r"content +(\d+) functions \(depth 0\), (\d+) inline ranges, (\d+) line rows", info)
holds = re.search(r"holds +(.*)", info)
want_holds = "symbols" + (", lines" if rows else "") + (", inline frames" if inlines else "")
if m and tuple(map(int, m.groups())) == (functions, inlines, rows) and holds and \
        holds.group(1) == want_holds:
    ok("info: %d functions, %d inline ranges, %d line rows, holds '%s', as dump lists them"
       % (functions, inlines, rows, want_holds))
else:
    not_ok("info: the counts and holds of what dump lists",
           "dump: %d functions, %d inline ranges, %d line rows" % (functions, inlines, rows), info)
try:
    # The build IDs' lines (the "read" lines after them say what was opened).
    man = [m for m in map(json.loads, open(manifest_path)) if "read" not in m]
    counts = man[0]["counts"] if len(man) == 1 else None
except (OSError, ValueError, KeyError) as e:
    counts = "unreadable: %s" % e
if counts == {"functions": functions, "inline_ranges": inlines, "line_rows": rows}:
    ok("manifest: the same counts as info and dump")
else:
    not_ok("manifest: the same counts as info and dump", "manifest counts: %s" % counts,
           "dump: %d functions, %d inline ranges, %d line rows" % (functions, inlines, rows))
if inlines and any(r["depth"] >= 2 for r in ranges):
    ok("dump: the fixture has inline ranges two levels deep")
else:
    not_ok("dump: the fixture has inline ranges two levels deep", "%d inline ranges" % inlines)

# llvm-symbolizer at each range's start and each line row.
try:
    llvm = {}
    for line in open(llvm_path):
        o = json.loads(line)
        llvm[int(o["Address"], 16)] = o["Symbol"]  # innermost first
except (OSError, ValueError, KeyError) as e:
    not_ok("llvm-symbolizer answers in JSON", e)
    sys.exit(0)

def frames_at(va):
    return list(reversed(llvm.get(va, [])))  # outermost first: index = depth

name_bad, call_bad, names, calls = [], [], 0, 0
for r in ranges:
    va = int(r["va"], 16)
    fr = frames_at(va)
    d = r["depth"]
    if d >= len(fr) or fr[d]["FunctionName"] != r["function"]:
        name_bad.append("%s depth %d %r: llvm-symbolizer: %s" % (
            r["va"], d, r["function"], " <- ".join(f["FunctionName"] for f in fr) or "nothing"))
    else:
        names += 1
    if d == 0:
        continue
    if d >= len(fr) or (fr[d - 1]["FileName"], fr[d - 1]["Line"]) != (r["call_file"], r["call_line"]):
        call_bad.append("%s depth %d %s: called at %s:%d; llvm-symbolizer: %s" % (
            r["va"], d, r["function"], r["call_file"], r["call_line"],
            " <- ".join("%s at %s:%d" % (f["FunctionName"], f["FileName"], f["Line"]) for f in fr)))
    else:
        calls += 1
if names and not name_bad:
    ok("llvm-symbolizer: at each of the %d ranges' starts, the frame at the range's depth is its "
       "function" % names)
else:
    not_ok("llvm-symbolizer: at each range's start, the frame at the range's depth is its function",
           "%d agree, %d differ" % (names, len(name_bad)), *name_bad[:8])
if calls and not call_bad:
    ok("llvm-symbolizer: the call site of each of the %d inline ranges is where its caller's "
       "frame stands" % calls)
else:
    not_ok("llvm-symbolizer: the call site of each inline range is where its caller's frame stands",
           "%d agree, %d differ" % (calls, len(call_bad)), *call_bad[:8])

line_bad, nrows = [], 0
for r in ranges:
    for l in r["lines"]:
        fr = frames_at(int(l["va"], 16))
        nrows += 1
        if len(fr) != r["depth"] + 1 or fr[-1]["Line"] != l["line"]:
            line_bad.append("%s (in %s, depth %d): line %d; llvm-symbolizer: %s" % (
                l["va"], r["function"], r["depth"], l["line"],
                " <- ".join("%s:%d" % (f["FunctionName"], f["Line"]) for f in fr)))
if nrows and not line_bad:
    ok("llvm-symbolizer: each of the %d line rows belongs to the innermost frame at its address "
       "and has its line" % nrows)
else:
    not_ok("llvm-symbolizer: each line row belongs to the innermost frame and has its line",
           "%d rows, %d differ" % (nrows, len(line_bad)), *line_bad[:8])
EOF

# Files dump cannot read: exit 1, naming them.
printf 'not a lidia file\n' >"$w/notes.txt"
run "$w/bad" "$L" dump "$w/notes.txt"
if [ "$RC" -eq 1 ] && grep -q "^lidiagen: $w/notes.txt: " "$w/bad.err" && [ ! -s "$w/bad.out" ]; then
	ok "dump of a file that is not lidia: error naming it, exit 1"
else
	not_ok "dump of a file that is not lidia: error naming it, exit 1" "exit $RC" \
		"stderr: $(first_lines 3 "$w/bad.err")"
fi
cp "$F" "$w/corrupt.lidia"
"$PYTHON" - "$w/corrupt.lidia" <<'EOF'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
field, count, off = struct.unpack_from("<QQQ", b, 0x28)
b[off + (8 * field * count) // 2] ^= 0x40
open(p, "wb").write(bytes(b))
EOF
run "$w/crc" "$L" dump "$w/corrupt.lidia"
if [ "$RC" -eq 1 ] && grep -q "^lidiagen: $w/corrupt.lidia: " "$w/crc.err"; then
	ok "dump of a file whose CRC fails: error naming it, exit 1"
else
	not_ok "dump of a file whose CRC fails: error naming it, exit 1" "exit $RC" \
		"stderr: $(first_lines 3 "$w/crc.err")"
fi
