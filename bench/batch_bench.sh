#!/usr/bin/env bash
# The batch mode on real Debian packages (issue 5), not part of `make test`.
#
#   bench/batch_bench.sh [LIDIAGEN]
#
# Downloads (once, into bench/.cache/batch/debs) libc6 libc6-dbg hugo valgrind
# valgrind-dbg binutils-x86-64-linux-gnu binutils-x86-64-linux-gnu-dbg rclone
# (~155 MB of .debs, ~330 MB unpacked; BATCH_PKGS overrides the list), then:
#   keys     every GNU build ID that readelf -n finds in the unpacked packages
#            (executables, libraries and debug files) is a key of the output;
#            libc.so.6's is, and its output carries libc6-dbg's DWARF: at an
#            address where llvm-symbolizer on the unstripped libc (eu-unstrip
#            of libc.so.6 and its debug file) shows an inline frame, lidiagen
#            lookup shows the same chain of functions and lines
#   speed    -j 2 at least 1.8 times faster than -j 1 (wall, the best of
#            BATCH_REPEAT=3 runs each); a second run with --state and nothing
#            new takes at most 5% of the first
#   memory   peak RSS (/usr/bin/time -f %M) of the whole tree with -j 1 at most
#            1.5 x the peak of the largest single package (converted with its
#            -dbg package: a binary and its debug file are one input) + 32 MB:
#            memory follows the largest input, not the tree (printed against
#            the largest .deb, the largest ELF file in it and the tree's size)
# and prints a table with PASS or MISS per line. Exit 0 when all PASS, 1 when
# some MISS, 2 when the bench cannot run. Work files go to $BATCH_WORK (default
# a new directory under /tmp, removed at the end unless KEEP=1).
set -u
here=$(cd "$(dirname "$0")" && pwd)
L=${1:-${LIDIAGEN:-$here/../build/lidiagen}}
L=$(cd "$(dirname "$L")" && pwd)/$(basename "$L")
CACHE=${BATCH_CACHE:-$here/.cache/batch}
PKGS=${BATCH_PKGS:-"libc6 libc6-dbg hugo valgrind valgrind-dbg binutils-x86-64-linux-gnu binutils-x86-64-linux-gnu-dbg rclone"}
LLVM_SYMBOLIZER=${LLVM_SYMBOLIZER:-/usr/lib/llvm-16/bin/llvm-symbolizer}
CHECK=$here/../tests/lib/batch_check.py
export LC_ALL=C

die() {
	echo "batch_bench: $*" >&2
	exit 2
}
[ -x "$L" ] || die "no lidiagen at $L (make first)"
if [ ! -x /usr/bin/time ]; then
	echo "installing time (for /usr/bin/time -f %M)"
	if [ "$(id -u)" -eq 0 ]; then apt-get install -y -qq time >/dev/null; else sudo apt-get install -y -qq time >/dev/null; fi ||
		die "/usr/bin/time is missing (apt-get install time)"
fi

# ---- Packages ---------------------------------------------------------------------------
mkdir -p "$CACHE/debs"
for p in $PKGS; do
	if ! ls "$CACHE/debs/${p}_"*.deb >/dev/null 2>&1; then
		echo "downloading $p"
		(cd "$CACHE/debs" && apt-get download "$p" >/dev/null 2>&1) ||
			{ apt-get update -qq >/dev/null 2>&1 && (cd "$CACHE/debs" && apt-get download "$p" >/dev/null); } ||
			die "apt-get download $p failed"
	fi
done
W=${BATCH_WORK:-$(mktemp -d /tmp/lidiagen-batch-bench.XXXXXX)}
mkdir -p "$W"
[ "${KEEP:-}" ] || trap 'rm -rf "$W"' EXIT
rm -rf "$W/dist" "$W/x"
mkdir -p "$W/dist" "$W/x"
debs=()
for p in $PKGS; do
	d=$(ls "$CACHE/debs/${p}_"*.deb | sort | tail -n 1)
	ln "$d" "$W/dist/" 2>/dev/null || cp "$d" "$W/dist/"
	debs+=("$W/dist/$(basename "$d")")
	dpkg-deb -x "$d" "$W/x/$p" || die "dpkg-deb -x $d failed"
done

