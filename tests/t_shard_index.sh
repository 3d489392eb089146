#!/usr/bin/env bash
# Index once, convert in shards (issue 15): `lidiagen index` and
# `lidiagen convert --index INDEX --shard K/N`, over the tree of archives
# tests/lib/batch_fixtures.sh builds (plain files, a duplicate, tar.zst, zip,
# cpio.gz, a .deb of stripped binaries and its -dbg .deb, an .rpm, nested
# archives, hostile member names, a Go program, files without a build ID),
# plus an xz-compressed ELF file, a gzip-compressed one inside a tar, and
# (with dwz) two debug files and their dwz file in a tar.gz.
#
# Checks, for N = 1, 2, 3, 4 (N local processes at once, as N CI jobs):
#  - the N index slices, merged in any order, are byte for byte the index of
#    one run over everything, and a plain `lidiagen -r dist` run's tree is,
#    byte for byte (diff -r), the union of the N shards' trees converted from
#    the index: two different code paths, the plain one walking everything;
#  - with --shard-by key, each shard opened only inputs holding a part of one
#    of its build IDs (by the index, with the assignment of --shard: the
#    first 8 hex digits of the build ID modulo N), each once (the manifest's
#    "read" lines), and with N = 4 the shards together read fewer bytes than
#    4 plain --shard runs;
#  - with --index and no --shard-by (input, the default there), no input is
#    opened by two shards, the stripped binaries of a .deb and their debug
#    files in its -dbg .deb are read by one shard, and the union is still
#    the plain run's tree;
#  - lidiagen index reads each archive once, hashing it as it walks it: its
#    bytes read (rchar, less a run's own) stay under 1.5x the archives' size
#    (libarchive reads again where it seeks back, in a zip; it was 2x and more);
#  - inputs changed since the index: another mtime alone is fine (the SHA-256
#    decides); another size, or the same size with other bytes, is one line
#    naming the file, exit 1, and the other build IDs are still converted;
#  - hostile indexes (truncated JSON, another version, '..' paths, numbers
#    too large, unknown fields, records out of place, NUL bytes, a line of
#    2 MiB, an empty file, a slice, another --fallback-key) and bad merges
#    (another version, a slice missing or given twice, an input in two
#    slices, slices of another run: another tree, --include, --exclude,
#    -r, --fallback-key, limits) are one line on stderr and exit 1, with
#    nothing written; slices of one run with its paths in another order
#    merge into that run's index;
#  - --reuse OLD: an unchanged tree gives the same bytes without reading an
#    input; a touched input is taken by its SHA-256;
#  - doc/sharding.md's GitHub Actions and Kubernetes steps, run as N local
#    processes (JOB_COMPLETION_INDEX 0-based), give the plain run's tree, and
#    each step stands verbatim in its YAML.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/batch_fixtures.sh"

L=$LIDIAGEN
w=$(scratch work)
T=${BATCH_TIMEOUT:-60}
doc=$TESTS_DIR/../doc/sharding.md

if ! bf_build "$w/fx"; then
	not_ok "shard index: the fixtures build" "$BF_LOG"
	exit 0
fi
cd "$w/fx" || exit 0
p=$w/fx/prog
# More shapes of input: a compressed ELF file (its member is its own name), one
# inside a tar, and a dwz file with the two debug files that point at it.
mkdir -p dist/raw dist/dwz
xz -c "$p/app10" >dist/raw/app10.xz
gzip -c "$p/app11" >app11.gz
"$PYTHON" "$TESTS_LIB/batch_mkarchive.py" tar dist/raw/inner-gz.tar usr/bin/app11.gz=app11.gz >/dev/null
HAVE_DWZ=
if command -v dwz >/dev/null 2>&1; then
	for v in 31 32; do
		gcc -O2 -g -DVARIANT=$v -Wl,--build-id -o "$p/dz$v" "$BF_SRC/batch_prog.c" &&
			objcopy --only-keep-debug "$p/dz$v" "$p/dz$v.debug" &&
			strip --strip-all -o "$p/dz$v.stripped" "$p/dz$v"
	done
	note "dwz: gcc -O2 -g -DVARIANT=31|32 -Wl,--build-id; objcopy --only-keep-debug; strip --strip-all;" \
		"dwz -m common.debug dz31.debug dz32.debug"
	if (cd "$p" && dwz -m common.debug dz31.debug dz32.debug) >"$w/dwz.log" 2>&1 &&
		[ -s "$p/common.debug" ]; then
		"$PYTHON" "$TESTS_LIB/batch_mkarchive.py" tar dist/dwz/dz.tar \
			usr/bin/dz31="$p/dz31.stripped" usr/bin/dz32="$p/dz32.stripped" \
			usr/lib/debug/dz31.debug="$p/dz31.debug" usr/lib/debug/dz32.debug="$p/dz32.debug" \
			usr/lib/debug/.dwz/common.debug="$p/common.debug" >/dev/null &&
			gzip dist/dwz/dz.tar && HAVE_DWZ=1
	fi
