#!/usr/bin/env bash
# Runs a release pipeline can trust (issue 12): nothing rewritten for
# nothing (a re-run, with or without --state, or with --force, writes no
# output and keeps every date to the nanosecond; with --state it reads no
# input); what a run prints (warnings and failures one line each and a
# summary; -v a line per output; -q errors and the summary; on a terminal a
# progress line cut to COLUMNS and erased before any other line); warnings
# with their fix, --strict and `strict: true`; a manifest that accounts for
# every input, with the counts `lidiagen info` gives, every field in the
# man page.
set -u
. "$(dirname "$0")/lib/common.sh"

L=$LIDIAGEN
w=$(scratch work)
MAN=$TESTS_DIR/../doc/lidiagen.1

# ---- the inputs ---------------------------------------------------------------------

cat >"$w/p.c" <<'EOF'
#include <stdio.h>
static inline int sq(int x) { return x * x; }
int work(int x) { return sq(x) + VARIANT; }
int main(int c, char **v) { (void)v; printf("%d\n", work(c)); return 0; }
EOF
printf 'static inline int tw(int x) { return 2 * x; }\nint lib_f(int x) { return tw(x) + 3; }\n' >"$w/lib.c"
cmds=(
	"gcc -O0 -g -DVARIANT=1 -Wl,--build-id -o o0 p.c"
	"gcc -O2 -g -DVARIANT=2 -Wl,--build-id -o o2 p.c"
	"gcc -O2 -g -DVARIANT=3 -Wl,--build-id -o app.full p.c"
	"objcopy --only-keep-debug app.full app.debug"
	"strip --strip-all -o app app.full"
	"gcc -O2 -g -fPIC -shared -Wl,--build-id -o libx.so lib.c"
	"gcc -O2 -DVARIANT=4 -Wl,--build-id=none -o nobid p.c"
	"gcc -O2 -DVARIANT=5 -Wl,--build-id=0xc1c2c3c4 -o shortid p.c"
	"gcc -O2 -g -c -DVARIANT=6 -o obj.o p.c"
	"gcc -O2 -DVARIANT=7 -Wl,--build-id -o bare.full p.c"
	"strip --strip-all -o bare bare.full"
	"gcc -O2 -fPIC -shared -Wl,--build-id -o libdyn.so.full lib.c"
	"strip --strip-all -o libdyn.so libdyn.so.full"
	"gcc -O0 -g -DVARIANT=8 -Wl,--build-id=0x00112233445566778899aabbccddeeff -o same0 p.c"
	"gcc -O2 -g -DVARIANT=8 -Wl,--build-id=0x00112233445566778899aabbccddeeff -o same2 p.c"
)
for c in "${cmds[@]}"; do
	if ! (cd "$w" && $c) >"$w/cc.err" 2>&1; then
		not_ok "output: the test programs build" "$c" "$(cat "$w/cc.err")"
		exit 0
	fi
done
printf 'not an ELF file\n' >"$w/notes.txt"
note "inputs, in $w:" "${cmds[@]}"
cd "$w" || exit 0
GOOD=(o0 o2 app app.debug libx.so)

# mtimes DIR: every file under DIR with its date to the nanosecond, sorted.
mtimes() { (cd "$1" && find . -type f -exec stat -c '%n %.9Y' {} + | sort); }
# summary PREFIX: the last stderr line.
summary() { tail -n 1 "$1.err"; }
# run_l PREFIX ARGS...: lidiagen ARGS, stdout PREFIX.out, stderr PREFIX.err, RC.
run_l() {
	local p=$1
	shift
	run "$p" "$L" -j 2 "$@"
}

# ---- 1. nothing rewritten for nothing -----------------------------------------------

run_l first "${GOOD[@]}" -o out
n_out=$(find out -type f | wc -l)
if [ "$RC" -eq 0 ] && [ "$n_out" -eq 4 ] && summary first | grep -q ': 4 written, 0 kept;'; then
	ok "rerun: the first run writes 4 outputs (-O0, -O2, a stripped binary with its debug file, a library) and says '4 written'"
