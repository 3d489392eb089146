#!/usr/bin/env bash
# Paths in the output tree (issue 21, parts 4 and 5): nothing below -o is
# reached through a symbolic link (a link as a directory of a key, deeper,
# or as the key itself fails its group naming the link, exit 1, nothing
# written nor removed outside; the same with openat2 taken away, as on
# kernels before 5.6); `lidiagen upload` neither reads nor publishes
# through a link in its tree, and says so; the stale-temp cleaner removes
# only lidiagen's own marked names (.NAME.lidiagen.tmp.XXXXXX), never a
# user's file nor one without the mark; bad --layout-template values are
# usage errors (exit 2, one line naming the problem, nothing written), and
# good ones still work.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/fake_s3.sh"

L=$LIDIAGEN
w=$(scratch work)

printf 'int work(int x) { return x * 3; }\nint main(int c, char **v) { (void)v; return work(c); }\n' \
	>"$w/tiny.c"
if ! gcc -O2 -g -Wl,--build-id=sha1 -o "$w/tiny" "$w/tiny.c" 2>"$w/cc.err" ||
	! gcc -shared -fPIC -O2 -o "$w/no_openat2.so" "$TESTS_LIB/no_openat2.c" -ldl 2>>"$w/cc.err"; then
	not_ok "output paths: the test program and the shim build" "$(cat "$w/cc.err")"
	exit 0
fi
ID=$(build_id "$w/tiny")
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

# What is under DIR, every file with its bytes' hash: compared before and after.
snapshot() { (cd "$1" && find . -printf '%p %y %s\n' | sort && find . -type f -exec sha256sum {} + | sort); }

# link_case WHAT LINK_REL TARGET_REL PRELOAD: $d/out with the link LINK_REL
# (relative to out) to TARGET_REL (relative to the link's directory), over
# $d/outside holding a temp-looking file of each pattern and a file at the
# key's place; the run must fail (exit 1) naming out/LINK_REL, and leave
# $d/outside as it was.
link_case() {
	local what=$1 link=$2 target=$3 preload=$4 before after
	d=$w/case$((++n))
	mkdir -p "$d/outside/anonymous" "$d/out/$(dirname "$link")"
	printf 'user data\n' >"$d/outside/anonymous/.x.tmp.abcdef"
	printf 'user data\n' >"$d/outside/anonymous/.$ID.lidiagen.tmp.abcdef"
	printf 'not to be overwritten\n' >"$d/outside/anonymous/$ID"
	printf 'not to be overwritten\n' >"$d/outside/target"
	ln -s "$target" "$d/out/$link"
	before=$(snapshot "$d/outside")
	run "$d/run" env ${preload:+LD_PRELOAD="$preload"} "$L" -j 1 "$w/tiny" -o "$d/out"
	after=$(snapshot "$d/outside")
	if [ "$RC" -eq 1 ] && grep -q "$d/out/$link: a symbolic link inside the output tree, not followed" \
		"$d/run.err" && [ "$before" = "$after" ] && [ -z "$(find "$d/out" -type f)" ]; then
		ok "$what: exit 1, the link named, nothing written or removed outside -o"
	else
		not_ok "$what: exit 1, the link named, nothing written or removed outside -o" "exit $RC" \
			"stderr: $(first_lines 4 "$d/run.err")" "outside now: $(cd "$d/outside" && find . | sort | tr '\n' ' ')" \
			"files in out: $(find "$d/out" -type f | tr '\n' ' ')"
	fi
}

n=0
for way in openat2 walk; do
	shim=
	[ "$way" = walk ] && shim=$w/no_openat2.so
	link_case "$way: out/symbolizer a link to a directory outside" symbolizer ../outside "$shim"
	link_case "$way: out/symbolizer/anonymous a link (a deeper element)" symbolizer/anonymous \
		../../outside/anonymous "$shim"
	link_case "$way: the key itself a link to a file outside" "symbolizer/anonymous/$ID" \
		../../../outside/target "$shim"
done

