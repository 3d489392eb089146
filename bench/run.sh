#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/run.sh [LIDIAGEN]: how fast lidiagen converts two large real binaries,
# how much memory it takes, and how fast the library looks addresses up.
# See bench/README.md. `make bench` runs it with the freshly built lidiagen.
#
# Environment:
#   BENCH_CACHE    where the .deb inputs are downloaded and unpacked
#                  (default: bench/.cache)
#   BENCH_RUNS     timed conversions per input, after one warm-up (default 10, at least 5)
#   BENCH_LOOKUPS  addresses per lookup set (default 10000000)
#   BENCH_LIB      liblidia.a to link lookup_bench with (default: beside LIDIAGEN)
#   BENCH_STRICT=1 exit 1 when any target is missed (default: exit 0, errors only)
#   BENCH_KEEP=1   keep the temporary directory with the outputs
#   BENCH_OPTS     lidiagen options, instead of --symbols-only (when lidiagen has it);
#                  BENCH_OPTS= (empty) measures the full default conversion
#   BENCH_NO_HYPERFINE=1  time with the shell loop even when hyperfine is installed
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
LIDIAGEN=${1:-$root/build/lidiagen}
case $LIDIAGEN in /*) ;; *) LIDIAGEN=$PWD/$LIDIAGEN ;; esac
CACHE=${BENCH_CACHE:-$here/.cache}
RUNS=${BENCH_RUNS:-10}
LOOKUPS=${BENCH_LOOKUPS:-10000000}
LIB=${BENCH_LIB:-$(dirname "$LIDIAGEN")/liblidia.a}
[ -f "$LIB" ] || LIB=$root/build/liblidia.a

die() { echo "bench: $*" >&2; exit 2; }
say() { echo "bench: $*" >&2; }

[ -x "$LIDIAGEN" ] || die "$LIDIAGEN: not an executable (run make first)"
[ -f "$LIB" ] || die "$LIB: no liblidia.a (run make first)"
[ "$RUNS" -ge 5 ] 2>/dev/null || die "BENCH_RUNS must be a number >= 5"
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
	die "needs apt-get and dpkg-deb (a Debian machine)"
fi

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }

# GNU time for peak RSS.
if ! /usr/bin/time -f %M true >/dev/null 2>&1; then
	say "installing the 'time' package for /usr/bin/time"
	as_root apt-get install -y -q time >/dev/null 2>&1 ||
		{ as_root apt-get update -q >/dev/null 2>&1 &&
		  as_root apt-get install -y -q time >/dev/null 2>&1; } ||
		die "cannot install the 'time' package (needed for peak RSS)"
fi

# ---- inputs -------------------------------------------------------------------
# name | Debian package | path in the package (a glob) | version the reference figures are for
INPUTS=(
	"rclone|rclone|usr/bin/rclone|1.60.1+dfsg-2+b5"
	"libLLVM-15.so.1|libllvm15|usr/lib/*/libLLVM-15.so.1|1:15.0.6-4+b1"
)
# Pyroscope's own Go writer on this machine class (given by the project):
# name | wall seconds low high | peak RSS MiB low high
REFS=(
	"rclone|0.40|0.62|80|80"
	"libLLVM-15.so.1|0.17|0.27|33|37"
)
SPEEDUP=4     # lidiagen must be at least this much faster than the low reference time
RSS_FRAC=0.5  # and use at most this fraction of the low reference RSS
LOOKUP_TARGET=5000000

apt_opts=()
[ "$(id -u)" = 0 ] && apt_opts=(-o APT::Sandbox::User=root)

# Download package $1 into $CACHE/debs unless a .deb of it is there already.
fetch_deb() {
	local pkg=$1 deb
	mkdir -p "$CACHE/debs"
	deb=$(compgen -G "$CACHE/debs/${pkg}_*.deb" | head -n 1 || true)
	if [ -z "$deb" ]; then
		say "downloading $pkg"
		if ! (cd "$CACHE/debs" && apt-get "${apt_opts[@]}" -q download "$pkg" >/dev/null); then
			say "apt-get download $pkg failed; running apt-get update"
			as_root apt-get update -q >/dev/null || die "apt-get update failed"
			(cd "$CACHE/debs" && apt-get "${apt_opts[@]}" -q download "$pkg" >/dev/null) ||
				die "apt-get download $pkg failed"
		fi
		deb=$(compgen -G "$CACHE/debs/${pkg}_*.deb" | head -n 1)
		[ -n "$deb" ] || die "apt-get download $pkg left no .deb"
	fi
	echo "$deb"
}