else
	not_ok "rerun: the first run writes 4 outputs and says '4 written'" "exit $RC, $n_out files" "$(cat first.err)"
fi
# Dates an output could not get by being rewritten now.
find out -type f -exec touch -d @1000000000.123456789 {} +
before=$(mtimes out)
rerun_case() { # WHAT PREFIX ARGS...: exit 0, "0 written, 4 kept", no date changed
	local what=$1 p=$2
	shift 2
	run_l "$p" "${GOOD[@]}" -o out "$@"
	local after
	after=$(mtimes out)
	if [ "$RC" -eq 0 ] && summary "$p" | grep -q ': 0 written, 4 kept;' && [ "$after" = "$before" ]; then
		ok "rerun: $what: '0 written, 4 kept', every output's date unchanged to the nanosecond"
	else
		not_ok "rerun: $what: '0 written, 4 kept', every output's date unchanged" "exit $RC" \
			"$(summary "$p")" "$(diff <(echo "$before") <(echo "$after") | head -4)"
	fi
}
rerun_case "the same inputs again, no state file (-v)" again -v
if [ "$(grep -c '^kept out/' again.out)" -eq 4 ] && ! grep -q ' <- ' again.out &&
	summary again | grep -q ': 0 written, 4 kept;'; then
	ok "rerun: with -v, each output says kept"
else
	not_ok "rerun: with -v, each output says kept" "$(cat again.out)"
fi
rerun_case "--force: all read again, the same bytes found, none rewritten" force --force
# --state: the first run remembers; then the inputs are garbled behind its
# back (same size, same date): a run that read one would fail on it.
rm -rf sout sstate
run_l sfirst "${GOOD[@]}" -o sout --state sstate
find sout -type f -exec touch -d @1000000000.123456789 {} +
sbefore=$(mtimes sout)
mkdir -p garbled
cp -p "${GOOD[@]}" garbled/
for f in "${GOOD[@]}"; do
	"$PYTHON" - "garbled/$f" "$f" <<'EOF'
import os, sys
st = os.stat(sys.argv[2])
with open(sys.argv[1], "r+b") as f:
    f.write(b"\0" * st.st_size)
