#!/usr/bin/env bash
# Signals and the files lidiagen writes: a run killed (SIGTERM, SIGINT)
# while it writes an output, the state or the manifest leaves no temporary
# file (.*.tmp.*) anywhere, nor its own directory of dwz files in TMPDIR;
# and every file it writes honours the umask.
# The run is stopped at the rename of a temporary file by an LD_PRELOAD shim
# (tests/lib/slow_rename.c), so that the signal always comes mid-write.
set -u
. "$(dirname "$0")/lib/common.sh"

L=$LIDIAGEN
w=$(scratch work)

printf 'int work(int x) { return x * 3; }\nint main(int c, char **v) { (void)v; return work(c); }\n' \
	>"$w/tiny.c"
if ! gcc -O2 -g -Wl,--build-id=sha1 -o "$w/tiny" "$w/tiny.c" 2>"$w/cc.err" ||
	! gcc -O2 -g -Wl,--build-id=md5 -o "$w/other" "$w/tiny.c" 2>>"$w/cc.err" ||
	! gcc -O0 -g -Wl,--build-id=sha1 -o "$w/third" "$w/tiny.c" 2>>"$w/cc.err" ||
	! gcc -shared -fPIC -O2 -o "$w/slow.so" "$TESTS_LIB/slow_rename.c" -ldl 2>>"$w/cc.err"; then
	not_ok "signals: the test programs and the shim build" "$(cat "$w/cc.err")"
	exit 0
fi
# ASan must come first among the libraries unless told otherwise.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

temps_in() { find "$@" -name '.*.tmp.*' 2>/dev/null; }

# killed WHAT SIGNAL WANT_RC TO ARGS...: run lidiagen ARGS... (writing under
# $d, which the caller sets, and which is made afresh here with $d/side/ in it),
# stopped at the rename of a temporary file to a path containing TO; send
# SIGNAL; it must end with WANT_RC (128 + the signal) and leave no
# temporary file under $d.
killed() {
	local what=$1 sig=$2 want=$3 to=$4
	shift 4
	rm -rf "$d" && mkdir -p "$d/side"
	# A script's background job starts with SIGINT ignored: give it back its default.
	env --default-signal=INT,TERM SLOW_RENAME_TO="$to" SLOW_RENAME_READY="$d/ready" \
		LD_PRELOAD="$w/slow.so" "$L" "$@" >"$d/run.out" 2>"$d/run.err" </dev/null &
	local pid=$! live=
	for _ in $(seq 200); do [ -e "$d/ready" ] && break; sleep 0.05; done
	[ -e "$d/ready" ] && live=$(temps_in "$d")
	kill -s "$sig" "$pid"
	wait "$pid"
	local rc=$? left
	left=$(temps_in "$d")
	if [ -n "$live" ] && [ "$rc" -eq "$want" ] && [ -z "$left" ]; then
		ok "$what: killed by SIG$sig mid-write (exit $rc), no temporary file left"
	else
		not_ok "$what: killed by SIG$sig mid-write, no temporary file left" "exit $rc (want $want)" \
			"live before the signal: ${live:-none (the run never reached a rename)}" \
			"left: ${left:-none}" "stderr: $(first_lines 3 "$d/run.err")"
	fi
}

d=$w/k1
killed "an output, one job" TERM 143 symbolizer/ -j 1 "$w/tiny" -o "$d/out"
d=$w/k2
killed "outputs, two jobs" INT 130 symbolizer/ -j 2 "$w/tiny" "$w/other" "$w/third" -o "$d/out"
d=$w/k3
killed "the state" INT 130 side/state -j 1 "$w/tiny" -o "$d/out" --state "$d/side/state"
d=$w/k4
killed "the manifest" TERM 143 side/m.jsonl -j 1 "$w/tiny" -o "$d/out" --manifest "$d/side/m.jsonl"