# The -o directory itself may be a link: the user named it, and it is followed.
d=$w/top
mkdir -p "$d/real"
ln -s real "$d/out"
run "$d/run" "$L" -j 1 "$w/tiny" -o "$d/out"
if [ "$RC" -eq 0 ] && [ -f "$d/real/symbolizer/anonymous/$ID" ]; then
	ok "-o itself a link: followed (the user named it), the output written there"
else
	not_ok "-o itself a link: followed, the output written there" "exit $RC" \
		"stderr: $(first_lines 3 "$d/run.err")"
fi

# ---- the stale-temp cleaner: lidiagen's own marked names only ----

d=$w/clean
a=$d/out/symbolizer/anonymous
mkdir -p "$a"
mine=$a/.$ID.lidiagen.tmp.Ab12Cd
lock=$a/.$ID.lidiagen.tmp.locked
users=("$a/.foo.tmp.bar" "$a/.notes.tmp.backup" "$a/.$ID.tmp.abcdef" "$a/.x.lidiagen.tmp.toolong7"
	"$a/..$ID.lidiagen.tmp.Ab12Cd")
for f in "$mine" "$lock" "${users[@]}"; do printf 'x\n' >"$f"; done
run "$d/run" "$L" -j 1 "$w/tiny" -o "$d/out"
left=
for f in "${users[@]}"; do [ -e "$f" ] || left="$left $(basename "$f")"; done
if [ "$RC" -eq 0 ] && [ ! -e "$mine" ] && [ ! -e "$lock" ] && [ -z "$left" ]; then
	ok "cleaner: a killed run's marked temp file and lock removed, users' look-alikes (.foo.tmp.bar, .NAME.tmp.abcdef without the mark) kept"
else
	not_ok "cleaner: only lidiagen's marked names removed" "exit $RC" \
		"own temp left: $([ -e "$mine" ] && echo yes || echo no), lock left: $([ -e "$lock" ] && echo yes || echo no)" \
		"users' files removed:${left:- none}"
fi

# A real leftover: a run killed mid-rename (tests/lib/slow_rename.c), then the next run.
if gcc -shared -fPIC -O2 -o "$w/slow.so" "$TESTS_LIB/slow_rename.c" -ldl 2>"$w/slow.err"; then
	d=$w/killed
	mkdir -p "$d"
	env SLOW_RENAME_TO=symbolizer/ SLOW_RENAME_READY="$d/ready" \
		LD_PRELOAD="$w/slow.so" "$L" -j 1 "$w/tiny" -o "$d/out" >/dev/null 2>&1 </dev/null &
	pid=$!
	for _ in $(seq 200); do [ -e "$d/ready" ] && break; sleep 0.05; done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	before=$(find "$d/out" -name '.*.lidiagen.tmp.*' | wc -l)
	run "$d/run" "$L" -j 1 -v "$w/tiny" -o "$d/out"
	after=$(find "$d/out" -name '.*.tmp.*' | wc -l)
	if [ "$before" -ge 1 ] && [ "$after" -eq 0 ] && [ "$RC" -eq 0 ] &&
		grep -q 'removed [0-9]* temporary files of an unfinished run' "$d/run.err"; then
		ok "cleaner: the marked files a SIGKILLed run left ($before) are removed by the next run"
	else
		not_ok "cleaner: the marked files a SIGKILLed run left are removed by the next run" \
			"before: $before, after: $after, exit $RC" "stderr: $(first_lines 3 "$d/run.err")"
	fi
else
	not_ok "the slow_rename shim builds" "$(cat "$w/slow.err")"
fi

# ---- templates: checked whole, up front ----

