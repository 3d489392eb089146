#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/s3_publish.sh [LIDIAGEN]: publishing a tree of lidia files to S3,
# `lidiagen upload TREE s3://BUCKET/p` against `aws s3 sync TREE s3://BUCKET/p2`
# (Debian's awscli, /usr/bin/aws), both on the same local s3rver
# (tests/lib/s3rver.sh; nothing leaves the machine). Not part of `make test`.
#
# The tree: the GNU build IDs of this machine's shared libraries and
# programs (/usr/lib/x86_64-linux-gnu/*.so* and /usr/bin, a few hundred),
# converted with `lidiagen -j2 --symbols-only`. Three cases, each measured
# BENCH_S3_RUNS times (each run into new, empty prefixes):
#   first    the first publish, into an empty prefix
#   no-op    the same again: the bucket has it all
#   fresh    after `touch` of every file (new dates, the same bytes), as on a
#            fresh CI runner that converted again: aws s3 sync compares sizes
#            and dates, so it sends everything again; lidiagen compares what
#            the objects hold
# For each: wall time and CPU time (user+sys) of the process and its peak RSS
# (/usr/bin/time), the CPU time s3rver spent meanwhile (/proc), the requests
# it answered by method (its log), and the bytes sent: the sizes of the files
# whose keys were PUT (for both tools, from s3rver's log), and lidiagen's own
# summary beside it. Medians over the runs
# (peak RSS: the largest). The aims (the S3 publishing issue):
#   - first publish at least 2x faster (wall) than aws s3 sync
#   - a no-op re-run: at most one request per key (+1: the bucket check),
#     no PUT, no byte sent
#
# Environment:
#   BENCH_S3_RUNS    runs of each case (default 3)
#   BENCH_S3_INPUTS  what the tree is converted from (default: the paths above)
#   BENCH_S3_JOBS    lidiagen upload -j (default: lidiagen's own default)
#   BENCH_STRICT=1   exit 1 when an aim is missed (default: exit 0, errors only)
#   BENCH_KEEP=1     keep the temporary directory (the tree, s3rver's data and log)
# Exit status: 0 the bench ran, 1 an aim missed with BENCH_STRICT=1, 2 it could not run.
# shellcheck disable=SC2059 # the table's printf format is in a variable
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
LIDIAGEN=${1:-$root/build/lidiagen}
case $LIDIAGEN in /*) ;; *) LIDIAGEN=$PWD/$LIDIAGEN ;; esac
RUNS=${BENCH_S3_RUNS:-3}
AWS=/usr/bin/aws
BUCKET=lidia-bench

die() { echo "bench: $*" >&2; exit 2; }
say() { echo "bench: $*" >&2; }

[ -x "$LIDIAGEN" ] || die "$LIDIAGEN: not an executable (run make first)"
[ "$RUNS" -ge 1 ] 2>/dev/null || die "BENCH_S3_RUNS must be a number >= 1"
[ -x "$AWS" ] || die "$AWS (Debian's awscli) is not installed: apt-get install awscli"
/usr/bin/time -f %M true >/dev/null 2>&1 || die "/usr/bin/time is missing: apt-get install time"
command -v node >/dev/null || die "node is not installed (./quickstart.sh test installs nodejs and s3rver)"

# TEST_TMP set, so that tests/lib/env.sh (sourced by nothing here) is not
# needed; s3rver.sh adds the server's stop to the EXIT trap set here.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lidia-s3bench.XXXXXX")
if [ "${BENCH_KEEP:-0}" = 1 ]; then
	trap 'say "kept $tmp"' EXIT
else
	trap 'rm -rf "$tmp"' EXIT
fi
. "$root/tests/lib/s3rver.sh"
[ -x "$S3RVER_BIN" ] || die "$S3RVER_BIN is missing (./quickstart.sh test installs it)"
# Credentials s3rver takes, no AWS config file, no instance metadata.
s3_env "$tmp/home"

# ---- helpers ----------------------------------------------------------------------
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maximum() { sort -g | tail -n 1; }
calc() { awk "BEGIN { printf \"$1\\n\", $2 }"; }
holds() { awk "BEGIN { exit !($1) }"; }
# Percent of all CPUs busy over one second (other work: call it while idle).
cpu_busy() {
	local a b
	a=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6; exit }' /proc/stat)
	sleep 1
	b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6; exit }' /proc/stat)
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ");
		busy = y[1] - x[1]; all = busy + y[2] - x[2];
		printf "%d\n", (all > 0) ? 100 * busy / all + 0.5 : 0 }'
}
# ratio A B: A/B with 2 decimals, "-" when B is 0 (and "0/0" when both are).
ratio() {
	if holds "$2 == 0"; then
		if holds "$1 == 0"; then echo "0/0"; else echo "-"; fi
	else
		calc %.2f "$1 / $2"
	fi
}

# ---- the tree -------------------------------------------------------------------------
tree=$tmp/tree
if [ -n "${BENCH_S3_INPUTS:-}" ]; then
	read -r -a inputs <<<"$BENCH_S3_INPUTS"
else
	inputs=(/usr/lib/x86_64-linux-gnu/*.so* /usr/bin)
fi
say "converting ${#inputs[@]} paths into the tree (lidiagen -j2 -r --symbols-only)"
# Some inputs are not ELF or fail (linker scripts named .so, scripts): the
# exit status says so, and does not matter here; what was written does.
"$LIDIAGEN" -q -j2 -r --symbols-only "${inputs[@]}" -o "$tree" >"$tmp/convert.log" 2>&1
# "KEY SIZE" of every file, the keys as they are under a prefix.
(cd "$tree" && find . -type f -printf '%P %s\n' | LC_ALL=C sort) >"$tmp/sizes"
nfiles=$(grep -c . "$tmp/sizes")
treebytes=$(awk '{ s += $2 } END { print s + 0 }' "$tmp/sizes")
[ "$nfiles" -gt 0 ] || { tail -n 5 "$tmp/convert.log" >&2; die "lidiagen wrote no file"; }

s3rver_start "$tmp/srv" "$BUCKET" >"$tmp/s3rver-start.txt" || { cat "$tmp/s3rver-start.txt" >&2; die "s3rver does not start"; }
E=(--endpoint-url "$S3RVER_URL")
J=()
[ -n "${BENCH_S3_JOBS:-}" ] && J=(-j "$BENCH_S3_JOBS")

# ---- one measurement ----------------------------------------------------------------------
# measure CASE TOOL RUN PREFIX CMD...: run CMD under /usr/bin/time with the
# server's log marked; record into $tmp/res "CASE TOOL RUN rc wall cpu rssKiB
# HEAD PUT GET POST other bytes_logged lidiagen_MiB server_cpu".
: >"$tmp/res"
# The server's CPU time so far, in clock ticks (utime + stime, all its
# threads): on a 2-CPU machine a local s3rver can set the pace, and this shows it.
srv_ticks() { awk '{ print $14 + $15 }' "/proc/$S3RVER_PID/stat"; }
TCK=$(getconf CLK_TCK)
measure() {
	local case=$1 tool=$2 run=$3 prefix=$4 rc wall u s rss req mib t0 t1
	shift 4
	s3rver_mark
	t0=$(srv_ticks)
	/usr/bin/time -o "$tmp/time" -f '%e %U %S %M' "$@" >"$tmp/cmd.out" 2>"$tmp/cmd.err"
	rc=$?
	t1=$(srv_ticks)
	read -r wall u s rss < <(tail -n 1 "$tmp/time")
	s3rver_requests >"$tmp/req"
	# Bytes: the size of each file whose key got a PUT (a multipart upload's
	# parts are PUTs of one key: counted once, its whole size).
	bytes=$(awk -v p="/$BUCKET/$prefix/" 'NR == FNR { size[$1] = $2; next }
		$1 == "PUT" { k = $2; sub(/\?.*/, "", k); if (index(k, p) == 1) put[substr(k, length(p) + 1)] = 1 }
		END { for (k in put) s += size[k]; print s + 0 }' "$tmp/sizes" "$tmp/req")
	mib=-
	[ "$tool" = lidiagen ] && mib=$(tail -n 1 "$tmp/cmd.err" | sed -n 's/.*, \([0-9.]*\) MiB sent$/\1/p')
	req=$(awk '{ n[$1]++ } END { o = 0; for (m in n) if (m != "HEAD" && m != "PUT" && m != "GET" && m != "POST") o += n[m];
		printf "%d %d %d %d %d", n["HEAD"], n["PUT"], n["GET"], n["POST"], o }' "$tmp/req")
	echo "$case $tool $run $rc $wall $(calc %.2f "$u + $s") $rss $req $bytes ${mib:-?} $(calc %.2f "($t1 - $t0) / $TCK")" >>"$tmp/res"
	if [ "$rc" -ne 0 ]; then
		say "$case/$tool/run $run: exit $rc"
		tail -n 5 "$tmp/cmd.err" >&2
	fi
	[ "$tool" = lidiagen ] && tail -n 1 "$tmp/cmd.err" >"$tmp/summary-$case-$run"
}

