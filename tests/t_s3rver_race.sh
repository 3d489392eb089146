#!/usr/bin/env bash
# Concurrent publishers of one build ID against s3rver (issue 20, part 5):
# a symbols-only job and a DWARF job (inline frames and lines) run at once,
# with random start offsets, ROUNDS times, each round at a new prefix, and
# the DWARF object must be under the key after every round, whoever comes
# last. s3rver ignores S3's conditional writes (If-None-Match, If-Match):
# lidiagen finds that with its probe, says so, and reads each write back
# (cmd/lidiagen/publish/publish.c). tests/t_publish_race.sh races the same jobs
# against tests/tools/fake_s3.py, honouring and ignoring the conditions,
# and into a tree. What is under each key comes from botocore (awscli's
# library), checked with sha256sum and `lidiagen info`, not from lidiagen's
# own report.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/s3rver.sh"
. "$TESTS_LIB/race.sh"

S3RVER_MISSING=fail s3rver_need
L=$LIDIAGEN
w=$(scratch work)
s3_env "$w/home"
if [ ! -x "$S3_AWS" ] || ! "$S3_PY" -c 'import botocore' 2>/dev/null; then
	skip "s3rver race: $S3_AWS (Debian's awscli, with python3-botocore) is not installed (./quickstart.sh test installs it)"
	exit 0
fi
ROUNDS=${RACE_ROUNDS:-20}
BK=lidia-race

race_jobs "s3rver race" || exit 0
# What each holds, as `lidiagen info` reads it from the file: the DWARF
# job's lines and inline frames (t_publish_race.sh proves them against
# llvm-symbolizer), the symbols job's symbols only.
holds_of() { "$L" info "$1" 2>/dev/null | sed -n 's/^ *holds *//p'; }
if [ "$shaS" = "$shaD" ] || [ "$(holds_of "$w/dw/$key")" != "symbols, lines, inline frames" ] ||
	[ "$(holds_of "$w/sym/$key")" != "symbols" ]; then
	not_ok "s3rver race: the two jobs make different objects, the DWARF one with lines and inline frames" \
		"symbols job: $shaS $(holds_of "$w/sym/$key")" "DWARF job: $shaD $(holds_of "$w/dw/$key")"
	exit 0
fi
note "symbols job: $shaS, DWARF job: $shaD"

s3rver_start "$w/srv" "$BK" || { not_ok "s3rver race: s3rver starts"; exit 0; }

# s3rver's store is not safe for concurrent writers: deleting an object
# removes its directory when it is left empty, and a PUT that has just made
# that directory then fails to open its file, an error that ends s3rver.
# Two jobs probing conditional writes at once (each deletes its probe
# under PREFIX/.lidiagen-probe/) do that. An object kept there in every
# round's prefix (one awscli call) keeps those directories, so that the
# rounds race lidiagen, not s3rver's clean-up.
for i in $(seq "$ROUNDS"); do
	mkdir -p "$w/keep/$i/.lidiagen-probe" && echo keep >"$w/keep/$i/.lidiagen-probe/keep"
done
if ! s3aws s3 cp --only-show-errors --recursive "$w/keep" "s3://$BK/race" >"$w/keep.log" 2>&1; then
	not_ok "s3rver race: awscli puts the objects kept in each round's prefix" "$(first_lines 5 "$w/keep.log")"
	exit 0
fi

# A run against s3rver takes ~0.3 s, the PUT and the read-back at its end:
# offsets of up to 0.4 s put either job's write before, after or between
# the other's.
SPREAD=400
for i in $(seq "$ROUNDS"); do
	race_round "$w/r/$i" "s3://$BK/race/$i" --endpoint-url "$S3RVER_URL"
done