os.utime(sys.argv[1], ns=(st.st_atime_ns, st.st_mtime_ns))
EOF
done
# The state names the inputs by path: the same paths, now garbled.
mkdir -p orig && mv "${GOOD[@]}" orig/ && cp -p garbled/* .
run_l ssecond "${GOOD[@]}" -o sout --state sstate
mv orig/* . && rmdir orig
if [ "$RC" -eq 0 ] && summary ssecond | grep -q ': 0 written, 4 kept;' &&
	[ "$(mtimes sout)" = "$sbefore" ] && [ "$(wc -l <ssecond.err)" -eq 1 ]; then
	ok "rerun: with --state: '0 written, 4 kept', no date changed, and no input read (garbled ones go unnoticed)"
else
	not_ok "rerun: with --state: '0 written', no date changed, no input read" "exit $RC" "$(cat ssecond.err)" \
		"$(diff <(echo "$sbefore") <(mtimes sout) | head -4)"
fi

# ---- 2. what a run prints -----------------------------------------------------------

ALL=("${GOOD[@]}" nobid shortid obj.o bare libdyn.so)
run_l def "${ALL[@]}" -o dout
warn_re='^lidiagen: warning: [^:]+: .*: (link with -Wl,--build-id or use --fallback-key|give its debug file or --debug-dir(, or --allow-dynsym-only)?)$'
others=$(grep -v -E "$warn_re" def.err | sed '$d')
nwarn=$(grep -c -E "$warn_re" def.err)
if [ "$RC" -eq 0 ] && [ ! -s def.out ] && [ -z "$others" ] && [ "$nwarn" -eq 4 ] &&
	summary def | grep -q -E '^lidiagen: [0-9]+ files?, .* build IDs: .* written'; then
	ok "print: by default stdout is empty; stderr is one line per warning (4) and the summary"
else
	not_ok "print: by default stdout is empty; stderr is one line per warning and the summary" "exit $RC" \
		"stdout: $(first_lines 3 def.out)" "other lines: $others" "$nwarn warnings" "$(cat def.err)"
fi
rm -rf vout
run_l verb "${GOOD[@]}" -o vout -v
if [ "$(grep -c '^wrote vout/symbolizer/anonymous/[0-9a-f]* <- .* ([0-9]* functions, [0-9]* inline ranges, [0-9]* line rows)$' verb.out)" -eq 4 ] &&
	[ "$(wc -l <verb.out)" -eq 4 ] && [ ! -s def.out ]; then
	ok "print: the line per output written (with its counts) comes with -v only"
else
	not_ok "print: the line per output written (with its counts) comes with -v only" "-v: $(cat verb.out)" \
		"default: $(first_lines 3 def.out)"
fi
rm -rf qout
run_l quiet "${ALL[@]}" notes.txt -o qout -q
if [ "$RC" -eq 1 ] && [ ! -s quiet.out ] && [ "$(wc -l <quiet.err)" -eq 2 ] &&
	grep -q '^lidiagen: notes.txt: not an ELF file or an archive$' quiet.err &&
	summary quiet | grep -q '^lidiagen: .*; 1 failed$'; then
	ok "print: -q: the error and the summary, no warning"
else
	not_ok "print: -q: the error and the summary, no warning" "exit $RC" "$(cat quiet.err)"
fi

# On a terminal: script(1) gives lidiagen a pty for stderr, COLUMNS=60 its width.
long=dir-with-a-long-name-that-does-not-fit-on-a-sixty-column-line
mkdir -p "$long" && cp "${ALL[@]}" "$long/"
tty_run() { # OUT CMD: run CMD with a terminal as stdin, stdout and stderr
	if command -v script >/dev/null 2>&1; then
		script -qfc "$2" /dev/null >"$1" 2>&1 </dev/null
	else
		"$PYTHON" -c 'import pty, sys; sys.exit(pty.spawn(["sh", "-c", sys.argv[1]]) >> 8)' "$2" >"$1" 2>&1 </dev/null
	fi
}
tty_run tty.txt "COLUMNS=60 '$L' -j 1 $(printf "'$long/%s' " "${ALL[@]}") -o tout"
"$PYTHON" - tty.txt <<'EOF' >tty.check
import re, sys
data = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
problems, drawn = [], []
# Each progress line: "\r" + text + "\033[K"; erasing: "\r\033[K".
for m in re.finditer(r"\r(lidiagen: [^\r\n\033]*)\033\[K", data):
    drawn.append(m.group(1))
if not drawn:
    problems.append("no progress line drawn")
for d in drawn:
    if len(d) > 59:
        problems.append("wider than COLUMNS-1: %d: %r" % (len(d), d))
    if not re.match(r"lidiagen: (identifying: \d+ files, \d+ build IDs |\d+/\d+ build IDs +\d+% [\d.]+ MiB/s ETA [-\d]+:[-\d]+ )", d):
        problems.append("not 'identifying: N files, K build IDs' nor 'N/M build IDs P%% R MiB/s ETA M:SS INPUT': %r" % d)
if drawn and not re.match(r"lidiagen: (\d+)/\1 build IDs 100% ", drawn[-1]):
    problems.append("the last line drawn is not at 100%%: %r" % drawn[-1])
if drawn and not any(d.split(" ETA ")[1].split(" ", 1)[1].startswith("...") for d in drawn if " ETA " in d):
    problems.append("the input's path is not cut to the width: %r" % drawn[-1])
# Every other line starts on a clean line: after a newline, or right after "\r\033[K".
for line in data.split("\n"):
    for m in re.finditer(r"lidiagen: (warning: |\d+ files?, )", line):
        head = line[:m.start()]
        if head and not head.endswith("\r\033[K"):
            problems.append("a line printed over the progress line: %r" % line[:120])
print("drawn %d" % len(drawn))
for p in problems:
    print("problem: " + p)
EOF
if grep -q '^drawn [1-9]' tty.check && ! grep -q '^problem' tty.check && grep -q 'lidiagen: [0-9]* files, ' tty.txt &&
	! grep -q "$(printf '\r')" def.err && ! grep -q "$(printf '\033')" def.err; then
	ok "print: on a terminal: a progress line (N/M build IDs, %, MiB/s, ETA, the input cut to COLUMNS=60), erased before every other line; none in a log"
else
	not_ok "print: on a terminal: a progress line, cut to COLUMNS, erased before every other line; none in a log" \
		"$(cat tty.check)" "$(cat -v tty.txt | head -5)" "log: $(cat -v def.err | head -3)"
fi

# ---- 3. warnings with their fix, --strict --------------------------------------------

fix_line() { # WHAT PATTERN: one warning line of def.err matches
	if [ "$(grep -c -E "^lidiagen: warning: $2" def.err)" -eq 1 ]; then
		ok "warn: $1"
	else
		not_ok "warn: $1" "want one line matching '^lidiagen: warning: $2'" "$(cat def.err)"
	fi
}
fix_line "no build ID: 'link with -Wl,--build-id or use --fallback-key'" \
	'nobid: no GNU build ID, skipped: link with -Wl,--build-id or use --fallback-key$'
fix_line "a build ID too short to be a key: the same fix" \
	"shortid: build ID 'c1c2c3c4' is too short .*, skipped: link with -Wl,--build-id or use --fallback-key$"
fix_line "a stripped executable alone: nothing to symbolize, not written: 'give its debug file or --debug-dir'" \
	'bare: nothing to symbolize .*not written: give its debug file or --debug-dir$'
fix_line "a stripped library alone: only .dynsym's exported symbols, not written: the same fix, or --allow-dynsym-only" \
	'libdyn.so: only exported symbols \(.dynsym\), not written .*: give its debug file or --debug-dir, or --allow-dynsym-only$'
bare_id=$(build_id bare)
if [ ! -e "dout/symbolizer/anonymous/$bare_id" ] && [ ! -e "dout/symbolizer/anonymous/$(build_id libdyn.so)" ]; then
	ok "warn: no file for nothing to symbolize, nor for .dynsym alone (either would hide the profiler's other sources)"
else
	not_ok "warn: no file for nothing to symbolize, nor for .dynsym alone" "$(ls dout/symbolizer/anonymous)"
fi
run_l allow libdyn.so -o aout --allow-dynsym-only
if [ "$RC" -eq 0 ] && [ -f "aout/symbolizer/anonymous/$(build_id libdyn.so)" ] &&
	grep -q -E '^lidiagen: warning: libdyn.so: only exported symbols \(.dynsym\) to symbolize with: give its debug file or --debug-dir$' allow.err; then
	ok "warn: --allow-dynsym-only writes the .dynsym one, with its warning"
else
	not_ok "warn: --allow-dynsym-only writes the .dynsym one, with its warning" "exit $RC" "$(cat allow.err)"
fi
if ! grep -q 'obj.o' def.err && summary def | grep -q '(.*1 not linked.*)' &&
	summary def | grep -q '; 4 warnings; 0 failed$'; then
	ok "warn: a relocatable object is no warning, but the summary counts it 'not linked': $(summary def)"
else
	not_ok "warn: a relocatable object is counted 'not linked' in the summary" "$(cat def.err)"
fi
run_l strict "${ALL[@]}" -o strout --strict
if [ "$RC" -eq 1 ] && [ "$(grep -c -E '^lidiagen: [^ ]+: .*(fallback-key|--debug-dir|--allow-dynsym-only)$' strict.err)" -eq 4 ] &&
	! grep -q 'warning:' strict.err && [ "$(find strout -type f | wc -l)" -eq 4 ]; then
	ok "strict: --strict: each warning is a failure line, exit 1; what is written does not change"
else
	not_ok "strict: --strict: each warning is a failure line, exit 1" "exit $RC" "$(cat strict.err)"
fi
printf 'strict: true\n' >strict.yaml
run_l strictc "${ALL[@]}" -o strcout --config strict.yaml
if [ "$RC" -eq 1 ] && [ "$(grep -c 'fallback-key$\|--debug-dir$\|--allow-dynsym-only$' strictc.err)" -eq 4 ]; then
	ok "strict: 'strict: true' in the config: exit 1"
else
	not_ok "strict: 'strict: true' in the config: exit 1" "exit $RC" "$(cat strictc.err)"
fi
run_l strictok "${GOOD[@]}" -o strokout --strict
if [ "$RC" -eq 0 ]; then
	ok "strict: --strict over inputs with nothing to warn about: exit 0"
else
	not_ok "strict: --strict over inputs with nothing to warn about: exit 0" "exit $RC" "$(cat strictok.err)"
fi
run_l strict0 obj.o -o str0out --strict
if [ "$RC" -eq 1 ] && grep -q '^lidiagen: --strict: no build ID was converted or kept$' strict0.err; then
	ok "strict: a strict run that converts nothing (a .o alone) fails"
else
	not_ok "strict: a strict run that converts nothing (a .o alone) fails" "exit $RC" "$(cat strict0.err)"
fi
if "$L" convert --help 2>/dev/null | grep -q -- '--strict'; then
	ok "strict: --help lists --strict"
else
	not_ok "strict: --help lists --strict"
fi

# ---- 4. the manifest ----------------------------------------------------------------

rm -rf mout
run_l man1 "${ALL[@]}" notes.txt -o mout --manifest m1.jsonl
run_l man2 "${ALL[@]}" notes.txt -o mout --manifest m2.jsonl
for f in $(find mout -type f | sort); do
	printf '%s %s\n' "${f#mout/}" "$("$L" info "$f" | sed -n 's/^ *content *//p')"