# Unpack a .deb once into $CACHE/root-<pkg>; echo the path of $2 inside it.
unpack() {
	local deb=$1 glob=$2 pkg dir f
	pkg=$(dpkg-deb -f "$deb" Package)
	dir=$CACHE/root-$pkg
	if [ ! -e "$dir/.done" ] || [ "$(cat "$dir/.done")" != "$(basename "$deb")" ]; then
		rm -rf "$dir"
		mkdir -p "$dir"
		dpkg-deb -x "$deb" "$dir" || die "dpkg-deb -x $deb failed"
		basename "$deb" >"$dir/.done"
	fi
	for f in "$dir"/$glob; do
		[ -f "$f" ] && { echo "$f"; return 0; }
	done
	die "$deb has no $glob"
}

# ---- helpers ----------------------------------------------------------------------
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minimum() { sort -g | head -n 1; }
maximum() { sort -g | tail -n 1; }
calc() { awk "BEGIN { printf \"$1\\n\", $2 }"; }
# True when awk's expression $1 holds.
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

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lidia-bench.XXXXXX")
if [ "${BENCH_KEEP:-0}" = 1 ]; then
	trap 'say "kept $tmp"' EXIT
else
	trap 'rm -rf "$tmp"' EXIT
fi

conv_args=()
if [ -n "${BENCH_OPTS+set}" ]; then
	read -r -a conv_args <<<"$BENCH_OPTS"
elif { "$LIDIAGEN" --help 2>&1; "$LIDIAGEN" convert --help 2>&1; } | grep -- --symbols-only >/dev/null; then
	conv_args+=(--symbols-only)
fi

use_hyperfine=0
if command -v hyperfine >/dev/null && [ "${BENCH_NO_HYPERFINE:-0}" != 1 ]; then
	use_hyperfine=1
fi

echo "== lidiagen benchmark"
echo "lidiagen:  $LIDIAGEN ($("$LIDIAGEN" --version 2>/dev/null | head -n 1))"
if [ -n "${BENCH_OPTS+set}" ]; then
	echo "options:   ${conv_args[*]:-(none)} (from BENCH_OPTS)"
else
	echo "options:   ${conv_args[*]:-(none: this lidiagen has no --symbols-only)}"
fi
echo "machine:   $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) CPUs, $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
if [ $use_hyperfine = 1 ]; then
	echo "timing:    hyperfine $(hyperfine --version | awk '{ print $2 }'), 1 warm-up + $RUNS runs; median wall, mean user+sys"
else
	echo "timing:    shell loop (bash time), 1 warm-up + $RUNS runs; median wall, median user+sys"
fi
echo "memory:    /usr/bin/time -f %M over $RUNS more runs; the largest peak RSS"
busy_start=$(cpu_busy)
echo "busy:      ${busy_start}% of the CPUs used by other work over 1 s before starting"
echo

# ---- conversion -----------------------------------------------------------------
declare -A WALL WMIN WMAX CPU RSS RSSKB OUT OUTSIZE FUNCS INLINES LROWS INSIZE
misses=()
passes=0
uncounted=0
names=()