fi
[ -n "$HAVE_DWZ" ] || skip "shard index: a dwz file (dwz missing or it made none: $(head -c 200 "$w/dwz.log" 2>/dev/null))"

# brun PREFIX ARGS...: lidiagen ARGS (under a timeout), stdout and stderr to PREFIX.out/.err; sets RC.
brun() {
	local pre=$1
	shift
	timeout -k 5 "$T" "$L" "$@" >"$pre.out" 2>"$pre.err" </dev/null
	RC=$?
}
# shards N PREFIX ARGS...: N lidiagen processes at once, each ARGS with K/N for
# @K@ and @N@; PREFIX-K.rc holds each one's exit status.
shards() {
	local n=$1 pre=$2 k
	shift 2
	for k in $(seq 1 "$n"); do
		(
			timeout -k 5 "$T" "$L" "${@//@K@/$k}" >"$pre-$k.out" 2>"$pre-$k.err" </dev/null
			echo $? >"$pre-$k.rc"
		) &
	done
	wait
}
# all_ok N PREFIX: every one of the N processes exited 0.
all_ok() {
	local k
	for k in $(seq 1 "$1"); do
		[ "$(cat "$2-$k.rc")" = 0 ] || return 1
	done
}
# union DEST DIR...: the files of every DIR copied into DEST; fails if one is in two.
union() {
	local dest=$1 d
	shift
	mkdir -p "$dest"
	for d in "$@"; do
		[ -d "$d" ] || continue
		(cd "$d" && find . -type f) | while read -r f; do
			[ -e "$dest/$f" ] && { echo "twice: $f"; exit 1; }
			mkdir -p "$dest/$(dirname "$f")" && cp -p "$d/$f" "$dest/$f"
		done || return 1
	done
}

# ---- the reference: one plain run, one index ------------------------------------

brun "$w/ref" -r dist -o "$w/ref" -j 2 --manifest "$w/ref.jsonl"
nref=$(find "$w/ref" -type f | wc -l)
if [ "$RC" = 0 ] && [ "$nref" -ge 12 ]; then
	ok "shard index: the plain run converts the tree ($nref files)"
else
	not_ok "shard index: the plain run converts the tree" "exit $RC, $nref files" "$(first_lines 10 "$w/ref.err")"
fi
brun "$w/all" index -r dist -o "$w/all.idx" -j 2
# The run: the paths given (sorted, each ended by a NUL) hashed by sha256sum, the options canonical.
run_sha=$(printf 'dist\0' | sha256sum | cut -c1-64)
run_hdr='{"lidia_index":3,"fallback_key":"none","inputs":1,"inputs_sha256":"'$run_sha'","options":"-r --max-member-size=4294967296 --max-expansion=68719476736 --max-depth=4"}'
if [ "$RC" = 0 ] && head -n 1 "$w/all.idx" | grep -qxF "$run_hdr" &&
	grep -q '"kind":"debug"' "$w/all.idx" && grep -q '"members":\["data.tar.xz","./usr/bin/app4"\]' "$w/all.idx" &&
	grep -q '"input":"dist/raw/app10.xz","members":\[\],"name":"app10.xz"' "$w/all.idx" &&
	grep -q '"members":\["usr/bin/app11.gz"\],"name":"usr/bin/app11.gz"' "$w/all.idx" &&
	grep -q '"input":"dist/bin/nobid","members":\[\],"skipped":"no build ID"}' "$w/all.idx"; then
	ok "shard index: the index has the header, nested members, compressed ELF files, debug files, images passed over"
else
	not_ok "shard index: the index has the header, nested members, compressed ELF files, debug files, images passed over" \
		"exit $RC" "$(first_lines 12 "$w/all.idx")" "$(first_lines 5 "$w/all.err")"
fi
if [ -n "$HAVE_DWZ" ]; then
	if grep -q '"members":\["usr/lib/debug/.dwz/common.debug"\],"skipped":"not linked","kind":"dwz"' "$w/all.idx"; then
		ok "shard index: a dwz file is of kind dwz"
	else
		not_ok "shard index: a dwz file is of kind dwz" "$(grep dz.tar "$w/all.idx")"
	fi