done >info.txt
"$PYTHON" - m1.jsonl m2.jsonl info.txt "${ALL[@]}" notes.txt <<'EOF' >manifest.check
import json, re, sys
m1, m2, info, inputs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
problems = []
counts = {}
for line in open(info):
    key, rest = line.split(" ", 1)
    n = [int(x) for x in re.findall(r"\d+", rest)[:1] + list(re.findall(r"(\d+) inline ranges, (\d+) line rows", rest)[0])]
    counts[key] = {"functions": n[0], "inline_ranges": n[1], "line_rows": n[2]}

def load(path):
    return [json.loads(l) for l in open(path)]

def check(rows, kept):
    seen = set()
    status = {}
    for r in rows:
        for p in r.get("inputs", []) + ([r["input"]] if "input" in r else []):
            seen.add(p)
            status[p] = (r["status"], r.get("reason"), r.get("error"))
        if "key" in r:
            if counts.get(r["key"]) != r["counts"]:
                problems.append("counts %s, info says %s" % (r["counts"], counts.get(r["key"])))
            want = "kept" if kept else "converted"
            if r["status"] != want:
                problems.append("%s: status %s, want %s" % (r["key"], r["status"], want))
    missing = [p for p in inputs if p not in seen]
    if missing:
        problems.append("inputs not accounted for: %s" % missing)
    want = {"nobid": ("skipped", "no build ID", None), "shortid": ("skipped", "too short", None),
            "obj.o": ("skipped", "not linked", None), "bare": ("skipped", "nothing to symbolize", None),
            "notes.txt": ("failed", None, "not an ELF file or an archive")}
    for p, s in want.items():
        if status.get(p) != s:
            problems.append("%s: %s, want %s" % (p, status.get(p), s))