for spec in "${INPUTS[@]}"; do
	IFS='|' read -r name pkg glob refver <<<"$spec"
	names+=("$name")
	deb=$(fetch_deb "$pkg")
	ver=$(dpkg-deb -f "$deb" Version)
	input=$(unpack "$deb" "$glob")
	INSIZE[$name]=$(stat -c %s "$input")
	echo "input $name: $pkg $ver, $(calc %.1f "${INSIZE[$name]} / 1048576") MiB ($input)"
	[ "$ver" = "$refver" ] ||
		echo "  note: the reference figures are for $pkg $refver, not $ver"

	out=$tmp/out-$pkg
	cmd=("$LIDIAGEN" "${conv_args[@]}" -q "$input" -o "$out")
	# Warm-up: page cache for the input, and a check that it works at all.
	rm -rf "$out"
	"${cmd[@]}" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; die "lidiagen failed on $input"; }
	OUT[$name]=$(find "$out" -type f | head -n 1)
	[ -n "${OUT[$name]}" ] || die "lidiagen wrote nothing for $input"
	cp "${OUT[$name]}" "$tmp/$pkg.lidia"
	OUT[$name]=$tmp/$pkg.lidia
	OUTSIZE[$name]=$(stat -c %s "${OUT[$name]}")
	# "content  N functions (depth 0), N inline ranges, N line rows"
	read -r f i l < <("$LIDIAGEN" info "${OUT[$name]}" |
		awk '/^ *content/ { print $2, $6, $9; exit }')
	FUNCS[$name]=${f:-?}
	INLINES[$name]=${i:-?}
	LROWS[$name]=${l:-?}

	: >"$tmp/wall"
	: >"$tmp/cpu"
	if [ $use_hyperfine = 1 ]; then
		printf -v qcmd '%q ' "${cmd[@]}"
		hyperfine -N --style none --warmup 1 --runs "$RUNS" --prepare "rm -rf $out" \
			--export-json "$tmp/hf.json" -- "$qcmd" >/dev/null 2>&1 ||
			hyperfine --style none --warmup 1 --runs "$RUNS" --prepare "rm -rf $out" \
				--export-json "$tmp/hf.json" -- "$qcmd" >/dev/null ||
			die "hyperfine failed on $input"
		# The per-run wall times, then the mean user and system times.
		tr -d ' \n' <"$tmp/hf.json" | sed 's/.*"times":\[\([^]]*\)\].*/\1/' | tr ',' '\n' >"$tmp/wall"
		u=$(tr -d ' \n' <"$tmp/hf.json" | sed 's/.*"user":\([0-9.eE+-]*\).*/\1/')
		s=$(tr -d ' \n' <"$tmp/hf.json" | sed 's/.*"system":\([0-9.eE+-]*\).*/\1/')
		calc %.6f "$u + $s" >"$tmp/cpu"
	else
		TIMEFORMAT='%3R %3U %3S'
		for ((i = 0; i < RUNS; i++)); do
			rm -rf "$out"
			{ time "${cmd[@]}" >/dev/null 2>>"$tmp/log"; } 2>"$tmp/t" ||
				{ cat "$tmp/log" >&2; die "lidiagen failed on $input"; }
			read -r r u s <"$tmp/t"
			echo "$r" >>"$tmp/wall"
			calc %.3f "$u + $s" >>"$tmp/cpu"
		done
	fi
	WALL[$name]=$(median <"$tmp/wall")
	WMIN[$name]=$(minimum <"$tmp/wall")
	WMAX[$name]=$(maximum <"$tmp/wall")
	CPU[$name]=$(median <"$tmp/cpu")

	: >"$tmp/rss"
	for ((i = 0; i < RUNS; i++)); do
		rm -rf "$out"
		/usr/bin/time -o "$tmp/t" -f %M "${cmd[@]}" >/dev/null 2>>"$tmp/log" ||
			{ cat "$tmp/log" >&2; die "lidiagen failed on $input"; }
		tail -n 1 "$tmp/t" >>"$tmp/rss"
	done
	RSS[$name]=$(calc %.2f "$(maximum <"$tmp/rss") / 1024")
	RSSKB[$name]=$(maximum <"$tmp/rss")
	rm -rf "$out"
done
echo

printf '%-16s %7s %9s %8s %9s %8s  %-28s %9s %10s\n' input "in MiB" functions inlines "line rows" "out MiB" \
	"wall s: median (min-max)" "cpu s u+s" "peak RSS"
for name in "${names[@]}"; do
	printf '%-16s %7.1f %9s %8s %9s %8.2f  %.4f (%.4f-%.4f)%-6s %9.4f %6.2f MiB\n' "$name" \
		"$(calc %.3f "${INSIZE[$name]} / 1048576")" "${FUNCS[$name]}" "${INLINES[$name]}" "${LROWS[$name]}" \
		"$(calc %.3f "${OUTSIZE[$name]} / 1048576")" "${WALL[$name]}" "${WMIN[$name]}" \
		"${WMAX[$name]}" "" "${CPU[$name]}" "${RSS[$name]}"
done
echo

