#!/usr/bin/env bash
# Concurrent publishers of one build ID (issue 20, part 5): a symbols-only
# job and a DWARF job (inline frames and lines) run at once, with random
# start offsets, and the DWARF object must be under the key after every
# round, whoever comes last: against tests/tools/fake_s3.py honouring S3's
# conditional writes (If-None-Match, If-Match) as AWS documents them,
# against the same fake ignoring them (as s3rver does: lidiagen reads each
# write back), and into a tree on disk (the key's lock). Then the paths
# one at a time, made certain with the fake's fault plan: a 412 (another
# publisher came first) makes lidiagen look again and decide again, a 409
# is tried again, an If-Match on a key deleted meanwhile becomes a create,
# and an object holding as much is kept, not replaced. The DWARF object is
# proven the line-level one by llvm-symbolizer on the same binary.
# tests/t_s3rver_race.sh races the same jobs against s3rver itself.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/fake_s3.sh"
. "$TESTS_LIB/race.sh"

L=$LIDIAGEN
w=$(scratch work)
fake_s3_env "$w"
ROUNDS=${RACE_ROUNDS:-20}
export AWS_ACCESS_KEY_ID=AKIDRACE AWS_SECRET_ACCESS_KEY=race-secret

race_jobs race || exit 0
# A second build ID, for runs that write twice.
if ! gcc -O2 -g -Wl,--build-id=0x6666666666666666 -o "$w/p2" "$w/p.c" 2>"$w/cc.err"; then
	not_ok "race: the test program builds" "$(cat "$w/cc.err")"
	exit 0
fi
note "symbols job: $shaS, DWARF job: $shaD"

# The DWARF job's object is the one with lines and inline frames: its
# lookup of work's first instruction gives llvm-symbolizer's frames.
addr=$(nm "$w/p" | awk '$3 == "work" { print $1 }')
want=$("$LLVM_SYMBOLIZER" --obj="$w/p" "0x$addr" | awk '!NF { exit } NR % 2 { f = $0; next } { n = split($0, a, ":"); print f ":" a[n - 1] }')
got_frames() { "$L" lookup "$1" "0x$addr" | sed -n 's/^.*0x[0-9a-f]*: //; s/^ *(inlined by) //; s/ at \(.*\):\([0-9]*\)$/:\2/p'; }
if [ "$shaS" != "$shaD" ] && [ "$(got_frames "$w/dw/$key")" = "$want" ] && [ "$(printf '%s\n' "$want" | wc -l)" -eq 2 ] &&
	[ "$(got_frames "$w/sym/$key")" != "$want" ]; then
	ok "race: the DWARF job's object has llvm-symbolizer's inline frames and lines, the symbols job's not"
else
	not_ok "race: the DWARF job's object has llvm-symbolizer's inline frames and lines, the symbols job's not" \
		"llvm-symbolizer: $want" "dwarf: $(got_frames "$w/dw/$key")" "symbols: $(got_frames "$w/sym/$key")"
fi

# The jobs start up to SPREAD ms apart (tests/lib/race.sh).
SPREAD=150

# race_bucket LABEL [IGNORED]: ROUNDS rounds on the fake started last, each at a new
# prefix; IGNORED=1 when it ignores conditional writes (judge_round).
race_bucket() {
	local label=$1 ignored=${2:-0} i sha bad="" meanwhile=0
	for i in $(seq "$ROUNDS"); do
		race_round "$w/$label/$i" "s3://rel/$label$i" --endpoint-url "$FAKE_S3_URL"
		if fake_s3_object rel "$label$i/$key" "$w/got"; then sha=$(sha256sum <"$w/got" | cut -c1-64); else sha=; fi
		why=$(judge_round "$w/$label/$i" "$sha" uploaded "$ignored")
		[ -n "$why" ] && bad="$bad${bad:+$'\n'}round $i:$why"
		grep -q 'meanwhile' "$w/$label/$i/sym.json" && meanwhile=$((meanwhile + 1))
	done
	if [ -z "$bad" ]; then
		ok "race: $label: $ROUNDS rounds of two racing publishers end with the DWARF object, both exit 0, the manifests agree"
	else
		not_ok "race: $label: $ROUNDS rounds of two racing publishers end with the DWARF object, both exit 0, the manifests agree" "$bad"
	fi
	note "$label: the symbols job kept an object published meanwhile in $meanwhile of $ROUNDS rounds"
}