check(load(m1), False)
check(load(m2), True)
print("%d lines" % len(load(m1)))
for p in problems:
    print("problem: " + p)
EOF
if ! grep -q '^problem' manifest.check; then
	ok "manifest: every input accounted for (converted, kept, skipped: no build ID, too short, not linked, nothing to symbolize; failed: the message), counts as 'lidiagen info' gives them"
else
	not_ok "manifest: every input accounted for, counts as 'lidiagen info' gives them" "$(cat manifest.check)" \
		"$(head -c 1500 m1.jsonl)"
fi
# Replaced: the -O0 build's output, then the -O2 build of the same build ID.
rm -rf rout
run_l rep1 same0 -o rout
run_l rep2 same2 -o rout --manifest rep.jsonl -v
if grep -q '"status":"replaced"' rep.jsonl && grep -q '^replaced .*(it had less)$' rep2.out &&
	summary rep2 | grep -q ': 1 written (1 replaced), 0 kept;'; then
	ok "manifest: an output with less, replaced: status replaced, and the summary says so"
else
	not_ok "manifest: an output with less, replaced: status replaced" "$(cat rep.jsonl)" "$(cat rep2.out rep2.err)"
fi
# Shards: each build ID is an output in one shard and "other shard" in the other.
run_l sh1 "${GOOD[@]}" -o shout --shard 1/2 --manifest sh1.jsonl
run_l sh2 "${GOOD[@]}" -o shout --shard 2/2 --manifest sh2.jsonl
"$PYTHON" - sh1.jsonl sh2.jsonl <<'EOF' >shard.check
import json, sys
a = {json.loads(l)["build_id"]: json.loads(l) for l in open(sys.argv[1]) if "build_id" in l}
b = {json.loads(l)["build_id"]: json.loads(l) for l in open(sys.argv[2]) if "build_id" in l}
bad = [k for k in a if sorted([a[k].get("reason", "out"), b.get(k, {}).get("reason", "out")]) != ["other shard", "out"]]
print("%d build IDs" % len(a) if len(a) == 4 and set(a) == set(b) and not bad else "problem: %s / %s %s" % (a, b, bad))
EOF
if ! grep -q '^problem' shard.check; then
	ok "manifest: --shard: each build ID is an output in one shard's manifest, 'other shard' in the other's"
