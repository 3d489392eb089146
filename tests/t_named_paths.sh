#!/usr/bin/env bash
# Paths an input names (a .gnu_debuglink name, a .gnu_debugaltlink path, a
# split unit's DW_AT_dwo_name) are opened only when they are regular files:
# a FIFO there must not hang the run, a device must not be read. Each is
# refused with one warning naming the input and the path, and the rest of
# the input is converted; --no-debug-search opens none of them. Every run
# is bounded by timeout: a hang fails the check instead of the suite.
set -u
. "$(dirname "$0")/lib/common.sh"

L=$LIDIAGEN
w=$(scratch work)

cat >"$w/prog.c" <<'SRC'
static int helper(int x) { return x * 7 + 1; }
int work(int x) { return helper(x) + helper(x + 1); }
int main(int c, char **v) { (void)v; return work(c); }
SRC

# bounded WHAT WANT_WARN ARGS...: lidiagen ARGS... -o $w/out ends within 30 s with
# exit 0, writes a file, and says WANT_WARN (an extended regex) on exactly one
# line; WANT_WARN "-" wants no line naming a file under $w/trap.
bounded() {
	local what=$1 want=$2 rc n
	shift 2
	rm -rf "$w/out"
	timeout 30 "$L" "$@" -o "$w/out" >"$w/run.out" 2>"$w/run.err" </dev/null
	rc=$?
	if [ "$want" = - ]; then
		n=$(grep -c "$w/trap" "$w/run.err")
		[ "$n" -eq 0 ] && n=1
	else
		n=$(grep -cE "$want" "$w/run.err")
	fi
	if [ "$rc" -eq 124 ]; then
		not_ok "$what" "hung: killed after 30 s"
	elif [ "$rc" -ne 0 ] || [ "$n" -ne 1 ] || [ -z "$(find "$w/out" -type f 2>/dev/null)" ]; then
		not_ok "$what" "exit $rc, $n matching lines" "$(first_lines 6 "$w/run.err")"
	else
		ok "$what"
	fi
}

mkdir -p "$w/trap"

# ---- .gnu_debuglink: a name looked for beside the binary -------------------------------
if gcc -O2 -g -Wl,--build-id -o "$w/trap/linked" "$w/prog.c" 2>"$w/cc.err" &&
	objcopy --only-keep-debug "$w/trap/linked" "$w/trap/linked.debug" &&
	objcopy --strip-debug --add-gnu-debuglink="$w/trap/linked.debug" \
		"$w/trap/linked" "$w/trap/linked.stripped"; then
	mv "$w/trap/linked.stripped" "$w/trap/linked"
	rm -f "$w/trap/linked.debug" && mkfifo "$w/trap/linked.debug"
	bounded "a debug link naming a FIFO: not opened, one warning naming both" \
		"linked: '$w/trap/linked.debug' is not a regular file, not opened" "$w/trap/linked"
	rm -f "$w/trap/linked.debug" && ln -s /dev/zero "$w/trap/linked.debug"
	bounded "a debug link naming a device (a link to /dev/zero): not read, one warning" \
		"linked: '$w/trap/linked.debug' is not a regular file, not opened" "$w/trap/linked"
	rm -f "$w/trap/linked.debug"
else
	not_ok "debug link: the test program builds" "$(cat "$w/cc.err")"
fi

# ---- .gnu_debugaltlink: a path dwz writes into the binary --------------------------------
if gcc -O2 -g -Wl,--build-id -o "$w/trap/a1" "$w/prog.c" 2>"$w/cc.err" &&
	gcc -O1 -g -Wl,--build-id -o "$w/trap/a2" "$w/prog.c" 2>>"$w/cc.err" &&
	dwz -m "$w/trap/common.dwz" -M "$w/trap/alt.fifo" "$w/trap/a1" "$w/trap/a2" 2>>"$w/cc.err" &&
	readelf -S "$w/trap/a1" | grep -q gnu_debugaltlink; then
	mkfifo "$w/trap/alt.fifo"
	bounded "a dwz altlink naming a FIFO: not opened, one warning naming it" \
		"a1: '$w/trap/alt.fifo' is not a regular file, not opened" "$w/trap/a1"
	bounded "--no-debug-search: the altlink's FIFO is not even looked at (inline frames left out)" \
		"a1: without its dwz file, inline frames are left out" --no-debug-search "$w/trap/a1"
	if grep -q "not a regular file" "$w/run.err"; then
		not_ok "--no-debug-search: nothing says the altlink's FIFO was tried" "$(first_lines 4 "$w/run.err")"
	else
		ok "--no-debug-search: nothing says the altlink's FIFO was tried"
	fi
else
	skip "altlink: dwz made no supplementary file here ($(tail -n 1 "$w/cc.err"))"
fi

# ---- DW_AT_dwo_name: a split unit's file -------------------------------------------------
if (cd "$w/trap" && gcc -O2 -g -gsplit-dwarf -c -o split.o "$w/prog.c" 2>"$w/cc.err") &&
	gcc -Wl,--build-id -o "$w/trap/split" "$w/trap/split.o" 2>>"$w/cc.err" &&
	[ -f "$w/trap/split.dwo" ]; then
	rm -f "$w/trap/split.dwo" && mkfifo "$w/trap/split.dwo"
	bounded "a split unit's .dwo that is a FIFO: not opened, one warning naming it" \
		"split: split DWARF unit '$w/trap/split.dwo' is not a regular file" "$w/trap/split"
	bounded "--no-debug-search: a split unit's FIFO is not even looked at" - \
		--no-debug-search "$w/trap/split"
else
	not_ok "split DWARF: the test program builds" "$(cat "$w/cc.err")"
fi

# ---- an index's paths: what is there now is opened only if it is a regular file ----------
mkdir -p "$w/ix/dist"
if gcc -O2 -g -Wl,--build-id -o "$w/ix/dist/app" "$w/prog.c" 2>"$w/cc.err" &&
	(cd "$w/ix" && "$L" index -q -r dist -o index.jsonl 2>"$w/ix.err"); then
	# The file becomes a FIFO, and the index is edited to describe the FIFO as it stands.
	rm -f "$w/ix/dist/app" && mkfifo "$w/ix/dist/app"
	mt=$(stat -c %Y "$w/ix/dist/app")
	"$PYTHON" - "$w/ix/index.jsonl" "$mt" <<'PY'
import json, sys
path, mtime = sys.argv[1], int(sys.argv[2])
out = []
for line in open(path):
    rec = json.loads(line)
    if "size" in rec and "type" in rec:
        rec["size"], rec["mtime_ns"] = 0, mtime * 1000000000
    out.append(json.dumps(rec, separators=(",", ":")))
open(path, "w").write("\n".join(out) + "\n")
PY
	rm -rf "$w/ix/out"
	(cd "$w/ix" && timeout 30 "$L" --index index.jsonl -o out >"$w/run.out" 2>"$w/run.err" </dev/null)
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q "dist/app: .*not a regular file" "$w/run.err"; then
		ok "an index naming what is now a FIFO: not opened, one line naming it, exit 1"
	else
		not_ok "an index naming what is now a FIFO: not opened, one line naming it, exit 1" \
			"exit $rc$([ "$rc" -eq 124 ] && echo ': hung, killed after 30 s')" \
			"$(first_lines 5 "$w/run.err")"
	fi
else
	not_ok "index: the test program builds and is indexed" "$(cat "$w/cc.err" "$w/ix.err" 2>/dev/null)"
fi
