#!/usr/bin/env bash
# A CI step with no surprises (issue 23): an empty tree is a warning (a
# failure with --strict), a path that does not exist stays an error; an
# output directory inside the input tree is not read as input, and the run
# says so; a dry run predicts the real run: its statuses, warnings and exit
# status (with --strict), and prints its plan without -v.
set -u
. "$(dirname "$0")/lib/common.sh"

L=$LIDIAGEN
w=$(scratch work)
cd "$w" || exit 1

mkdir -p dist empty
printf 'int f(int x) { return x * 3; }\nint main(int c, char **v) { (void)v; return f(c); }\n' >a.c
if ! cc -g -O2 -Wl,--build-id -o dist/good a.c 2>cc.err ||
	! cc -O2 -Wl,--build-id=none -o dist/nobid a.c 2>>cc.err ||
	! cc -O2 -Wl,--build-id=sha1 -o dist/bare a.c 2>>cc.err ||
	! cc -O2 -shared -fPIC -Wl,--build-id -o dist/libdyn.so a.c 2>>cc.err; then
	not_ok "ci step: the test programs build" "$(first_lines 5 cc.err)"
	exit 0
fi
strip dist/bare dist/libdyn.so

run() { # NAME ARGS...: lidiagen ARGS; RC, NAME.out, NAME.err
	local n=$1
	shift
	"$L" "$@" >"$n.out" 2>"$n.err" </dev/null
	RC=$?
}

# ---- an empty tree, a missing one ------------------------------------------------------

run e -r empty -o eout
if [ "$RC" -eq 0 ] && grep -qx 'lidiagen: warning: empty: no input file found: nothing to convert' e.err &&
	tail -n 1 e.err | grep -q '; 1 warning; 0 failed$'; then
	ok "ci step: an empty tree: exit 0 and a warning naming it"
else
	not_ok "ci step: an empty tree: exit 0 and a warning naming it" "exit $RC" "$(cat e.err)"
fi
run es -r empty -o eout --strict
if [ "$RC" -eq 1 ] && grep -qx 'lidiagen: empty: no input file found: nothing to convert' es.err; then
	ok "ci step: an empty tree with --strict: exit 1"
else
	not_ok "ci step: an empty tree with --strict: exit 1" "exit $RC" "$(cat es.err)"
fi
run m -r missing -o mout
if [ "$RC" -eq 1 ] && grep -qx 'lidiagen: missing: No such file or directory' m.err &&
	! grep -q 'no input file found' m.err; then
	ok "ci step: a path that does not exist stays an error (exit 1), no second line about it"
else
	not_ok "ci step: a path that does not exist stays an error" "exit $RC" "$(cat m.err)"
fi

# ---- the output inside the input tree --------------------------------------------------

run o1 -r dist -o dist/out
run o2 -r dist -o dist/out
files1=$(tail -n 1 o1.err | sed 's/ files,.*//; s/.* //') files2=$(tail -n 1 o2.err | sed 's/ files,.*//; s/.* //')
if [ "$RC" -eq 0 ] && [ "$files1" = "$files2" ] &&
	grep -qx 'lidiagen: dist/out: the output directory (-o), not read as input' o2.err &&
	[ "$(grep -c 'the output directory' o2.err)" -eq 1 ]; then
	ok "ci step: -o inside the input tree: not walked ($files2 files both runs), said once"
else
	not_ok "ci step: -o inside the input tree: not walked, said once" "exit $RC" "$(cat o1.err)" "$(cat o2.err)"
fi

# ---- a dry run predicts the real run --------------------------------------------------

