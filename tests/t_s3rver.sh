#!/usr/bin/env bash
# Publishing to S3, end to end against s3rver (a real S3 implementation on
# 127.0.0.1, tests/lib/s3rver.sh), with Debian's awscli as the oracle: what
# `-o s3://` and `lidiagen upload` publish reads back through awscli byte
# for byte as a local run's tree, under the same keys; the objects carry the
# lidia metadata, their sha256 that of the bytes; a re-run or a second upload
# makes no PUT and no GET (s3rver's own log counts the requests); an object
# another tool wrote is replaced; a missing bucket fails before any
# conversion; --dry-run changes nothing. No check trusts lidiagen's own
# report alone: keys, bytes and hashes come from awscli, sha256sum and cmp,
# request counts from the server. Not here: SigV4 signatures (s3rver does
# not check them; tests/t_s3.sh does, with botocore), faults and retries.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/s3rver.sh"

S3RVER_MISSING=fail s3rver_need
L=$LIDIAGEN
w=$(scratch work)
s3_env "$w/home"
if [ ! -x "$S3_AWS" ]; then
	skip "s3rver tests: $S3_AWS (Debian's awscli) is not installed (./quickstart.sh test installs it)"
	exit 0
fi

# ---- inputs: five build IDs -------------------------------------------------------
# Each with a fixed build ID, and what each must hold once published (the
# compiler options decide it, not lidiagen): -O2 -g with inlined functions
# gives inline frames; -O0 -g lines only; a stripped library only its
# exported symbols (.dynsym), published here with --allow-dynsym-only.
cat >"$w/inl.c" <<'EOF'
#include <stdio.h>
static inline int sq(int x) { return x * x; }
static inline int cube(int x) { return sq(x) * x + VARIANT; }
int work(int x) { return cube(x) + sq(x + 1); }
int main(int c, char **v) { (void)v; printf("%d\n", work(c)); return 0; }
EOF
cat >"$w/lib.c" <<'EOF'
static inline int sq(int x) { return x * x; }
static inline int cube(int x) { return sq(x) * x + 7; }
int lib_f(int x) { return cube(x) + sq(x + 1); }
int lib_g(int x) { return cube(x + 2) - 1; }
EOF
mkdir -p "$w/in"
B1=0x5a000000000000000000000000000001 B2=0x5a000000000000000000000000000002
B3=0x5a000000000000000000000000000003 B4=0x5a000000000000000000000000000004
B5=0x5a000000000000000000000000000005
cmds=(
	"gcc -O2 -g -DVARIANT=1 -Wl,--build-id=$B1 -o in/inl1 inl.c"
	"gcc -O2 -g -DVARIANT=2 -Wl,--build-id=$B2 -o in/inl2 inl.c"
	"gcc -O0 -g -DVARIANT=3 -Wl,--build-id=$B3 -o in/o0 inl.c"
	"gcc -O2 -g -fPIC -shared -Wl,--build-id=$B4 -o in/libl.so lib.c"
	"gcc -O2 -fPIC -shared -Wl,--build-id=$B5 -o libs.full lib.c"
	"strip --strip-all -o in/libs.so libs.full"
)
for c in "${cmds[@]}"; do
	if ! (cd "$w" && $c) >"$w/cc.err" 2>&1; then
		not_ok "s3rver: the test programs build" "$c" "$(cat "$w/cc.err")"
		exit 0
	fi