# check_tree PREFIX: awscli's listing of the prefix is the tree's keys and sizes.
check_tree() {
	"$AWS" "${E[@]}" s3 ls --recursive "s3://$BUCKET/$1/" 2>&1 |
		awk -v p="$1/" '{ k = $4; sub("^" p, "", k); print k, $3 }' | LC_ALL=C sort >"$tmp/listed"
	cmp -s "$tmp/listed" "$tmp/sizes" || say "WARNING: s3://$BUCKET/$1 does not list the tree's $nfiles keys and sizes"
}

echo "== publishing to S3: lidiagen upload vs aws s3 sync, on a local s3rver"
echo "lidiagen:  $LIDIAGEN ($("$LIDIAGEN" --version 2>/dev/null | head -n 1))${J[*]:+, upload ${J[*]}}"
echo "awscli:    $("$AWS" --version 2>&1 | head -n 1) (aws s3 sync --only-show-errors)"
echo "s3rver:    $(node -p 'require(process.argv[1]).version' "$(dirname "$S3RVER_BIN")/../s3rver/package.json" 2>/dev/null), node $(node --version), at $S3RVER_URL"
echo "tree:      $nfiles lidia files (symbols only), $(calc %.1f "$treebytes / 1048576") MiB, from ${#inputs[@]} paths"
echo "machine:   $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) CPUs"
echo "runs:      $RUNS of each case; medians (peak RSS: the largest)"
busy_start=$(cpu_busy)
echo "busy:      ${busy_start}% of the CPUs used by other work over 1 s before starting"
echo