# ---- Ground truth: readelf on the unpacked files -------------------------------------------
# Every ELF executable or shared object (debug files included) with a GNU build ID.
find "$W/x" -type f -size +63c -print0 | while IFS= read -r -d '' f; do
	[ "$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] || continue
	t=$(readelf -h "$f" 2>/dev/null | awk '/Type:/ { print $2 }')
	[ "$t" = EXEC ] || [ "$t" = DYN ] || continue
	id=$(readelf -n "$f" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
	[ -n "$id" ] && printf '%s %s %s\n' "$id" "$(stat -c %s "$f")" "${f#"$W/x/"}"
done | sort >"$W/truth.txt"
sort -u -k1,1 "$W/truth.txt" | cut -d' ' -f1 >"$W/expected.txt"
n_expected=$(grep -c . "$W/expected.txt")
largest_elf=$(sort -k2,2n "$W/truth.txt" | tail -n 1)
tree_bytes=$(du -cb "${debs[@]}" | tail -n 1 | cut -f1)
unpacked_bytes=$(du -sb "$W/x" | cut -f1)
largest_deb=$(ls -S "${debs[@]}" | head -n 1)
libc=$(find "$W/x/libc6" -name libc.so.6 -type f | head -n 1)
libc_id=$(readelf -n "$libc" | awk '/Build ID:/ { print $3; exit }')
[ -n "$libc_id" ] || die "no build ID in $libc"

# ---- Runs ------------------------------------------------------------------------------------
# timed NAME ARGS...: lidiagen ARGS; WALL[NAME], RSS[NAME] (KB), CPU[NAME]
# (user + system seconds), RC[NAME]. The load average before the run is
# printed: on a shared machine, other work takes cores away from -j 2.
declare -A WALL RSS RC CPU
timed() {
	local name=$1 load
	shift
	load=$(cut -d' ' -f1 /proc/loadavg)
	/usr/bin/time -f '%e %M %U %S' -o "$W/$name.time" "$L" "$@" >"$W/$name.out" 2>"$W/$name.err" </dev/null
	RC[$name]=$?
	WALL[$name]=$(tail -n 1 "$W/$name.time" | cut -d' ' -f1)
	RSS[$name]=$(tail -n 1 "$W/$name.time" | cut -d' ' -f2)
	CPU[$name]=$(tail -n 1 "$W/$name.time" | awk '{ printf "%.2f", $3 + $4 }')
	echo "  $name: ${WALL[$name]} s wall, ${CPU[$name]} s CPU, ${RSS[$name]} KB peak RSS, load before $load, exit ${RC[$name]}: $(tail -n 1 "$W/$name.err")"
}
# Wait (up to BATCH_QUIET_WAIT seconds, default 120) for the machine to be idle.
for ((i = 0; i < ${BATCH_QUIET_WAIT:-120}; i += 5)); do
	awk '{ exit !($1 < 0.5) }' /proc/loadavg && break
	[ "$i" -eq 0 ] && echo "waiting for the load average ($(cut -d' ' -f1 /proc/loadavg)) to fall below 0.5"
	sleep 5
done
echo "lidiagen: $L"
echo "inputs: ${#debs[@]} packages, $((tree_bytes >> 20)) MiB of .debs, $((unpacked_bytes >> 20)) MiB unpacked, $n_expected build IDs (readelf)"
sync
# -j 1 and -j 2 from scratch (no outputs, no state: every input is read),
# alternately, REPEAT times: the fastest of each counts (other work on the
# machine only ever slows a run down).
REPEAT=${BATCH_REPEAT:-3}
for ((i = 1; i <= REPEAT; i++)); do
	rm -rf "$W/out1" "$W/out2" "$W/state"
	timed "j1-$i" -r "$W/dist" -o "$W/out1" -j 1 --manifest "$W/j1.jsonl"
	timed "j2-$i" -r "$W/dist" -o "$W/out2" -j 2 --manifest "$W/j2.jsonl" --state "$W/state"
	for j in j1 j2; do
		if [ "$i" -eq 1 ] || awk -v a="${WALL[$j-$i]}" -v b="${WALL[$j]}" 'BEGIN { exit !(a < b) }'; then
			WALL[$j]=${WALL[$j-$i]} CPU[$j]=${CPU[$j-$i]}
		fi
		[ "${RSS[$j-$i]}" -gt "${RSS[$j]:-0}" ] && RSS[$j]=${RSS[$j-$i]}
		RC[$j]=$((${RC[$j]:-0} | ${RC[$j-$i]}))
		unset "RC[$j-$i]"
	done
done
timed again -r "$W/dist" -o "$W/out2" -j 2 --state "$W/state"
# Each package alone, with its -dbg package if there is one (-j 1): what the
# largest single input needs (a binary and its debug file are one input to
# convert, wherever each is found).
max_single=0 max_single_name=
units=()
for p in $PKGS; do
	case $p in
	*-dbg) [[ " $PKGS " == *" ${p%-dbg} "* ]] && continue ;;
	esac
	units+=("$p")
done
for u in "${units[@]}"; do
	files=()
	for d in "${debs[@]}"; do
		b=$(basename "$d")
		[ "${b%%_*}" = "$u" ] || [ "${b%%_*}" = "$u-dbg" ] && files+=("$d")
	done
	n=single-$u
	rm -rf "$W/out-$n"
	timed "$n" "${files[@]}" -o "$W/out-$n" -j 1
	if [ "${RSS[$n]}" -gt "$max_single" ]; then
		max_single=${RSS[$n]} max_single_name="$u$([ ${#files[@]} -gt 1 ] && echo " + $u-dbg")"
	fi
	rm -rf "$W/out-$n"
done

# ---- Checks ------------------------------------------------------------------------------------
ls "$W/out2/symbolizer/anonymous" 2>/dev/null | sort >"$W/keys.txt"
missing=$(comm -23 "$W/expected.txt" "$W/keys.txt")
n_missing=$(printf '%s' "$missing" | grep -c .)
rows=()
row() { rows+=("$(printf '%-46s %-44s %s' "$1" "$2" "$3")"); }
pf() { if [ "${1:-0}" = 1 ]; then echo PASS; else echo MISS; fi; }

row "keys: build IDs of readelf -n present" "$((n_expected - n_missing)) of $n_expected ($(grep -c . "$W/keys.txt") keys)" \
	"$(pf $([ "$n_missing" -eq 0 ] && echo 1))"
[ "$n_missing" -eq 0 ] || echo "missing keys (first 10):" $(echo "$missing" | head -n 10) \
	"$(for k in $(echo "$missing" | head -n 5); do grep "^$k " "$W/truth.txt" | head -n 1; done)"
row "keys: libc.so.6 ($libc_id)" "$([ -f "$W/out2/symbolizer/anonymous/$libc_id" ] && echo present || echo absent)" \
	"$(pf $([ -f "$W/out2/symbolizer/anonymous/$libc_id" ] && echo 1))"
libc_row=$(grep "\"build_id\":\"$libc_id\"" "$W/j2.jsonl")
holds=$(sed -n 's/.*"holds":{\([^}]*\)}.*/\1/p' <<<"$libc_row")
dbg_in=$(grep -c 'libc6-dbg_[^"]*\.deb![^"]*\.debug' <<<"$libc_row")
row "libc.so.6 output holds (manifest)" "$(sed 's/"symbols":true,//; s/"//g' <<<"$holds"), dbg input: $dbg_in" \
	"$(pf $(grep -q '"lines":true,"inlines":true' <<<"$holds" && [ "$dbg_in" -ge 1 ] && echo 1))"
# An address of libc with an inline frame: lidiagen's output must give the
# function chain llvm-symbolizer gives on the unstripped libc (libc.so.6 and
# its debug file from libc6-dbg put back together by eu-unstrip).
chain_ok=0 chain_note="no address with an inline frame found"
libc_dbg=$W/x/libc6-dbg/usr/lib/debug/.build-id/${libc_id:0:2}/${libc_id:2}.debug
if [ -x "$LLVM_SYMBOLIZER" ] && [ -f "$libc_dbg" ] && eu-unstrip -o "$W/libc.full" "$libc" "$libc_dbg" 2>"$W/unstrip.err"; then
	for fn in __libc_malloc malloc __libc_free qsort_r strtod __printf_fp; do
		r=$(nm -D --defined-only -S "$libc" 2>/dev/null | awk -v f="$fn" '{ sub(/@.*/, "", $4) } $4 == f { print $1, $2; exit }')
		[ -n "$r" ] || continue
		s=$((16#${r% *})) z=$((16#${r#* }))
		for ((a = s; a < s + z && a < s + 4096; a += 2)); do printf '0x%x\n' "$a"; done |
			"$LLVM_SYMBOLIZER" --obj="$W/libc.full" --inlining --output-style=JSON >"$W/libc.llvm.json" 2>/dev/null
		python3 "$CHECK" pick-inline "$W/libc.llvm.json" - >"$W/libc.pick" 2>/dev/null || continue
		a=$(sed -n 1p "$W/libc.pick")
		want=$(sed -n 2p "$W/libc.pick")
		"$L" lookup --json "$W/out2/symbolizer/anonymous/$libc_id" "$a" >"$W/libc.lookup.json" 2>&1
		got=$(python3 "$CHECK" chain "$W/libc.lookup.json" 2>/dev/null)
		if [ "$(sed -n 1p <<<"$got")" = "$want" ] && [ "$(sed -n 2p <<<"$got")" = inlined-with-file ]; then
			chain_ok=1 chain_note="$fn+$((a - s)): $want"
		else
			chain_note="at $a llvm-symbolizer: $want; lidiagen: $(sed -n 1p <<<"$got")"
		fi
		break
	done
fi
row "libc.so.6 inline chain = llvm-symbolizer's" "$(cut -c1-44 <<<"$chain_note")" "$(pf $chain_ok)"
echo "libc chain: $chain_note"
speed=$(awk -v a="${WALL[j1]}" -v b="${WALL[j2]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
row "speed: -j 1 / -j 2 wall, best of $REPEAT (>= 1.8)" "${WALL[j1]} s / ${WALL[j2]} s = ${speed}x" \
	"$(pf $(awk -v s="$speed" 'BEGIN { print (s >= 1.8) ? 1 : 0 }'))"
util=$(awk -v c="${CPU[j2]}" -v w="${WALL[j2]}" 'BEGIN { printf "%.2f", (w > 0 ? c / w : 0) }')
row "  -j 2 CPU / wall (cores kept busy)" "${CPU[j2]} s / ${WALL[j2]} s = $util (-j 1: ${CPU[j1]} s CPU)" "-"
pct=$(awk -v a="${WALL[again]}" -v b="${WALL[j2]}" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 100) }')
conv0=$(tail -n 1 "$W/again.err" | grep -c ' 0 converted')
row "re-run, nothing new (want <= 5%, 0 converted)" "${WALL[again]} s = ${pct}% of ${WALL[j2]} s, 0 converted: $conv0" \
	"$(pf $(awk -v p="$pct" -v c="$conv0" 'BEGIN { print (p <= 5 && c == 1) ? 1 : 0 }'))"
bound=$((max_single * 3 / 2 + 32768))
row "RSS -j 1, whole tree" "$((RSS[j1] >> 10)) MiB" "$(pf $([ "${RSS[j1]}" -le "$bound" ] && echo 1))"
row "RSS -j 2, whole tree" "$((RSS[j2] >> 10)) MiB" "-"
row "RSS, largest single package (+ -dbg), -j 1" "$((max_single >> 10)) MiB ($max_single_name)" "-"
row "  bound for -j 1: 1.5 x that + 32 MiB" "$((bound >> 10)) MiB" "-"
row "  largest .deb" "$(($(stat -c %s "$largest_deb") >> 20)) MiB ($(basename "$largest_deb"))" "-"
largest_elf_size=$(cut -d' ' -f2 <<<"$largest_elf")
row "  largest ELF file unpacked" "$((largest_elf_size >> 20)) MiB ($(basename "$(cut -d' ' -f3 <<<"$largest_elf")"))" "-"
row "  tree: .debs / unpacked" "$((tree_bytes >> 20)) MiB / $((unpacked_bytes >> 20)) MiB" "-"
row "  RSS -j 1 / largest ELF, / unpacked tree" \
	"$(awk -v r="${RSS[j1]}" -v e="$(cut -d' ' -f2 <<<"$largest_elf")" -v t="$unpacked_bytes" \
		'BEGIN { printf "%.2f, %.2f", r * 1024 / e, r * 1024 / t }')" "-"
for k in "${!RC[@]}"; do
	[ "${RC[$k]}" -eq 0 ] || row "exit status of run $k" "${RC[$k]}" MISS
done

echo
printf '%-46s %-44s %s\n' "what" "measured" "result"
printf '%s\n' "${rows[@]}"
for u in "${units[@]}"; do
	n=single-$u
	r=${RSS[$n]}
	printf '  %-44s %8s s %6s MiB\n' "$n" "${WALL[$n]}" "$((r / 1024))"
done
if printf '%s\n' "${rows[@]}" | grep -q ' MISS$'; then
	echo "batch_bench: MISS"
	exit 1
fi
echo "batch_bench: PASS"
exit 0