done
declare -A HOLDS=(
	[${B1#0x}]=symbols+lines+inlines [${B2#0x}]=symbols+lines+inlines
	[${B3#0x}]=symbols+lines [${B4#0x}]=symbols+lines+inlines [${B5#0x}]=symbols
)

# ---- helpers ------------------------------------------------------------------------
# keys_of DIR: the files under DIR, as sorted relative paths.
keys_of() { (cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort); }
# s3_keys PREFIX: awscli's listing of s3://$BK/PREFIX/, keys relative to it, sorted.
s3_keys() {
	s3aws s3 ls --recursive "s3://$BK/$1/" 2>"$w/ls.err" | awk '{ print $4 }' |
		sed "s|^$1/||" | LC_ALL=C sort
}
# s3_get PREFIX DIR: everything under s3://$BK/PREFIX into DIR, through awscli.
s3_get() {
	rm -rf "$2"
	s3aws s3 cp --quiet --recursive "s3://$BK/$1" "$2" >"$2.log" 2>&1
}
# statuses MANIFEST: "KEY STATUS" per line of a JSON Lines manifest, sorted.
statuses() {
	"$S3_PY" -c 'import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    print(e["key"], e["status"])' "$1" | LC_ALL=C sort
}
# all_objects: every object of the bucket with its size and ETag (an MD5 of
# its bytes, for single PUTs), to see that nothing changed.
all_objects() {
	s3aws s3api list-objects-v2 --bucket "$BK" --query 'Contents[].[Key, Size, ETag]' \
		--output text 2>&1 | LC_ALL=C sort
}
# requests: the server's log since the last mark, for "# " lines.
requests() { s3rver_requests | head -n 40; }

# ---- the local tree, and the server ----------------------------------------------------
run "$w/local" "$L" -q --allow-dynsym-only -r "$w/in" -o "$w/local"
keys=$(keys_of "$w/local")
nkeys=$(printf '%s\n' "$keys" | grep -c .)
want_keys=$(for b in "${!HOLDS[@]}"; do echo "symbolizer/anonymous/$b"; done | LC_ALL=C sort)
if [ "$RC" -eq 0 ] && [ "$keys" = "$want_keys" ]; then
	ok "local run: one file per build ID under symbolizer/anonymous/"
else
	not_ok "local run: one file per build ID under symbolizer/anonymous/" "exit $RC" \
		"files: $keys" "$(first_lines 10 "$w/local.err")"
	exit 0
fi

# S3's rules: a bucket name has 3 to 63 characters.
BK=lidia-rel
s3rver_start "$w/srv" "$BK" || { not_ok "s3rver starts"; exit 0; }
ok "s3rver answers on $S3RVER_URL"
E=(--endpoint-url "$S3RVER_URL")

# ---- -o s3://$BK/rel/v1 ----------------------------------------------------------------------
s3rver_mark
run "$w/v1" "$L" --allow-dynsym-only -r "$w/in" -o s3://$BK/rel/v1 "${E[@]}" --manifest "$w/v1.json"
puts=$(s3rver_count PUT)
if [ "$RC" -eq 0 ] && [ "$puts" -eq "$nkeys" ]; then
	ok "-o s3://$BK/rel/v1: exit 0, one PUT per key ($nkeys) in s3rver's log"
else
	not_ok "-o s3://$BK/rel/v1: exit 0, one PUT per key ($nkeys) in s3rver's log" "exit $RC, $puts PUT" \
		"$(first_lines 10 "$w/v1.err")" "requests:" "$(requests)"
fi

s3_get rel/v1 "$w/dl1"
if [ -d "$w/dl1" ] && d=$(diff -r "$w/local" "$w/dl1" 2>&1); then
	ok "-o s3://: aws s3 cp --recursive reads back the local tree byte for byte (diff -r)"
else
	not_ok "-o s3://: aws s3 cp --recursive reads back the local tree byte for byte (diff -r)" \
		"${d:-nothing downloaded}" "$(first_lines 5 "$w/dl1.log")"
fi
listed=$(s3_keys rel/v1)
if [ "$listed" = "$keys" ]; then
	ok "-o s3://: aws s3 ls --recursive lists exactly the local tree's $nkeys files"
else
	not_ok "-o s3://: aws s3 ls --recursive lists exactly the local tree's $nkeys files" \
		"$(diff <(echo "$keys") <(echo "$listed"))" "$(first_lines 5 "$w/ls.err")"
fi

# The metadata, as awscli reads it, against sha256sum and what each input
# must hold (the compiler options decide it); the version names lidiagen;
# the counts are those `lidiagen info` reads from the local file (the
# reader's count, not the writer's tally that made the metadata).
bad=() badc=()
for k in $keys; do
	s3aws s3api head-object --bucket "$BK" --key "rel/v1/$k" >"$w/head.json" 2>&1
	sha=$(sha256sum <"$w/local/$k" | awk '{ print $1 }')
	want=${HOLDS[${k##*/}]}
	got=$("$S3_PY" -c 'import json, sys
m = json.load(open(sys.argv[1]))["Metadata"]
print(m.get("lidia-holds"), m.get("lidia-sha256"), m.get("lidia-version", "").split(" ")[0])
print(m.get("lidia-functions"), m.get("lidia-inline-ranges"), m.get("lidia-line-rows"))' \
		"$w/head.json" 2>&1)
	[ "$(sed -n 1p <<<"$got")" = "$want $sha lidiagen" ] ||
		bad+=("$k: want '$want $sha lidiagen', got '$got'" "$(head -c 600 "$w/head.json")")
	# "content  N functions (depth 0), N inline ranges, N line rows"
	info=$("$L" info "$w/local/$k" 2>&1 | awk '/^ *content/ { print $2, $6, $9; exit }')
	[ "$(sed -n 2p <<<"$got")" = "$info" ] || badc+=("$k: metadata '$(sed -n 2p <<<"$got")', lidiagen info '$info'")
done
if [ ${#bad[@]} -eq 0 ]; then
	ok "-o s3://: head-object shows lidia-holds (as compiled), lidia-sha256 = sha256sum, lidia-version"
else
	not_ok "-o s3://: head-object shows lidia-holds (as compiled), lidia-sha256 = sha256sum, lidia-version" "${bad[@]}"
fi
if [ ${#badc[@]} -eq 0 ]; then
	ok "-o s3://: lidia-functions, -inline-ranges, -line-rows are the counts lidiagen info reads from the file"
else
	not_ok "-o s3://: lidia-functions, -inline-ranges, -line-rows are the counts lidiagen info reads from the file" "${badc[@]}"
fi

# ---- a re-run publishes nothing ---------------------------------------------------------------
# Another layout: the keys follow it as the local tree's paths do.
run "$w/flat" "$L" -q --allow-dynsym-only -r "$w/in" -o "$w/flat" --layout flat
run "$w/v1f" "$L" -q --allow-dynsym-only -r "$w/in" -o s3://$BK/rel/flat --layout flat "${E[@]}"
rcf=$RC
s3_get rel/flat "$w/dlf1"
if [ "$rcf" -eq 0 ] && [ -d "$w/dlf1" ] && d=$(diff -r "$w/flat" "$w/dlf1" 2>&1) &&
	[ "$(s3_keys rel/flat)" = "$(keys_of "$w/flat")" ] && [ "$(keys_of "$w/flat" | grep -c '\.lidia$')" = "$nkeys" ]; then
	ok "--layout flat: s3://$BK/rel/flat reads back as the local --layout flat tree, same keys (BUILD-ID.lidia)"
else
	not_ok "--layout flat: s3://$BK/rel/flat reads back as the local --layout flat tree, same keys (BUILD-ID.lidia)" \
		"exit $rcf" "diff: ${d:-nothing downloaded}" "local: $(keys_of "$w/flat")" "listed: $(s3_keys rel/flat)" \
		"$(first_lines 5 "$w/v1f.err")"
fi

# "0 GET of objects": GETs of the bucket itself are allowed, the bucket
# check (a listing of no key) and one listing page of the prefix (for up to
# 1000 keys); no object is read back, no key asked about twice.
before=$(all_objects)
s3rver_mark
run "$w/v1b" "$L" --allow-dynsym-only -r "$w/in" -o s3://$BK/rel/v1 "${E[@]}"
puts=$(s3rver_count PUT) heads=$(s3rver_count HEAD) total=$(s3rver_requests | grep -c .)
gets=$(s3rver_requests GET | grep -c " /$BK/rel/")
if [ "$RC" -eq 0 ] && [ "$puts" -eq 0 ] && [ "$gets" -eq 0 ] && [ "$heads" -le $((nkeys + 1)) ] &&
	[ "$total" -le $((nkeys + 2)) ] && [ "$(all_objects)" = "$before" ]; then
	ok "re-run of -o s3://: exit 0, 0 PUT, 0 GET of objects, $heads HEAD (<= $nkeys keys + 1), $total requests, the bucket unchanged"
else
	not_ok "re-run of -o s3://: exit 0, 0 PUT, 0 GET of objects, <= $((nkeys + 1)) HEAD, <= $((nkeys + 2)) requests, the bucket unchanged" \
		"exit $RC; $total requests: $puts PUT, $gets GET of objects, $heads HEAD" "$(first_lines 10 "$w/v1b.err")" \
		"requests:" "$(requests)"
fi
# lidiagen's own summary must agree with the server's count.
if tail -n 1 "$w/v1b.err" | grep -qE "; $total requests \($heads HEAD, 0 PUT, $((total - heads)) GET, 0 retried\), 0\.0 MiB sent$"; then
	ok "re-run of -o s3://: the summary counts the requests as s3rver does ($total, $heads HEAD, 0 PUT, 0.0 MiB)"
else
	not_ok "re-run of -o s3://: the summary counts the requests as s3rver does ($total, $heads HEAD, 0 PUT, 0.0 MiB)" \
		"summary: $(tail -n 1 "$w/v1b.err")"
fi

# ---- lidiagen upload ----------------------------------------------------------------------
s3rver_mark
run "$w/up1" "$L" upload --manifest "$w/up1.json" "$w/local" s3://$BK/rel/v2 "${E[@]}"
puts=$(s3rver_count PUT)
s3_get rel/v2 "$w/dl2"
want=$(for k in $keys; do echo "$k uploaded"; done)
got=$(statuses "$w/up1.json" 2>&1)
if [ "$RC" -eq 0 ] && [ "$puts" -eq "$nkeys" ] && [ -d "$w/dl2" ] && d=$(diff -r "$w/local" "$w/dl2" 2>&1) &&
	[ "$got" = "$want" ] && [ "$(s3_keys rel/v2)" = "$keys" ]; then
	ok "upload: $nkeys PUT, aws s3 cp --recursive reads back the tree byte for byte, manifest all 'uploaded'"
else
	not_ok "upload: $nkeys PUT, aws s3 cp --recursive reads back the tree byte for byte, manifest all 'uploaded'" \
		"exit $RC, $puts PUT" "diff: ${d:-}" "manifest: $got" "$(first_lines 10 "$w/up1.err")"
fi

before=$(all_objects)
s3rver_mark
run "$w/up2" "$L" upload --manifest "$w/up2.json" "$w/local" s3://$BK/rel/v2 "${E[@]}"
puts=$(s3rver_count PUT) heads=$(s3rver_count HEAD) total=$(s3rver_requests | grep -c .)
gets=$(s3rver_requests GET | grep -c " /$BK/rel/")
want=$(for k in $keys; do echo "$k exists"; done)
got=$(statuses "$w/up2.json" 2>&1)
if [ "$RC" -eq 0 ] && [ "$puts" -eq 0 ] && [ "$gets" -eq 0 ] && [ "$total" -le $((nkeys + 1)) ] &&
	[ "$got" = "$want" ] && [ "$(all_objects)" = "$before" ]; then
	ok "upload again: 0 PUT, 0 GET of objects, $total requests, manifest all 'exists', the bucket unchanged"
else
	not_ok "upload again: 0 PUT, 0 GET of objects, <= $((nkeys + 1)) requests, manifest all 'exists', the bucket unchanged" \
		"exit $RC; $total requests: $puts PUT, $gets GET of objects, $heads HEAD" "manifest: $got" "$(first_lines 10 "$w/up2.err")"
fi

# ---- an object another tool wrote is replaced ---------------------------------------------
fk=symbolizer/anonymous/${B3#0x}
head -c 3000 /dev/urandom >"$w/foreign"
s3aws s3 cp --quiet "$w/foreign" "s3://$BK/rel/v2/$fk" >"$w/fcp.log" 2>&1
s3aws s3api head-object --bucket "$BK" --key "rel/v2/$fk" >"$w/fhead.json" 2>&1
s3_get rel/v2 "$w/dlf"
# The setup itself: the foreign bytes are there, with no metadata.
if ! cmp -s "$w/foreign" "$w/dlf/$fk" || grep -q lidia "$w/fhead.json"; then
	not_ok "upload over a foreign object: awscli put it there without metadata" \
		"$(cat "$w/fcp.log")" "$(head -c 600 "$w/fhead.json")"
fi
# A dry run first: it says what it would do, and changes nothing.
before=$(all_objects)
s3rver_mark
run "$w/upd" "$L" upload --dry-run --manifest "$w/upd.json" "$w/local" s3://$BK/rel/v2 "${E[@]}"
puts=$(s3rver_count PUT)
got=$(statuses "$w/upd.json" 2>&1 | grep -F "$fk")
s3_get rel/v2 "$w/dld"
if [ "$RC" -eq 0 ] && [ "$puts" -eq 0 ] && [ "$(all_objects)" = "$before" ] &&
	cmp -s "$w/foreign" "$w/dld/$fk" && [ "$got" = "$fk would-replace" ]; then
	ok "upload --dry-run over a foreign object: 0 PUT, the object unchanged, manifest 'would-replace'"
else
	not_ok "upload --dry-run over a foreign object: 0 PUT, the object unchanged, manifest 'would-replace'" \
		"exit $RC, $puts PUT" "manifest: $got" "$(first_lines 10 "$w/upd.err")" "requests:" "$(requests)"
fi
s3rver_mark
run "$w/up3" "$L" upload --manifest "$w/up3.json" "$w/local" s3://$BK/rel/v2 "${E[@]}"
puts=$(s3rver_requests PUT)
want=$(for k in $keys; do [ "$k" = "$fk" ] && echo "$k replaced" || echo "$k exists"; done)
got=$(statuses "$w/up3.json" 2>&1)
s3_get rel/v2 "$w/dl3"
if [ "$RC" -eq 0 ] && [ "$puts" = "PUT /$BK/rel/v2/$fk 200" ] && [ "$got" = "$want" ] &&
	cmp -s "$w/local/$fk" "$w/dl3/$fk" && d=$(diff -r "$w/local" "$w/dl3" 2>&1); then
	ok "upload over a foreign object: manifest 'replaced', one PUT, reads back byte-equal"
else
	not_ok "upload over a foreign object: manifest 'replaced', one PUT, reads back byte-equal" \
		"exit $RC; PUTs: ${puts:-none}" "manifest: $got" "diff: ${d:-}" "$(first_lines 10 "$w/up3.err")"
fi
s3aws s3api head-object --bucket "$BK" --key "rel/v2/$fk" >"$w/fhead2.json" 2>&1
sha=$(sha256sum <"$w/local/$fk" | awk '{ print $1 }')
if grep -q "\"lidia-sha256\": \"$sha\"" "$w/fhead2.json"; then
	ok "upload over a foreign object: the new object has lidia-sha256 = sha256sum"
else
	not_ok "upload over a foreign object: the new object has lidia-sha256 = sha256sum" \
		"$(head -c 600 "$w/fhead2.json")"
fi

# ---- a bucket that does not exist ---------------------------------------------------------
# Fails before converting: no output line, no manifest, no state file, and
# nothing asked of the server but about that bucket.
s3rver_mark
run "$w/nb" "$L" -v --allow-dynsym-only -r "$w/in" -o s3://nosuchbucket/x "${E[@]}" --manifest "$w/nb.json" --state "$w/nb.state"
other=$(s3rver_requests | grep -v ' /nosuchbucket')
n=$(s3rver_requests | grep -c .)
if [ "$RC" -eq 1 ] && grep -q NoSuchBucket "$w/nb.err" && [ ! -e "$w/nb.json" ] && [ ! -e "$w/nb.state" ] &&
	! grep -qE '5a0{29}[1-5]' "$w/nb.out" "$w/nb.err" && [ -z "$other" ] && [ "$n" -le 3 ]; then
	ok "-o s3://nosuchbucket/x: exit 1, says NoSuchBucket, converts nothing ($n request(s) about that bucket only)"
else
	not_ok "-o s3://nosuchbucket/x: exit 1, says NoSuchBucket, converts nothing" "exit $RC" \
		"stderr: $(first_lines 5 "$w/nb.err")" "stdout: $(first_lines 5 "$w/nb.out")" \
		"manifest: $([ -e "$w/nb.json" ] && echo written || echo none)" "requests:" "$(requests)"
fi
s3rver_mark
run "$w/nbu" "$L" upload "$w/local" s3://nosuchbucket/x "${E[@]}"
if [ "$RC" -eq 1 ] && grep -q NoSuchBucket "$w/nbu.err" && [ "$(s3rver_count PUT)" -eq 0 ]; then
	ok "upload to s3://nosuchbucket/x: exit 1, says NoSuchBucket, no PUT"
else
	not_ok "upload to s3://nosuchbucket/x: exit 1, says NoSuchBucket, no PUT" "exit $RC" \
		"stderr: $(first_lines 5 "$w/nbu.err")" "requests:" "$(requests)"
fi

# ---- --dry-run of a conversion ---------------------------------------------------------
before=$(all_objects)
s3rver_mark
run "$w/dry" "$L" --allow-dynsym-only -r "$w/in" -o s3://$BK/rel/v3 "${E[@]}" --dry-run
puts=$(s3rver_count PUT)
if [ "$RC" -eq 0 ] && [ "$puts" -eq 0 ] && [ "$(all_objects)" = "$before" ] && [ -z "$(s3_keys rel/v3)" ]; then
	ok "-o s3://$BK/rel/v3 --dry-run: exit 0, 0 PUT, nothing under rel/v3, the bucket unchanged"
else
	not_ok "-o s3://$BK/rel/v3 --dry-run: exit 0, 0 PUT, nothing under rel/v3, the bucket unchanged" \
		"exit $RC, $puts PUT" "$(first_lines 10 "$w/dry.err")" "requests:" "$(requests)"
fi

# ---- the whole bucket at the end: the three prefixes, nothing else -----------------------------
want=$( (for k in $keys; do echo "rel/v1/$k"; echo "rel/v2/$k"; done; keys_of "$w/flat" | sed 's|^|rel/flat/|') |
	LC_ALL=C sort)
got=$(s3aws s3 ls --recursive s3://$BK/ 2>&1 | awk '{ print $4 }' | LC_ALL=C sort)
if [ "$got" = "$want" ]; then
	ok "the bucket holds rel/v1, rel/v2 and rel/flat's $nkeys keys each, and nothing else"
else
	not_ok "the bucket holds rel/v1, rel/v2 and rel/flat's $nkeys keys each, and nothing else" \
		"$(diff <(echo "$want") <(echo "$got"))"
fi