# The objects, through botocore (awscli's library; an awscli process a key
# would take minutes): each round's bytes and metadata, or the error.
"$S3_PY" - "$S3RVER_URL" "$BK" "$ROUNDS" "$key" "$w/got" >"$w/meta" 2>"$w/meta.err" <<'PY'
import os, sys
import botocore.session
from botocore.config import Config
url, bucket, rounds, key, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
s3 = botocore.session.get_session().create_client(
    "s3", endpoint_url=url, region_name="us-east-1",
    config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
os.makedirs(out, exist_ok=True)
for i in range(1, rounds + 1):
    try:
        r = s3.get_object(Bucket=bucket, Key=f"race/{i}/{key}")
        with open(f"{out}/{i}", "wb") as f:
            f.write(r["Body"].read())
        m = r["Metadata"]
        print(i, m.get("lidia-sha256"), m.get("lidia-holds"))
    except Exception as e:
        print(i, "error", getattr(e, "response", {}).get("ResponseMetadata", {}).get("HTTPStatusCode", type(e).__name__))
PY

# s3rver writes an object's metadata file in place, not atomically, and
# apart from its bytes: two PUTs at once (both jobs found no object a moment
# before: nothing orders them where conditional writes are ignored) can
# leave it broken, s3rver then answering 500 for that key for good, or torn:
# one job's bytes under the other's metadata, each PUT having sent its own
# (the metadata names the sha256 of the bytes it came with). Such a round is
# s3rver's, not lidiagen's: it is counted, and a few are tolerated.
bad="" meanwhile=0 broken=0 torn=0 seen_bare=0
for i in $(seq "$ROUNDS"); do
	f=$w/got/$i
	meta=$(awk -v i="$i" '$1 == i { print $2, $3 }' "$w/meta")
	if [ "$meta" = "error 500" ]; then
		broken=$((broken + 1))
		continue
	fi
	sha=$([ -f "$f" ] && sha256sum <"$f" | cut -c1-64)
	if { [ "$sha" = "$shaS" ] && [ "${meta%% *}" = "$shaD" ]; } ||
		{ [ "$sha" = "$shaD" ] && [ "${meta%% *}" = "$shaS" ]; }; then
		torn=$((torn + 1))
		continue
	fi
	why=$(judge_round "$w/r/$i" "$sha" uploaded 2)
	[ "$(status_of "$w/r/$i/sym.json" | cut -d' ' -f1)" = replaced ] && seen_bare=$((seen_bare + 1))
	holds=$(holds_of "$f")
	[ -z "$sha" ] || [ "$holds" = "symbols, lines, inline frames" ] ||
		why="$why lidiagen info: it holds '$holds';"
	[ -z "$sha" ] || [ "$meta" = "$sha symbols+lines+inlines" ] ||
		why="$why its metadata says '$meta';"
	[ -n "$why" ] && bad="$bad${bad:+$'\n'}round $i:$why"
	grep -q 'meanwhile' "$w/r/$i/sym.json" && meanwhile=$((meanwhile + 1))
done
[ $(((broken + torn) * 4)) -le "$ROUNDS" ] ||
	bad="$bad${bad:+$'\n'}s3rver broke or tore the key in $((broken + torn)) of $ROUNDS rounds: too few rounds judged"
if [ -z "$bad" ]; then
	ok "s3rver race: $ROUNDS rounds of two racing publishers end with the DWARF object (its bytes, lidiagen info, the metadata), both exit 0, the manifests agree"
else
	not_ok "s3rver race: $ROUNDS rounds of two racing publishers end with the DWARF object (its bytes, lidiagen info, the metadata), both exit 0, the manifests agree" \
		"$bad" "$(first_lines 5 "$w/meta.err")"
fi
note "s3rver broke the key (two PUTs at once) in $broken of $ROUNDS rounds, tore it (one's bytes, the other's metadata) in $torn"
note "the symbols job kept an object published meanwhile in $meanwhile of $ROUNDS rounds"
note "the symbols job replaced an object s3rver showed without its metadata (mid-write) in $seen_bare of $ROUNDS rounds, the DWARF object put back after"