bad_template() {
	local what=$1 t=$2 want=$3
	d=$w/tpl$((++n))
	mkdir -p "$d"
	run "$d/run" "$L" -j 1 "$w/tiny" -o "$d/out" --layout-template "$t"
	if [ "$RC" -eq 2 ] && grep -q -- "--layout-template: '.*$want" "$d/run.err" && [ ! -e "$d/out" ]; then
		ok "template $what ('$t'): usage error (exit 2), said, nothing written"
	else
		not_ok "template $what ('$t'): usage error (exit 2), said, nothing written" "exit $RC" \
			"stderr: $(first_lines 3 "$d/run.err")" "out: $(find "$d/out" 2>/dev/null | tr '\n' ' ')"
	fi
}
bad_template "an element like a temp file" '.{build_id}.tmp.{tenant}' "beginning with '.'"
bad_template "a hidden element" 'x/.{build_id}' "beginning with '.'"
bad_template "doubled braces" '{{build_id}}' "opens no field"
bad_template "an unclosed brace" 'x/{build_id' "opens no field"
bad_template "a stray closing brace" '{build_id}}' "closes no field"
bad_template "an unknown field" 'x/{buildid}/{build_id}' "'{buildid}': an unknown field"
bad_template "an empty element" 'x//{build_id}' "an empty element"
bad_template "a trailing slash" '{build_id}/' "an empty element"
bad_template "'..'" '../{build_id}' "'..': an element '.' or '..'"
bad_template "'.'" './{build_id}' "an element '.' or '..'"
bad_template "an absolute path" '/tmp/{build_id}' "an absolute path"
bad_template "no {build_id}" 'x/{tenant}' "no {build_id}"

# The template's outputs are never taken for temp files by the next run.
d=$w/tpl-good
run "$d-1" "$L" -j 1 "$w/tiny" -o "$d" --layout-template 'sym/{tenant}/{build_id}.tmp.lidia' --tenant prod01
run "$d-2" "$L" -j 1 "$w/tiny" -o "$d" --layout-template 'sym/{tenant}/{build_id}.tmp.lidia' --tenant prod01
if [ "$RC" -eq 0 ] && [ -f "$d/sym/prod01/$ID.tmp.lidia" ] && "$L" verify -q "$d/sym/prod01/$ID.tmp.lidia" >/dev/null 2>&1; then
	ok "a good template ('sym/{tenant}/{build_id}.tmp.lidia') writes its key, and a second run keeps it"
else
	not_ok "a good template writes its key, and a second run keeps it" "exit $RC" \
		"stderr: $(first_lines 3 "$d-1.err") $(first_lines 3 "$d-2.err")" "files: $(find "$d" | tr '\n' ' ')"
fi

# ---- lidiagen upload: no link in its tree followed ----

d=$w/up
fake_s3_env "$d"
export AWS_ACCESS_KEY_ID=AKIDPATHS AWS_SECRET_ACCESS_KEY=paths-secret
fake_s3_start "$d/srv" --access-key AKIDPATHS --secret-key paths-secret --bucket rel
mkdir -p "$d/tree/symbolizer/anonymous" "$d/outside"
"$L" -q -j 1 "$w/tiny" -o "$d/outside" >/dev/null 2>&1
cp "$d/outside/symbolizer/anonymous/$ID" "$d/tree/symbolizer/anonymous/$ID"
fake=0123456789abcdef0123456789abcdef01234567
ln -s "../../../outside/symbolizer/anonymous/$ID" "$d/tree/symbolizer/anonymous/$fake"
ln -s ../../outside/symbolizer/anonymous "$d/tree/symbolizer/other"
run "$d/run" "$L" upload -j 1 --manifest "$d/m.jsonl" "$d/tree" s3://rel/p --endpoint-url "$FAKE_S3_URL"
if [ "$RC" -eq 1 ] && fake_s3_object rel "p/symbolizer/anonymous/$ID" "$d/got" &&
	! fake_s3_object rel "p/symbolizer/anonymous/$fake" "$d/got2" &&
	! fake_s3_object rel "p/symbolizer/other/$ID" "$d/got3" &&
	grep -q "tree/symbolizer/anonymous/$fake: a symbolic link inside the output tree, not followed: not uploaded" "$d/run.err" &&
	grep -q "tree/symbolizer/other: a symbolic link" "$d/run.err"; then
	ok "upload: links in the tree (to a file, to a directory outside) not published, each named, exit 1; the real file sent"
else
	not_ok "upload: links in the tree not published, each named, exit 1; the real file sent" "exit $RC" \
		"stderr: $(first_lines 5 "$d/run.err")" \
		"link's key published: $(fake_s3_object rel "p/symbolizer/anonymous/$fake" /dev/null && echo yes || echo no)"
fi