run d -r dist -o real --dry-run --strict --manifest d.json
dry_rc=$RC
run r -r dist -o real --strict --manifest r.json
statuses() { # the manifest's build IDs and statuses, would-* as the real words
	"$PYTHON" -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "build_id" in r or ("input" in r and "status" in r):
        s = {"would-write": "converted", "would-upload": "uploaded"}.get(r["status"], r["status"])
        print(r.get("build_id", r.get("input")), s, r.get("reason", ""))
' "$1" | sort
}
warns() { grep -v -e '^lidiagen: dry run: ' -e '^lidiagen: [0-9]* file' -e '^lidiagen: --strict' "$1" | sort; }
if [ "$dry_rc" -eq "$RC" ] && [ "$(statuses d.json)" = "$(statuses r.json)" ] &&
	[ "$(warns d.err)" = "$(warns r.err)" ] && [ -n "$(warns r.err)" ]; then
	ok "ci step: a dry run gives the real run's statuses, warnings ($(warns r.err | wc -l)) and exit status ($RC, --strict)"
else
	not_ok "ci step: a dry run gives the real run's statuses, warnings and exit status" \
		"exit: dry $dry_rc, real $RC" "$(diff <(statuses d.json) <(statuses r.json))" \
		"$(diff <(warns d.err) <(warns r.err))"
fi
rm -rf new
run dn dist/good -o new --dry-run --strict
if [ "$RC" -eq 0 ] && grep -q '^would write new/symbolizer/anonymous/[0-9a-f]* (symbols+lines+inlines)$' dn.out &&
	[ ! -e new ]; then
	ok "ci step: --dry-run --strict on a new target: exit 0, its plan printed without -v, nothing written"
else
	not_ok "ci step: --dry-run --strict on a new target: exit 0, its plan printed" "exit $RC" \
		"stdout: $(cat dn.out)" "$(cat dn.err)"
fi

# ---- '-': an archive on standard input ---------------------------------------------------

tar cf - -C dist good bare | "$L" - -o sin --manifest sin.json >sin.out 2>sin.err
RC=$?
if [ "$RC" -eq 0 ] && [ -f "sin/symbolizer/anonymous/$(build_id dist/good)" ] &&
	grep -q '"inputs":\["/dev/stdin!good"\]' sin.json && grep -q '^lidiagen: warning: /dev/stdin!bare: nothing to symbolize' sin.err; then
	ok "ci step: '-': a tar piped in is converted, its members named /dev/stdin!MEMBER"
else
	not_ok "ci step: '-': a tar piped in is converted" "exit $RC" "$(cat sin.err)" "$(ls -R sin 2>&1 | head -5)"
fi
tar cf - -C dist good | gzip | "$L" - -o sgz >sgz.out 2>sgz.err
RC=$?
if [ "$RC" -eq 0 ] && [ -f "sgz/symbolizer/anonymous/$(build_id dist/good)" ]; then
	ok "ci step: '-': a .tar.gz piped in"
else
	not_ok "ci step: '-': a .tar.gz piped in" "exit $RC" "$(cat sgz.err)"
fi
cat dist/good | "$L" - -o self >self.out 2>self.err
RC=$?
if [ "$RC" -eq 0 ] && [ -f "self/symbolizer/anonymous/$(build_id dist/good)" ]; then
	ok "ci step: '-': an ELF file piped in"
else
	not_ok "ci step: '-': an ELF file piped in" "exit $RC" "$(cat self.err)"
fi
tar cf - -C dist good | "$L" - - -o two >two.out 2>two.err
RC=$?
if [ "$RC" -eq 2 ] && grep -q '^lidiagen: -: standard input given twice$' two.err; then
	ok "ci step: '-' twice is a usage error"
else
	not_ok "ci step: '-' twice is a usage error" "exit $RC" "$(cat two.err)"
fi

# ---- the summary counts in words ------------------------------------------------------

run one dist/good -o one
if tail -n 1 one.err | grep -q '^lidiagen: 1 file, 1 ELF, 1 build ID: 1 written, 0 kept'; then
	ok "ci step: the summary of one file says '1 file, 1 ELF, 1 build ID'"
else
	not_ok "ci step: the summary of one file says '1 file, 1 ELF, 1 build ID'" "$(tail -n 1 one.err)"
fi