for ((r = 1; r <= RUNS; r++)); do
	say "run $r of $RUNS"
	# Dated before any upload, so that the no-op case is one for aws s3 sync
	# too (it sends a file newer than its object); the fresh case re-dates them.
	find "$tree" -type f -exec touch -d '2 hours ago' {} +
	measure first lidiagen "$r" "p$r" "$LIDIAGEN" upload -q "${J[@]}" "$tree" "s3://$BUCKET/p$r" "${E[@]}"
	measure first aws "$r" "q$r" "$AWS" "${E[@]}" s3 sync --only-show-errors "$tree" "s3://$BUCKET/q$r"
	[ "$r" = 1 ] && { check_tree "p$r"; check_tree "q$r"; }
	measure no-op lidiagen "$r" "p$r" "$LIDIAGEN" upload -q "${J[@]}" "$tree" "s3://$BUCKET/p$r" "${E[@]}"
	measure no-op aws "$r" "q$r" "$AWS" "${E[@]}" s3 sync --only-show-errors "$tree" "s3://$BUCKET/q$r"
	# A fresh runner: the same bytes, dated now (after the objects' dates).
	sleep 1
	find "$tree" -type f -exec touch {} +
	measure fresh lidiagen "$r" "p$r" "$LIDIAGEN" upload -q "${J[@]}" "$tree" "s3://$BUCKET/p$r" "${E[@]}"
	measure fresh aws "$r" "q$r" "$AWS" "${E[@]}" s3 sync --only-show-errors "$tree" "s3://$BUCKET/q$r"
done

# ---- the table ------------------------------------------------------------------------------
# col CASE TOOL N: the median of column N of that case and tool over the runs.
col() { awk -v c="$1" -v t="$2" -v n="$3" '$1 == c && $2 == t { print $n }' "$tmp/res" | median; }
colmax() { awk -v c="$1" -v t="$2" -v n="$3" '$1 == c && $2 == t { print $n }' "$tmp/res" | maximum; }
declare -A V
for c in first no-op fresh; do
	for t in lidiagen aws; do
		V[$c,$t,rc]=$(colmax "$c" "$t" 4)
		V[$c,$t,wall]=$(col "$c" "$t" 5)
		V[$c,$t,cpu]=$(col "$c" "$t" 6)
		V[$c,$t,rss]=$(calc %.0f "$(colmax "$c" "$t" 7) / 1024")
		V[$c,$t,head]=$(col "$c" "$t" 8)
		V[$c,$t,put]=$(col "$c" "$t" 9)
		V[$c,$t,get]=$(col "$c" "$t" 10)
		V[$c,$t,post]=$(col "$c" "$t" 11)
		V[$c,$t,other]=$(col "$c" "$t" 12)
		V[$c,$t,req]=$(calc %d "${V[$c,$t,head]} + ${V[$c,$t,put]} + ${V[$c,$t,get]} + ${V[$c,$t,post]} + ${V[$c,$t,other]}")
		V[$c,$t,bytes]=$(col "$c" "$t" 13)
		V[$c,$t,mib]=$(calc %.1f "${V[$c,$t,bytes]} / 1048576")
		V[$c,$t,srv]=$(col "$c" "$t" 15)
	done