# ---- the fake, honouring conditional writes ----
fake_s3_start "$w/srv" --access-key AKIDRACE --secret-key race-secret --bucket rel
race_bucket honouring

# A round's requests, "METHOD KEY STATUS CONDITION" a line.
requests() { fake_s3_ctl GET log | "$S3_PYTHON" -c '
import json, sys
for r in json.load(sys.stdin):
    if not r["imds"] and r["method"] in ("PUT", "HEAD", "DELETE"):
        c = r["if_none_match"] and "if-none-match" or r["if_match"] and "if-match" or "-"
        print(r["method"], r["key"], r["status"], c)'; }

# one_job DIR PREFIX FAULTS ARGS...: one job with a fault plan, its requests logged.
one_job() {
	local d=$1 prefix=$2 faults=$3
	shift 3
	mkdir -p "$d"
	fake_s3_faults "$faults"
	fake_s3_clear_log
	"$L" -v -j 1 "$@" -o "s3://rel/$prefix" --endpoint-url "$FAKE_S3_URL" --manifest "$d/m.json" >"$d/out" 2>"$d/err"
	echo $? >"$d/rc"
	requests >"$d/log"
	fake_s3_faults '{}'
}
obj_sha() { fake_s3_object rel "$1/$key" "$w/got" && sha256sum <"$w/got" | cut -c1-64; }
# The DWARF object, to plant.
"$L" -q "${DW[@]}" -o s3://rel/src --endpoint-url "$FAKE_S3_URL" 2>/dev/null

# 412: the DWARF object lands just before the symbols job's create.
one_job "$w/u412" p412 "{\"plant\": 1, \"plant_from\": \"rel/src/$key\", \"race_id\": \"$bid\"}" "${SYM[@]}"
if [ "$(cat "$w/u412/rc")" = 0 ] && [ "$(obj_sha p412)" = "$shaD" ] &&
	grep -q "^PUT p412/$key 412 if-none-match" "$w/u412/log" &&
	[ "$(grep -A1 "^PUT p412/$key 412" "$w/u412/log" | sed -n 2p)" = "HEAD p412/$key 200 -" ] &&
	[ "$(status_of "$w/u412/m.json")" = "exists a stronger object was published meanwhile" ] &&
	grep -q "^exists .*(a stronger object was published meanwhile)$" "$w/u412/out"; then
	ok "race: a 412 (another publisher came first) makes lidiagen HEAD again, decide again and keep the stronger object"
else
	not_ok "race: a 412 (another publisher came first) makes lidiagen HEAD again, decide again and keep the stronger object" \
		"exit $(cat "$w/u412/rc"), object $(obj_sha p412)" "$(cat "$w/u412/log")" "$(status_of "$w/u412/m.json")" \
		"$(cat "$w/u412/out")" "$(head -5 "$w/u412/err")"
fi

# An object holding as much, other bytes: kept (the first stays), never replaced.
fake_s3_put rel "src/other/$bid" "$w/sym/$key" "x-amz-meta-lidia-holds: symbols+lines+inlines" \
	"x-amz-meta-lidia-sha256: $(printf '0%.0s' $(seq 64))" "x-amz-meta-lidia-functions: 1"
one_job "$w/ueq" peq "{\"plant\": 1, \"plant_from\": \"rel/src/other/$bid\", \"race_id\": \"$bid\"}" "${DW[@]}"
if [ "$(cat "$w/ueq/rc")" = 0 ] && [ "$(obj_sha peq)" = "$shaS" ] &&
	[ "$(status_of "$w/ueq/m.json")" = "exists an object holding as much was published meanwhile" ]; then
	ok "race: an object holding as much, published meanwhile, is kept (no flapping between equals)"
else
	not_ok "race: an object holding as much, published meanwhile, is kept (no flapping between equals)" \
		"exit $(cat "$w/ueq/rc"), object $(obj_sha peq)" "$(cat "$w/ueq/log")" "$(status_of "$w/ueq/m.json")"
fi

# 409 ConditionalRequestConflict: tried again.
one_job "$w/u409" p409 "{\"conflict\": 1, \"race_id\": \"$bid\"}" "${DW[@]}"
if [ "$(cat "$w/u409/rc")" = 0 ] && [ "$(obj_sha p409)" = "$shaD" ] &&
	[ "$(grep "^PUT p409/$key" "$w/u409/log" | cut -d' ' -f3,4 | tr '\n' ' ')" = "409 if-none-match 200 if-none-match " ]; then
	ok "race: a 409 ConditionalRequestConflict is tried again, conditionally"
else
	not_ok "race: a 409 ConditionalRequestConflict is tried again, conditionally" \
		"exit $(cat "$w/u409/rc"), object $(obj_sha p409)" "$(cat "$w/u409/log")" "$(head -5 "$w/u409/err")"
fi

# If-Match on a key deleted meanwhile (404): looked at again, then created.
"$L" -q "${SYM[@]}" -o s3://rel/pgone --endpoint-url "$FAKE_S3_URL" 2>/dev/null
one_job "$w/ugone" pgone "{\"vanish\": 1, \"race_id\": \"$bid\"}" "${DW[@]}"
if [ "$(cat "$w/ugone/rc")" = 0 ] && [ "$(obj_sha pgone)" = "$shaD" ] &&
	[ "$(grep "^PUT pgone/$key" "$w/ugone/log" | cut -d' ' -f3,4 | tr '\n' ' ')" = "404 if-match 200 if-none-match " ]; then
	ok "race: If-Match on a key deleted meanwhile (404) becomes a create (If-None-Match)"
else
	not_ok "race: If-Match on a key deleted meanwhile (404) becomes a create (If-None-Match)" \
		"exit $(cat "$w/ugone/rc"), object $(obj_sha pgone)" "$(cat "$w/ugone/log")" "$(head -5 "$w/ugone/err")"
fi

# lidiagen upload: the same rules (a tree of the symbols object, the DWARF one planted).
mkdir -p "$w/uup"
fake_s3_faults "{\"plant\": 1, \"plant_from\": \"rel/src/$key\", \"race_id\": \"$bid\"}"
"$L" upload -v --manifest "$w/uup/m.json" "$w/sym" s3://rel/pup --endpoint-url "$FAKE_S3_URL" >"$w/uup/out" 2>"$w/uup/err"
rc=$?
fake_s3_faults '{}'
if [ "$rc" = 0 ] && [ "$(obj_sha pup)" = "$shaD" ] &&
	grep -q '"status":"exists","holds":.*"reason":"a stronger object was published meanwhile"' "$w/uup/m.json"; then
	ok "race: upload keeps a stronger object published meanwhile, and its manifest says why"
else
	not_ok "race: upload keeps a stronger object published meanwhile, and its manifest says why" \
		"exit $rc, object $(obj_sha pup)" "$(cat "$w/uup/m.json")" "$(head -5 "$w/uup/err")"
fi

# The probe: once per run, before the first write, never with --dry-run; it writes nothing.
fake_s3_clear_log
"$L" -q -j 1 "${DW[@]}" "$w/p2" -o s3://rel/pprobe --endpoint-url "$FAKE_S3_URL" >/dev/null 2>&1
probes=$(requests | grep -c '^PUT pprobe/\.lidiagen-probe/.* 404 if-match$')
fake_s3_clear_log
"$L" -q --dry-run "${DW[@]}" -o s3://rel/pdry --endpoint-url "$FAKE_S3_URL" >/dev/null 2>&1
dry=$(requests | grep -c '^PUT')
if [ "$probes" = 1 ] && [ "$dry" = 0 ]; then
	ok "race: conditional writes are probed once per run (404, nothing written), not with --dry-run"
else
	not_ok "race: conditional writes are probed once per run (404, nothing written), not with --dry-run" \
		"probes: $probes, PUTs of the dry run: $dry"
fi

# ---- the fake ignoring conditional writes, as s3rver does ----
fake_s3_start "$w/srv2" --access-key AKIDRACE --secret-key race-secret --bucket rel --ignore-conditions
race_bucket ignoring 1
fake_s3_clear_log
"$L" -j 1 "${DW[@]}" "$w/p2" -o s3://rel/pleft --endpoint-url "$FAKE_S3_URL" >/dev/null 2>"$w/pleft.err"
warned=$(grep -c '^lidiagen: warning: s3://rel/pleft: the server ignores conditional writes: each write is read back$' "$w/pleft.err")
requests >"$w/pleft.log"
left=$(awk '$1 == "PUT" && $2 ~ /lidiagen-probe/ && $3 == 200 { print $2 }' "$w/pleft.log")
if [ "$warned" = 1 ] && [ -n "$left" ] && ! fake_s3_object rel "$left" "$w/got" &&
	grep -q "^DELETE $left 204" "$w/pleft.log"; then
	ok "race: a server that ignores conditional writes is said once a run, and the probe object deleted"
else
	not_ok "race: a server that ignores conditional writes is said once a run, and the probe object deleted" \
		"warnings: $warned (want 1)" "probe: ${left:-none}" "$(cat "$w/pleft.log")" "$(cat "$w/pleft.err")"
fi

# There, a weaker object written over ours after our read-back (by a job that
# looked before ours landed) is found once the others had time to land theirs,
# and ours put back: the symbols object is planted as soon as ours is there.
("$L" -j 1 "${DW[@]}" -o s3://rel/psettle --endpoint-url "$FAKE_S3_URL" >/dev/null 2>"$w/ps.err"
	echo $? >"$w/ps.rc") &
pid=$!
for _ in $(seq 200); do fake_s3_object rel "psettle/$key" "$w/got" && break; sleep 0.01; done
fake_s3_put rel "psettle/$key" "$w/sym/$key"
planted=$(obj_sha psettle)
wait "$pid"
if [ "$(cat "$w/ps.rc")" = 0 ] && [ "$planted" = "$shaS" ] && [ "$(obj_sha psettle)" = "$shaD" ] &&
	grep -q '^lidiagen: s3://rel/psettle: 1 key written again: a weaker object had replaced it meanwhile' "$w/ps.err"; then
	ok "race: where conditions are ignored, a weaker object written after the read-back is found later and ours put back"
else
	not_ok "race: where conditions are ignored, a weaker object written after the read-back is found later and ours put back" \
		"exit $(cat "$w/ps.rc"), planted ${planted:-nothing}, object $(obj_sha psettle)" "$(cat "$w/ps.err")"
fi

# ---- a tree on disk: a run takes a few ms ----
SPREAD=15
bad="" meanwhile=0
for i in $(seq "$ROUNDS"); do
	d=$w/tree/$i
	race_round "$d" "$d/out"
	sha=$(sha256sum <"$d/out/$key" 2>/dev/null | cut -c1-64)
	why=$(judge_round "$d" "$sha" converted)
	stray=$(find "$d/out" -name '.*' | head -3)
	[ -z "$stray" ] || why="$why files left: $stray;"
	[ -n "$why" ] && bad="$bad${bad:+$'\n'}round $i:$why"
	grep -q 'meanwhile' "$d/sym.json" && meanwhile=$((meanwhile + 1))
done
if [ -z "$bad" ]; then
	ok "race: tree: $ROUNDS rounds of two racing writers end with the DWARF file, both exit 0, no lock file left"
else
	not_ok "race: tree: $ROUNDS rounds of two racing writers end with the DWARF file, both exit 0, no lock file left" "$bad"
fi
note "tree: the symbols job kept a file written meanwhile in $meanwhile of $ROUNDS rounds"

# The key's lock, held by another writer while it puts the DWARF file in
# place: the symbols job waits, reads again, and keeps it.
d=$w/tree-lock
mkdir -p "$d/out/symbolizer/anonymous"
lock=$d/out/symbolizer/anonymous/.$bid.lidiagen.tmp.locked
flock "$lock" sleep 1 &
holder=$!
sleep 0.3
"$L" -q -j 1 "${SYM[@]}" -o "$d/out" --manifest "$d/sym.json" >"$d/sym.err" 2>&1 &
job=$!
sleep 0.3
cp "$w/dw/$key" "$d/out/$key.new" && mv "$d/out/$key.new" "$d/out/$key"
wait "$job"
rc=$?
wait "$holder"
if [ "$rc" = 0 ] && [ "$(sha256sum <"$d/out/$key" | cut -c1-64)" = "$shaD" ] &&
	[ "$(status_of "$d/sym.json")" = "kept a stronger object was published meanwhile" ]; then
	ok "race: tree: a writer waits for the key's lock, reads again, and keeps a stronger file put there meanwhile"
else
	not_ok "race: tree: a writer waits for the key's lock, reads again, and keeps a stronger file put there meanwhile" \
		"exit $rc" "$(status_of "$d/sym.json")" "$(head -5 "$d/sym.err")"
fi