# The run's own directory in TMPDIR (its dwz files: a member copied, a
# file linked) goes too. Two programs share common.dwz; the run stops at
# its first output, once the directory is made.
if command -v dwz >/dev/null 2>&1 && gcc -O2 -g -Wl,--build-id -o "$w/dz1" "$w/tiny.c" 2>"$w/dz.err" &&
	gcc -O1 -g -Wl,--build-id -o "$w/dz2" "$w/tiny.c" 2>>"$w/dz.err" &&
	(cd "$w" && dwz -m common.dwz dz1 dz2) 2>>"$w/dz.err" && [ -s "$w/common.dwz" ] &&
	tar -C "$w" -cf "$w/dz.tar" dz1 common.dwz; then
	d=$w/k5
	rm -rf "$d" "$w/k5tmp" && mkdir -p "$d" "$w/k5tmp"
	env --default-signal=INT,TERM TMPDIR="$w/k5tmp" SLOW_RENAME_TO=symbolizer/ \
		SLOW_RENAME_READY="$d/ready" LD_PRELOAD="$w/slow.so" \
		"$L" -j 1 "$w/dz.tar" "$w/common.dwz" "$w/dz2" -o "$d/out" >"$d/run.out" 2>"$d/run.err" </dev/null &
	pid=$!
	for _ in $(seq 200); do [ -e "$d/ready" ] && break; sleep 0.05; done
	made=$(find "$w/k5tmp" -mindepth 1 2>/dev/null | wc -l)
	kill -s TERM "$pid"
	wait "$pid"
	rc=$?
	if [ "$made" -ge 4 ] && [ "$rc" -eq 143 ] && [ -z "$(ls -A "$w/k5tmp")" ]; then
		ok "the run's directory of dwz files ($made entries) goes with it on SIGTERM"
	else
		not_ok "the run's directory of dwz files goes with it on SIGTERM" "exit $rc (want 143)" \
			"entries before the signal: $made" "left: $(find "$w/k5tmp" -mindepth 1)" \
			"stderr: $(first_lines 3 "$d/run.err")"
	fi
else
	not_ok "signals: two programs dwz'd with a common file (dwz installed in CI)" "$(first_lines 5 "$w/dz.err")"
fi

# A signal the run was started ignoring stays ignored: it goes on to the end.
d=$w/ignored
rm -rf "$d" && mkdir -p "$d"
(trap '' TERM && exec env SLOW_RENAME_READY="$d/ready" LD_PRELOAD="$w/slow.so" \
	"$L" -j 1 "$w/tiny" -o "$d/out" >"$d/run.out" 2>"$d/run.err" </dev/null) &
pid=$!
for _ in $(seq 200); do [ -e "$d/ready" ] && break; sleep 0.05; done
kill -s TERM "$pid"
# The shim sleeps 30 s in the rename: too long to wait for here; the signal
# must not have killed it, which shows at once.
sleep 0.5
if kill -0 "$pid" 2>/dev/null; then
	ok "a SIGTERM the run was started ignoring does not end it"
else
	wait "$pid"
	not_ok "a SIGTERM the run was started ignoring does not end it" "exit $?"
fi
kill -s KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

# ---- the umask ----------------------------------------------------------------------------

d=$w/umask
rm -rf "$d" && mkdir -p "$d"
(umask 027 && "$L" -q -j 1 "$w/tiny" -o "$d/out" --state "$d/state" --manifest "$d/m.jsonl" \
	>"$d/run.out" 2>"$d/run.err" </dev/null)
rc=$?
modes=$(stat -c '%a %n' "$d/state" "$d/m.jsonl" "$d"/out/symbolizer/anonymous/* 2>&1 | sed "s|$d/||")
if [ "$rc" -eq 0 ] && [ "$(echo "$modes" | grep -c '^640 ')" -eq 3 ]; then
	ok "umask 027: the state, the manifest and the output are 0640"
else
	not_ok "umask 027: the state, the manifest and the output are 0640" "exit $rc" "$modes" \
		"stderr: $(first_lines 3 "$d/run.err")"
fi
d=$w/umask2
rm -rf "$d" && mkdir -p "$d"
(umask 002 && "$L" -q -j 1 "$w/tiny" -o "$d/out" --state "$d/state" --manifest "$d/m.jsonl" \
	>"$d/run.out" 2>"$d/run.err" </dev/null)
rc=$?
modes=$(stat -c '%a %n' "$d/state" "$d/m.jsonl" "$d"/out/symbolizer/anonymous/* 2>&1 | sed "s|$d/||")
if [ "$rc" -eq 0 ] && [ "$(echo "$modes" | grep -c '^664 ')" -eq 3 ]; then
	ok "umask 002: the state, the manifest and the output are 0664"
else
	not_ok "umask 002: the state, the manifest and the output are 0664" "exit $rc" "$modes" \
		"stderr: $(first_lines 3 "$d/run.err")"
fi