done

# One format for the header and the rows (hence SC2059 off, above).
fmt='%-8s %-10s %7s %7s %7s %9s %6s %6s %6s %6s %7s %10s %14s\n'
printf "$fmt" case tool "wall s" "cpu s" "RSS MiB" "s3rver s" HEAD PUT GET POST total "MiB sent" "(own summary)"
for c in first no-op fresh; do
	for t in lidiagen aws; do
		own=
		[ "$t" = lidiagen ] && own="($(awk -v c="$c" '$1 == c && $2 == "lidiagen" { print $14 }' "$tmp/res" | median) MiB)"
		printf "$fmt" "$c" "$t" "${V[$c,$t,wall]}" "${V[$c,$t,cpu]}" "${V[$c,$t,rss]}" "${V[$c,$t,srv]}" "${V[$c,$t,head]}" \
			"${V[$c,$t,put]}" "${V[$c,$t,get]}" "${V[$c,$t,post]}" "${V[$c,$t,req]}" "${V[$c,$t,mib]}" "$own"
	done
	printf "$fmt" "" "lidia/aws" "$(ratio "${V[$c,lidiagen,wall]}" "${V[$c,aws,wall]}")" \
		"$(ratio "${V[$c,lidiagen,cpu]}" "${V[$c,aws,cpu]}")" "$(ratio "${V[$c,lidiagen,rss]}" "${V[$c,aws,rss]}")" \
		"$(ratio "${V[$c,lidiagen,srv]}" "${V[$c,aws,srv]}")" "" "" "" "" "$(ratio "${V[$c,lidiagen,req]}" "${V[$c,aws,req]}")" \
		"$(ratio "${V[$c,lidiagen,bytes]}" "${V[$c,aws,bytes]}")" ""
done
for c in first no-op fresh; do
	for t in lidiagen aws; do
		[ "${V[$c,$t,rc]}" = 0 ] || echo "WARNING: $t exited with status ${V[$c,$t,rc]} in the $c case"
	done
done
busy_end=$(cpu_busy)
if [ "$busy_start" -gt 20 ] || [ "$busy_end" -gt 20 ]; then
	echo "WARNING: other work used ${busy_start}% of the CPUs before the benchmark and ${busy_end}% after it:" \
		"wall times are unreliable; run again when the machine is idle"
fi
echo

# ---- the aims -------------------------------------------------------------------------------
misses=()
verdict() { # NAME CONDITION TEXT
	local v=PASS
	holds "$2" || { v=MISS; misses+=("$1"); }
	echo "$v  $3"
}
echo "== aims"
speed=$(ratio "${V[first,aws,wall]}" "${V[first,lidiagen,wall]}")
verdict first "${V[first,aws,wall]} >= 2 * ${V[first,lidiagen,wall]}" \
	"first publish at least 2x faster than aws s3 sync (wall): ${V[first,lidiagen,wall]} s vs ${V[first,aws,wall]} s = ${speed}x"
verdict no-op "${V[no-op,lidiagen,req]} <= $nfiles + 1 && ${V[no-op,lidiagen,put]} == 0 && ${V[no-op,lidiagen,bytes]} == 0" \
	"no-op re-run: at most one request per key (+1 bucket check): ${V[no-op,lidiagen,req]} requests for $nfiles keys, ${V[no-op,lidiagen,put]} PUT, ${V[no-op,lidiagen,mib]} MiB sent"
verdict fresh "${V[fresh,lidiagen,put]} == 0" \
	"fresh runner (touched files): lidiagen sends nothing (${V[fresh,lidiagen,put]} PUT), aws s3 sync sends ${V[fresh,aws,put]} PUT, ${V[fresh,aws,mib]} MiB"
echo "note: aws s3 sync's no-op makes $(calc %d "${V[no-op,aws,req]}") request(s) (listing pages) for $nfiles keys, as it trusts dates: the fresh case shows the cost"
echo "note: s3rver is node (one JavaScript thread, file I/O on helper threads): when its CPU time (s3rver s) nears the wall time, the server sets the pace, not the client"
if [ ${#misses[@]} -eq 0 ]; then
	echo "bench: all 3 aims PASS"
else
	echo "bench: ${#misses[@]} aim(s) MISS: ${misses[*]}"
	[ "${BENCH_STRICT:-0}" = 1 ] && exit 1
fi
exit 0