echo "== conversion vs Pyroscope's Go writer (target: >= ${SPEEDUP}x faster than its low time, <= ${RSS_FRAC}x its low RSS)"
summary=()
for ref in "${REFS[@]}"; do
	IFS='|' read -r name tlo thi rlo rhi <<<"$ref"
	w=${WALL[$name]}
	r=${RSS[$name]}
	tt=$(calc %.4f "$tlo / $SPEEDUP")
	rt=$(calc %.2f "$rlo * $RSS_FRAC")
	x=$(calc %.1f "$tlo / $w")
	xhi=$(calc %.1f "$thi / $w")
	rx=$(calc %.2f "$r / $rlo")
	if holds "$w <= $tt"; then tv=PASS; passes=$((passes + 1)); else tv=MISS; misses+=("$name time"); fi
	if holds "${RSSKB[$name]} <= $rt * 1024"; then rv=PASS; passes=$((passes + 1)); else rv=MISS; misses+=("$name RSS"); fi
	rref=$rlo; [ "$rlo" = "$rhi" ] || rref="$rlo-$rhi"
	if holds "$w <= $tlo"; then speed="${x}x faster than"; else speed="${x}x the speed of (slower than)"; fi
	echo "$name: $(calc %.4f "$w") s = $speed $tlo s (${x}-${xhi}x vs $tlo-$thi s)  $tv (target <= $tt s)"
	echo "$(printf '%*s' ${#name} '')  RSS $r MiB = ${rx}x of $rlo MiB (ref $rref MiB)  $rv (target <= $rt MiB)"
	if [ "${INLINES[$name]}" != 0 ] || [ "${LROWS[$name]}" != 0 ]; then
		echo "$(printf '%*s' ${#name} '')  note: the output is not symbols-only (${INLINES[$name]} inline ranges, ${LROWS[$name]} line rows): lidiagen did more than a symbols-only conversion"
	fi
	summary+=("$(printf '%-16s convert %.4f s (%sx the speed of %s s) %s; peak RSS %s MiB (%sx of %s MiB) %s' \
		"$name" "$w" "$x" "$tlo" "$tv" "$r" "$rx" "$rlo" "$rv")")
done
echo

# ---- lookups ------------------------------------------------------------------------
echo "== lookups from one thread (target >= $(calc %.0f "$LOOKUP_TARGET / 1e6") M addresses/s)"
# shellcheck disable=SC2046 # pkg-config's flags are meant to be split
(cd "$root" && cc -O2 -std=c11 -D_GNU_SOURCE -I lib bench/lookup_bench.c "$LIB" \
	$(pkg-config --libs libelf libdw libzstd liblzma libdeflate) -lpthread -ldl -lstdc++ \
	-o "$tmp/lookup_bench") ||
	die "cannot build bench/lookup_bench.c"
for name in "${names[@]}"; do
	rc=0
	"$tmp/lookup_bench" -n "$LOOKUPS" -t "$LOOKUP_TARGET" "${OUT[$name]}" >"$tmp/lb" || rc=$?
	if [ "${INLINES[$name]}" = 0 ] && [ "${LROWS[$name]}" = 0 ]; then
		what="symbols-only output"
		counted=1
	else
		what="NOT symbols-only: ${INLINES[$name]} inline ranges, ${LROWS[$name]} line rows; not counted, the target is for symbols-only files"
		counted=0
		uncounted=$((uncounted + 1))
	fi
	grep -v '^RESULT ' "$tmp/lb" | sed "s|${OUT[$name]}|$name ($what)|"
	[ $rc -le 1 ] || die "lookup_bench failed on $name"
	while read -r _ set rate _ _ verdict; do
		rate=${rate#rate=}
		if [ $counted = 0 ]; then
			verdict="$verdict (not counted: not a symbols-only file)"
		elif [ "$verdict" = PASS ]; then
			passes=$((passes + 1))
		else
			misses+=("$name lookup/$set")
		fi
		summary+=("$(printf '%-16s lookup %-7s %5.2f M/s %s' "$name" "$set" "$(calc %.4f "$rate / 1e6")" "$verdict")")
	done < <(grep '^RESULT ' "$tmp/lb")
done
echo

# ---- summary --------------------------------------------------------------------------
echo "== summary"
busy_end=$(cpu_busy)
if [ "$busy_start" -gt 20 ] || [ "$busy_end" -gt 20 ]; then
	echo "WARNING: other work used ${busy_start}% of the CPUs before the benchmark and ${busy_end}% after it:" \
		"wall times and lookup rates are unreliable; run again when the machine is idle"
fi
for line in "${summary[@]}"; do echo "$line"; done
note=""
[ $uncounted = 0 ] || note=" (lookups on $uncounted output(s) that are not symbols-only not counted)"
if [ ${#misses[@]} -eq 0 ]; then
	echo "bench: all $passes targets PASS$note"
else
	list=$(printf '%s, ' "${misses[@]}")
	echo "bench: $passes targets PASS, ${#misses[@]} MISS: ${list%, }$note"
	[ "${BENCH_STRICT:-0}" = 1 ] && exit 1
fi
exit 0