else
	not_ok "manifest: --shard: each build ID is an output in one shard, 'other shard' in the other" "$(cat shard.check)"
fi
# Every field and every value of status and reason is in the man page's MANIFEST section.
section=$(sed -n '/^\.SH MANIFEST/,/^\.SH [^M]/p' "$MAN")
words=$(cat m1.jsonl rep.jsonl sh1.jsonl | "$PYTHON" -c '
import json, sys
w = set()
for l in sys.stdin:
    r = json.loads(l)
    for k, v in r.items():
        w.add(k)
        if isinstance(v, dict):
            w.update(v)
        if k in ("status", "reason"):
            w.add(v)
print("\n".join(sorted(w)))')
undocumented=
while IFS= read -r word; do
	grep -q -F -- "$(printf '%s' "$word" | sed 's/-/\\-/g')" <<<"$section" || undocumented+=" '$word'"
done <<<"$words"
# (reason, error and input: the lines of what has no output, which must be there.)
if [ -n "$section" ] && [ -z "$undocumented" ] && [ "$(grep -c -x -e reason -e error -e input <<<"$words")" -eq 3 ]; then
	ok "manifest: every field, status and reason is in lidiagen.1's MANIFEST section ($(echo "$words" | wc -l) words)"
else
	not_ok "manifest: every field, status and reason is in lidiagen.1's MANIFEST section" "missing:$undocumented"
fi