fi
# The index's sizes and hashes, against stat and sha256sum (not against lidiagen).
if "$PYTHON" - "$w/all.idx" <<'EOF'; then
import hashlib, json, os, sys
bad = []
for line in open(sys.argv[1]).read().splitlines()[1:]:
    r = json.loads(line)
    if "mtime_ns" in r:
        st = os.stat(r["input"])
        if r["size"] != st.st_size or r["mtime_ns"] != st.st_mtime_ns:
            bad.append("%s: size/mtime" % r["input"])
        if r["type"] in ("elf", "archive") and r.get("sha256") != hashlib.sha256(open(r["input"], "rb").read()).hexdigest():
            bad.append("%s: sha256" % r["input"])
sys.exit(1 if bad else 0)
EOF
	ok "shard index: every input's size, mtime_ns and sha256 are stat's and sha256sum's"
else
	not_ok "shard index: every input's size, mtime_ns and sha256 are stat's and sha256sum's"
fi

# ---- N = 1..4: slices merged = one index; shards' union = one plain run ------------

# shard_inputs N K INDEX: the inputs that hold a part of a build ID of shard K of N.
shard_inputs() {
	"$PYTHON" - "$@" <<'EOF'
import json, sys
n, k = int(sys.argv[1]), int(sys.argv[2])
for line in open(sys.argv[3]).read().splitlines()[1:]:
    r = json.loads(line)
    if "build_id" in r and "skipped" not in r and int(r["build_id"][:8], 16) % n == k - 1:
        print(r["input"])
EOF
}
# opened MANIFEST: "PATH OPENED" of each input the run opened.
opened() { "$PYTHON" -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "read" in r:
        print(r["read"], r["opened"])' "$1"; }
# bytes MANIFEST...: the bytes the runs read, summed.
bytes_read() { cat "$@" | "$PYTHON" -c 'import json, sys
print(sum(json.loads(l).get("bytes", 0) for l in sys.stdin if "\"read\"" in l))'; }

for n in 1 2 3 4; do
	rm -rf "$w/n$n"
	mkdir -p "$w/n$n"
	shards "$n" "$w/n$n/ix" index -r dist --shard "@K@/$n" -o "$w/n$n/slice-@K@.idx"
	slices=$(ls "$w/n$n"/slice-*.idx | sort -r) # merged in reverse order
	brun "$w/n$n/merge" index --merge $slices -o "$w/n$n/merged.idx"
	if all_ok "$n" "$w/n$n/ix" && [ "$RC" = 0 ] && cmp -s "$w/n$n/merged.idx" "$w/all.idx"; then
		ok "shard index: N=$n: the $n index slices merged are the one-run index, byte for byte"
	else
		not_ok "shard index: N=$n: the $n index slices merged are the one-run index, byte for byte" \
			"merge exit $RC: $(cat "$w/n$n/merge.err")" "$(diff "$w/n$n/merged.idx" "$w/all.idx" | head -5)"
	fi

	shards "$n" "$w/n$n/cv" --index "$w/all.idx" --shard "@K@/$n" --shard-by key -o "$w/n$n/out-@K@" \
		-j 1 --manifest "$w/n$n/m-@K@.jsonl"
	rm -rf "$w/n$n/union"
	if all_ok "$n" "$w/n$n/cv" && union "$w/n$n/union" "$w/n$n"/out-* >"$w/n$n/union.log" &&
		diff -r "$w/ref" "$w/n$n/union" >"$w/n$n/diff" 2>&1; then
		ok "shard index: N=$n: the union of the $n shards' trees is the plain run's, byte for byte (diff -r)"
	else
		not_ok "shard index: N=$n: the union of the $n shards' trees is the plain run's, byte for byte (diff -r)" \
			"$(head -5 "$w/n$n/diff")" "$(cat "$w/n$n/union.log")" "$(cat "$w/n$n"/cv-*.err | head -10)"
	fi

	bad=
	for k in $(seq 1 "$n"); do
		mine=$(shard_inputs "$n" "$k" "$w/all.idx" | sort -u)
		while read -r path count; do
			[ -n "$path" ] || continue
			grep -qxF -- "$path" <<<"$mine" || bad+=" shard $k/$n opened $path (none of its build IDs);"
			[ "$count" = 1 ] || bad+=" shard $k/$n opened $path $count times;"
		done < <(opened "$w/n$n/m-$k.jsonl")
	done
	if [ -z "$bad" ]; then
		ok "shard index: N=$n --shard-by key: each shard opened only inputs holding its build IDs, each once"
	else
		not_ok "shard index: N=$n --shard-by key: each shard opened only inputs holding its build IDs, each once" "$bad"
	fi
done

# together MANIFEST...: each build ID whose debug file and binary are in two
# inputs (a .deb and its -dbg .deb) has both read by one shard; else what was not.
together() {
	"$PYTHON" - "$w/all.idx" "$@" <<'EOF'
import json, sys
debug, binary = {}, {}
for line in open(sys.argv[1]).read().splitlines()[1:]:
    r = json.loads(line)
    if "build_id" in r and "skipped" not in r:
        (debug if r["kind"] == "debug" else binary).setdefault(r["build_id"], set()).add(r["input"])
opened = []
for m in sys.argv[2:]:
    opened.append({json.loads(l)["read"] for l in open(m) if '"read"' in l})
split = 0
for bid, dbg in sorted(debug.items()):
    bins = binary.get(bid, set()) - dbg
    if not bins:
        continue
    split += 1
    if not any(dbg & o and bins & o for o in opened):
        print("%s: %s and %s not read by one shard" % (bid, sorted(dbg), sorted(bins)))
if not split:
    print("no build ID split over two inputs in the fixtures")
EOF
}
# --index with no --shard-by: input, the default there. The same union, no input
# opened by two shards, and a build ID split over two inputs read by one shard.
for n in 2 4; do
	shards "$n" "$w/n$n/bi" --index "$w/all.idx" --shard "@K@/$n" -o "$w/n$n/bi-out-@K@" \
		-j 1 --manifest "$w/n$n/bi-@K@.jsonl"
	rm -rf "$w/n$n/bi-union"
	twice=$(for k in $(seq 1 "$n"); do opened "$w/n$n/bi-$k.jsonl"; done | cut -d' ' -f1 | sort | uniq -d)
	apart=$(together "$w/n$n"/bi-*.jsonl)
	if all_ok "$n" "$w/n$n/bi" && union "$w/n$n/bi-union" "$w/n$n"/bi-out-* >/dev/null &&
		diff -r "$w/ref" "$w/n$n/bi-union" >/dev/null 2>&1 && [ -z "$twice" ] && [ -z "$apart" ]; then
		ok "shard index: N=$n, --index's default (--shard-by input): the plain run's tree, no input opened by two shards, a binary and its debug file in two .debs read by one"
	else
		not_ok "shard index: N=$n, --index's default (--shard-by input): the plain run's tree, no input opened by two shards" \
			"opened twice: $twice" "$apart" "$(cat "$w/n$n"/bi-*.err | head -5)"
	fi
done
# Explicit --shard-by input is that default, shard for shard.
shards 2 "$w/n2/bx" --index "$w/all.idx" --shard "@K@/2" --shard-by input -o "$w/n2/bx-out-@K@" -j 1
if all_ok 2 "$w/n2/bx" && diff -r "$w/n2/bx-out-1" "$w/n2/bi-out-1" >/dev/null 2>&1 &&
	diff -r "$w/n2/bx-out-2" "$w/n2/bi-out-2" >/dev/null 2>&1; then
	ok "shard index: --shard-by input gives each shard what --index's default gives it"
else
	not_ok "shard index: --shard-by input gives each shard what --index's default gives it" \
		"$(cat "$w/n2"/bx-*.err | head -5)"
fi

# lidiagen index hashes an archive as it walks it: every input read about once
# (rchar of /proc/PID/io, read before the process is reaped). Before, an
# archive was read twice: walked, then hashed.
rchar_of() {
	"$PYTHON" - "$@" <<'EOF'
import os, sys
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_RDWR)
    for k in (0, 1, 2):
        os.dup2(fd, k)
    os.execvp(sys.argv[1], sys.argv[1:])
os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
io = dict(l.split(": ") for l in open("/proc/%d/io" % pid).read().splitlines())
os.wait4(pid, 0)
print(io["rchar"])
EOF
}
# The archives alone (their paths as given: the walk's order changes nothing).
mapfile -t archives < <("$PYTHON" -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "archive":
        print(r["input"])' "$w/all.idx")
ar_bytes=$(stat -c %s "${archives[@]}" | paste -sd+ | bc)
# What a run reads besides its inputs (/proc, /sys, a sanitizer's maps): one of a 1-byte file.
printf 'x' >"$w/one-byte"
base=$(rchar_of "$L" index "$w/one-byte" -o "$w/rchar0.idx" -j 2)
ix_read=$(($(rchar_of "$L" index "${archives[@]}" -o "$w/rchar.idx" -j 2) - base))
note "lidiagen index of the ${#archives[@]} archives: $ix_read bytes read (past a run's own $base), the archives $ar_bytes bytes"
if [ "$ix_read" -gt 0 ] && [ "$ix_read" -le $((ar_bytes * 3 / 2)) ] && grep -q '"type":"archive"' "$w/rchar.idx"; then
	ok "shard index: lidiagen index reads each archive once, hashed as walked: $ix_read bytes for $ar_bytes"
else
	not_ok "shard index: lidiagen index reads each archive once, hashed as walked" \
		"$ix_read bytes read for $ar_bytes bytes of archives"
fi

# The plain --shard runs, for the comparison: each reads everything.
shards 4 "$w/plain4" -r dist --shard "@K@/4" -o "$w/plain4-out-@K@" -j 1 --manifest "$w/plain4-@K@.jsonl"
with=$(bytes_read "$w"/n4/m-*.jsonl)
without=$(bytes_read "$w"/plain4-*.jsonl)
one=$(bytes_read "$w/ref.jsonl")
note "bytes read: one plain run $one; 4 shards with the index $with; 4 plain --shard runs $without"
if all_ok 4 "$w/plain4" && [ "$with" -gt 0 ] && [ "$with" -lt "$without" ] && [ "$with" -le "$one" ]; then
	ok "shard index: 4 shards with the index read less than one plain run, and than 4 plain --shard runs"
else
	not_ok "shard index: 4 shards with the index read less than one plain run, and than 4 plain --shard runs" \
		"with $with, one run $one, without $without"
fi

# ---- inputs changed since the index ------------------------------------------------

rm -rf "$w/ch"
cp -a "$w/fx/dist" "$w/ch-dist"
mkdir -p "$w/ch" && mv "$w/ch-dist" "$w/ch/dist"
cd "$w/ch" || exit 0
brun "$w/ch/ix" index -r dist -o "$w/ch/ix.idx"
deb=dist/debs/batch_1.0_amd64.deb
touch -d '2001-02-03 04:05:06' "$deb" dist/pkgs/tools.zip
shards 2 "$w/ch/t" --index "$w/ch/ix.idx" --shard "@K@/2" -o "$w/ch/touched-@K@" --manifest "$w/ch/t-@K@.jsonl"
rm -rf "$w/ch/tu"
if all_ok 2 "$w/ch/t" && union "$w/ch/tu" "$w/ch"/touched-* >/dev/null && diff -r "$w/ref" "$w/ch/tu" >/dev/null; then
	ok "shard index: inputs touched since the index (another mtime, the same bytes) are taken by their SHA-256"
else
	not_ok "shard index: inputs touched since the index are taken by their SHA-256" "$(cat "$w/ch"/t-*.err | head -5)"
fi
# changed_check WHAT: one shard of 1 over the changed tree: exit 1, one line naming $deb, the rest converted.
changed_check() {
	brun "$w/ch/c" --index "$w/ch/ix.idx" -o "$w/ch/c-out" -q
	local lines nfiles
	lines=$(grep -c "^lidiagen: $deb: changed since the index" "$w/ch/c.err")
	nfiles=$(find "$w/ch/c-out" -type f 2>/dev/null | wc -l)
	if [ "$RC" = 1 ] && [ "$lines" = 1 ] && [ "$nfiles" -ge $((nref - 2)) ] && [ "$nfiles" -lt "$nref" ]; then
		ok "shard index: $1: one line naming it, exit 1, the other build IDs converted ($nfiles files)"
	else
		not_ok "shard index: $1: one line naming it, exit 1, the other build IDs converted" \
			"exit $RC, $lines lines, $nfiles files of $nref" "$(first_lines 8 "$w/ch/c.err")"
	fi
	rm -rf "$w/ch/c-out"
}
printf 'x' >>"$deb"
changed_check "an input grown since the index"
cp "$w/fx/$deb" "$deb"
size=$(stat -c %s "$deb")
printf '\x5a' | dd of="$deb" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
changed_check "an input of the same size with other bytes"
cd "$w/fx" || exit 0

# ---- hostile indexes -------------------------------------------------------------------

h=$w/hostile
mkdir -p "$h"
hdr=$run_hdr
in1='{"input":"dist/bin/app1","size":18736,"mtime_ns":1,"type":"elf"}'
bid=0123456789abcdef0123456789abcdef01234567
printf '%s\n' "$(head -n 1 "$w/all.idx")" "$(sed -n 3p "$w/all.idx" | head -c 60)" >"$h/truncated"
sed '1s/"lidia_index":3/"lidia_index":2/' "$w/all.idx" >"$h/version"
printf '%s\n' "$hdr" '{"input":"dist/../../etc/passwd","size":1,"mtime_ns":1,"type":"elf"}' >"$h/dotdot"
printf '%s\n' "$hdr" '{"input":"..","size":1,"mtime_ns":1,"type":"elf"}' >"$h/dotdot2"
printf '%s\n' "$hdr" '{"input":"a","size":123456789012345678901234567890,"mtime_ns":1,"type":"elf"}' >"$h/huge"
printf '%s\n' "$hdr" '{"input":"a","size":9223372036854775807,"mtime_ns":1,"type":"elf"}' >"$h/huge2"
printf '%s\n' "$hdr" '{"input":"a","size":-1,"mtime_ns":1,"type":"elf"}' >"$h/negative"
printf '%s\n' "$hdr" '{"input":"a","size":1.5,"mtime_ns":1,"type":"elf"}' >"$h/float"
printf '%s\n' "$hdr" '{"input":"a","size":1,"mtime_ns":1,"type":"elf","extra":1}' >"$h/unknown"
printf '%s\n' "$hdr" "{\"input\":\"a\",\"members\":[],\"size\":1,\"build_id\":\"$bid\",\"kind\":\"binary\"}" >"$h/orphan"
printf '%s\n' "$hdr" "$in1" '{"input":"dist/bin/app1","members":[],"size":1,"build_id":"zz","kind":"binary"}' >"$h/badid"
printf '%s\n' "$hdr" "$in1" "$in1" >"$h/twice"
printf '%s\n' "$hdr" '{"input":"a\u0000b","size":1,"mtime_ns":1,"type":"elf"}' >"$h/nulesc"
{ echo "$hdr"; printf '{"input":"a\0b","size":1,"mtime_ns":1,"type":"elf"}\n'; } >"$h/nul"
{ echo "$hdr"; printf '{"input":"'; head -c 2100000 /dev/zero | tr '\0' a; printf '"}\n'; } >"$h/long"
: >"$h/empty"
echo 'hello' >"$h/notjson"
printf '%s\n' "${hdr%\}},\"slice\":\"1/2\"}" >"$h/slice"
printf '%s\n' "${hdr/\"none\"/\"go\"}" >"$h/fallback"
printf '%s\n' "$hdr" '{"input":"a","members":["x"],"size":1,"build_id":"'$bid'","kind":"binary","symtab":true,"dwarf":false,"go":false,"gives":[' >"$h/openarray"
printf '%s\n' "$hdr" '{"input":"a","size":1,"mtime_ns":1,"type":"elf","sha256":"xyz"}' >"$h/badsha"
printf '%s\n' "$hdr" '{"input":"a\ud800","size":1,"mtime_ns":1,"type":"elf"}' >"$h/surrogate"
bad=
for f in truncated version dotdot dotdot2 huge huge2 negative float unknown orphan badid twice nulesc nul long empty \
	notjson slice fallback openarray badsha surrogate; do
	rm -rf "$h/out"
	brun "$h/$f" --index "$h/$f" -o "$h/out"
	nl=$(wc -l <"$h/$f.err")
	if [ "$RC" != 1 ] || [ "$nl" != 1 ] || ! grep -q '^lidiagen: ' "$h/$f.err" || [ -e "$h/out" ]; then
		bad+="$f: exit $RC, $nl lines: $(head -c 300 "$h/$f.err");"$'\n'
	fi
done
if [ -z "$bad" ]; then
	ok "shard index: hostile indexes (truncated, version 2, '..', huge and negative numbers, unknown fields, out of place, NUL, 2 MiB line, empty, slice, fallback) are one line and exit 1, nothing written"
else
	not_ok "shard index: hostile indexes are one line and exit 1, nothing written" "$bad"
fi
note "e.g. $(cat "$h/truncated.err") / $(cat "$h/version.err") / $(cat "$h/dotdot.err") / $(cat "$h/huge.err")"

# Merges that must be refused: nothing written.
m=$w/n2
sed '1s/"lidia_index":3/"lidia_index":2/' "$m/slice-2.idx" >"$h/v2-slice"
bad=
mcase() { # NAME SLICE...
	local name=$1
	shift
	rm -f "$h/merged"
	brun "$h/m-$name" index --merge "$@" -o "$h/merged"
	[ "$RC" = 1 ] && [ "$(wc -l <"$h/m-$name.err")" = 1 ] && [ ! -e "$h/merged" ] ||
		bad+="$name: exit $RC: $(cat "$h/m-$name.err");"
}
mcase version "$m/slice-1.idx" "$h/v2-slice"
mcase missing "$m/slice-1.idx"
mcase twice "$m/slice-1.idx" "$m/slice-1.idx"
mcase whole "$m/slice-1.idx" "$w/all.idx"
mcase fallback "$w/all.idx" "$h/fallback"
mcase overlap "$w/all.idx" "$w/n1/merged.idx"
if [ -z "$bad" ]; then
	ok "shard index: merges refused (another version, a slice missing or twice, slice and whole, another fallback, an input twice): one line, exit 1, nothing written"
else
	not_ok "shard index: merges refused: one line, exit 1, nothing written" "$bad"
fi
# Slices of another run (issue 21, part 7): each slice says what run made
# it, and a merge of slices of two runs is refused, one line naming both
# and what differs, nothing written: else the merged index silently misses
# what each run's other slices held.
r=$w/runs
mkdir -p "$r"
# rcase NAME WORD SLICE-ARGS...: slice 2/2 of another run, merged with slice 1/2 of `index -r dist`.
rcase() {
	local name=$1 word=$2
	shift 2
	rm -f "$r/merged"
	brun "$r/$name" index "$@" --shard 2/2 -o "$r/$name.idx"
	brun "$r/m-$name" index --merge "$m/slice-1.idx" "$r/$name.idx" -o "$r/merged"
	[ "$RC" = 1 ] && [ "$(wc -l <"$r/m-$name.err")" = 1 ] && [ ! -e "$r/merged" ] &&
		grep -qF "$r/$name.idx" "$r/m-$name.err" && grep -qF "$m/slice-1.idx" "$r/m-$name.err" &&
		grep -qF -- "$word" "$r/m-$name.err" ||
		bad+="$name: exit $RC: $(cat "$r/m-$name.err");"
}
bad=
rcase tree "other paths" -r dist/bin
rcase trees "other paths" -r dist/bin dist/raw
rcase include "--include='*.deb'" -r dist --include '*.deb'
rcase exclude "--exclude='*.deb'" -r dist --exclude '*.deb'
rcase norecurse "not '-r" dist
rcase fallback "--fallback-key sha256" -r dist --fallback-key sha256
rcase depth "--max-depth=1" -r dist --max-depth 1
rcase member "--max-member-size=1048576" -r dist --max-member-size 1M
if [ -z "$bad" ]; then
	ok "shard index: slices of another run (another tree, --include, --exclude, no -r, --fallback-key, limits) are not merged: one line naming both and what differs, exit 1, nothing written"
else
	not_ok "shard index: slices of another run are not merged: one line naming both and what differs, exit 1, nothing written" "$bad"
fi
note "e.g. $(cat "$r/m-tree.err")" "$(cat "$r/m-include.err")"
# The same run: the paths in another order (and another -j) change nothing, merged or not.
brun "$r/one" index -r dist/bin dist/raw -o "$r/one.idx"
brun "$r/s1" index -r dist/raw dist/bin --shard 1/2 -j 1 -o "$r/s1.idx"
brun "$r/s2" index -r dist/bin dist/raw --shard 2/2 -o "$r/s2.idx"
brun "$r/m-same" index --merge "$r/s1.idx" "$r/s2.idx" -o "$r/same.idx"
if [ "$RC" = 0 ] && cmp -s "$r/same.idx" "$r/one.idx" && [ "$(grep -c '"mtime_ns"' "$r/one.idx")" -ge 2 ]; then
	ok "shard index: slices of one run (the paths given in another order) merge into that run's index, byte for byte"
else
	not_ok "shard index: slices of one run (the paths given in another order) merge into that run's index, byte for byte" \
		"exit $RC: $(cat "$r/m-same.err")" "$(diff "$r/same.idx" "$r/one.idx" | head -4)"
fi
# --reuse of an index made with other options would take records those options did not find.
brun "$r/reuse" index -r dist --include '*.deb' --reuse "$w/all.idx" -o "$r/reuse.idx" -v
brun "$r/fresh" index -r dist --include '*.deb' -o "$r/fresh.idx"
if [ "$RC" = 0 ] && cmp -s "$r/reuse.idx" "$r/fresh.idx" && grep -q "(0 inputs reused)" "$r/reuse.err" &&
	grep -q "^lidiagen: warning: $w/all.idx: cannot be reused (made with other options)" "$r/reuse.err"; then
	ok "shard index: --reuse of an index made with other options is said and reads every input"
else
	not_ok "shard index: --reuse of an index made with other options is said and reads every input" \
		"$(tail -n 3 "$r/reuse.err")" "$(diff "$r/reuse.idx" "$r/fresh.idx" | head -4)"
fi
brun "$h/usage" --index "$w/all.idx" dist -o "$h/out"
if [ "$RC" = 2 ]; then
	ok "shard index: --index with PATHs is a usage error (exit 2)"
else
	not_ok "shard index: --index with PATHs is a usage error (exit 2)" "exit $RC"
fi

# ---- --reuse ---------------------------------------------------------------------------

brun "$w/re1" index -r dist --reuse "$w/all.idx" -o "$w/re1.idx" -v
n_in=$(grep -c '"mtime_ns"' "$w/all.idx")
if [ "$RC" = 0 ] && cmp -s "$w/re1.idx" "$w/all.idx" && grep -q "($n_in inputs reused)" "$w/re1.err"; then
	ok "shard index: --reuse over an unchanged tree: the same bytes, every input reused unread"
else
	not_ok "shard index: --reuse over an unchanged tree: the same bytes, every input reused unread" \
		"exit $RC" "$(tail -n 2 "$w/re1.err")" "$(diff "$w/re1.idx" "$w/all.idx" | head -4)"
fi
cp -a dist "$w/re-dist"
touch -d '2001-02-03 04:05:06' "$w/re-dist/pkgs/tools.zip"
(cd "$w" && mv re-dist dist-re && mkdir -p re && mv dist-re re/dist)
(cd "$w/re" && timeout "$T" "$L" index -r dist --reuse "$w/all.idx" -o "$w/re2.idx" -j 1 2>"$w/re2.err")
RC=$?
if [ "$RC" = 0 ] && grep -q "($n_in inputs reused)" "$w/re2.err" &&
	grep -q '"input":"dist/pkgs/tools.zip","size":[0-9]*,"mtime_ns":981173106000000000' "$w/re2.idx" &&
	diff <(sed 's/"mtime_ns":[0-9]*//' "$w/re2.idx") <(sed 's/"mtime_ns":[0-9]*//' "$w/all.idx") >/dev/null; then
	ok "shard index: --reuse: an input touched (another mtime, same bytes) is taken by its SHA-256, with its new mtime"
else
	not_ok "shard index: --reuse: an input touched is taken by its SHA-256, with its new mtime" \
		"exit $RC" "$(tail -n 2 "$w/re2.err")"
fi

# ---- doc/sharding.md's recipes, as N local processes --------------------------------------

missing=
for ci in github k8s; do
	doc_block "shard-recipe: $ci" "$doc" >"$w/$ci.yaml" || missing+=" recipe:$ci"
	for s in index merge convert; do
		if doc_block "shard-step: $ci $s" "$doc" >"$w/$ci.$s.sh"; then
			while IFS= read -r line; do
				grep -qF -- "$line" "$w/$ci.yaml" || missing+=" $ci $s: not in the YAML: $line"
			done <"$w/$ci.$s.sh"
		else
			missing+=" step:$ci/$s"
		fi
	done
done
if [ -z "$missing" ]; then
	ok "shard index: doc/sharding.md has each recipe and step once, each step verbatim in its YAML"
else
	not_ok "shard index: doc/sharding.md has each recipe and step once, each step verbatim in its YAML" "$missing"
fi
grep -q 'completionMode: Indexed' "$w/k8s.yaml" && grep -q 'JOB_COMPLETION_INDEX + 1' "$w/k8s.convert.sh" ||
	not_ok "shard index: the Kubernetes recipe is an Indexed Job with K = JOB_COMPLETION_INDEX + 1"

# recipe CI N: the CI's steps in a fresh workspace (dist copied: new mtimes, as
# downloaded artifacts have), each matrix step as N processes; sets RDIR.
recipe() {
	local ci=$1 n=$2 k pids=
	RDIR=$w/recipe-$ci-$n
	rm -rf "$RDIR"
	mkdir -p "$RDIR"
	cp -r dist "$RDIR/dist"
	for s in index merge convert; do
		for k in $(seq 1 "$n"); do
			[ "$s" = merge ] && [ "$k" -gt 1 ] && break
			(cd "$RDIR" && PATH=$(dirname "$L"):$PATH SLICE=$k SLICES=$n SHARD=$k SHARDS=$n \
				JOB_COMPLETION_INDEX=$((k - 1)) timeout -k 5 "$T" sh -e "$w/$ci.$s.sh" \
				>"$RDIR/$s-$k.log" 2>&1; echo $? >"$RDIR/$s-$k.rc") &
		done
		wait
	done
}
for n in 2 4; do
	recipe github "$n"
	rm -rf "$RDIR/union"
	if [ "$(cat "$RDIR"/*.rc | sort -u)" = 0 ] && union "$RDIR/union" "$RDIR"/out-* >/dev/null &&
		diff -r "$w/ref" "$RDIR/union" >/dev/null 2>&1; then
		ok "shard index: GitHub Actions recipe, $n index jobs, merge, $n convert jobs: the plain run's tree"
	else
		not_ok "shard index: GitHub Actions recipe, $n jobs: the plain run's tree" "$(cat "$RDIR"/*.log | head -10)"
	fi
	recipe k8s "$n"
	if [ "$(cat "$RDIR"/*.rc | sort -u)" = 0 ] && diff -r "$w/ref" "$RDIR/out" >/dev/null 2>&1; then
		ok "shard index: Kubernetes Indexed Jobs, $n pods (JOB_COMPLETION_INDEX 0..$((n - 1))) into one out/: the plain run's tree"
	else
		not_ok "shard index: Kubernetes Indexed Jobs, $n pods: the plain run's tree" "$(cat "$RDIR"/*.log | head -10)"
	fi
done
