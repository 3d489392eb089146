#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/dwarf_real.sh [LIDIAGEN]: how well lidiagen's DWARF frames (inline
# chains, files, lines) agree with an oracle on real Debian debug packages.
# See bench/README.md ("DWARF on real debug packages").
#
# For each package pair (main package + its -dbg package, build-ID trees of
# compressed DWARF 5), every ELF file of the main package whose build ID has a
# debug file in the -dbg package is converted with
#     lidiagen FILE --debug-dir <unpacked -dbg>/usr/lib/debug -q -o -
# and DWARF_REAL_SAMPLES instruction starts of its .text (objdump -d, evenly
# spaced) are looked up with `lidiagen lookup --json` and with the oracle, run
# on the debug file. bench/lib_dwarf_real.py does the work and explains the
# comparison rules.
#
# Oracles:
#   libc6, valgrind  llvm-symbolizer-16 --obj=DEBUG --output-style=JSON
#   binutils (and any -dbg package with usr/lib/debug/.dwz)
#                    dwz: its debug files refer to usr/lib/debug/.dwz/... by
#                    the absolute path /usr/lib/debug/.dwz/...; llvm-symbolizer
#                    16 cannot follow DW_FORM_GNU_ref_alt/strp_alt, so its names
#                    are blank there. Primary oracle "llvm+gdb": llvm's chain,
#                    files and lines, with the blank names filled in from gdb
#                    (which reads dwz) run in a private mount namespace where the
#                    unpacked usr/lib/debug is bind-mounted over /usr/lib/debug.
#                    Also reported: llvm alone, and eu-addr2line -i (which finds
#                    the dwz file the same way, but whose dwarf_getscopes gives
#                    no scope at all for an address inside an inlined subroutine
#                    whose abstract origin lives in another unit -- every inline
#                    in an LTO build such as Debian's binutils -- so it is shown
#                    for the record only).
#
# Environment:
#   BENCH_CACHE          downloads and unpacked packages (default: bench/.cache)
#   DWARF_REAL_SAMPLES   addresses per file (default 2000)
#   DWARF_REAL_PKGS      which packages (default: "libc6 valgrind binutils-x86-64-linux-gnu");
#                        PKG:DBG names a debug package not called PKG-dbg
#   DWARF_REAL_JOBS      files converted and compared at once (default: nproc)
#   DWARF_REAL_STRICT=1  exit 1 when a target is missed
#   DWARF_REAL_WORK      where the .lidia files and disagreements-*.jsonl go
#                        (default: BENCH_CACHE/dwarf_real/work)
set -euo pipefail
# shellcheck source=bench/lib_deb.sh
. "$(dirname "$0")/lib_deb.sh"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
LIDIAGEN=${1:-$root/build/lidiagen}
case $LIDIAGEN in /*) ;; *) LIDIAGEN=$PWD/$LIDIAGEN ;; esac
CACHE=${BENCH_CACHE:-$here/.cache}
SAMPLES=${DWARF_REAL_SAMPLES:-2000}
PKGS=${DWARF_REAL_PKGS:-"libc6 valgrind binutils-x86-64-linux-gnu"}
JOBS=${DWARF_REAL_JOBS:-$(nproc)}
WORK=${DWARF_REAL_WORK:-$CACHE/dwarf_real/work}
NAMES_TARGET=99.5
LINES_TARGET=99.0

die() { echo "dwarf_real: $*" >&2; exit 2; }
say() { echo "dwarf_real: $*" >&2; }

[ -x "$LIDIAGEN" ] || die "$LIDIAGEN: not an executable (run make first)"
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
	die "needs apt-get and dpkg-deb (a Debian machine)"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }
apt_opts=()
[ "$(id -u)" = 0 ] && apt_opts=(-o APT::Sandbox::User=root)
updated=
apt_install() {
	as_root apt-get install -y -q "$@" >/dev/null 2>&1 && return 0
	[ -n "$updated" ] || { as_root apt-get update -q >/dev/null 2>&1 || true; updated=1; }
	as_root apt-get install -y -q "$@" >/dev/null 2>&1
}

# Tools: llvm-symbolizer-16 (llvm-16), eu-addr2line (elfutils), gdb, objdump.
need=()
[ -x /usr/lib/llvm-16/bin/llvm-symbolizer ] || need+=(llvm-16)
command -v eu-addr2line >/dev/null || need+=(elfutils)
command -v gdb >/dev/null || need+=(gdb)
command -v objdump >/dev/null || need+=(binutils)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
	say "installing ${need[*]}"
	apt_install "${need[@]}" || die "cannot install ${need[*]}"
fi

# Unpack package $1 into $CACHE/dwarf_real/$1 (once).
unpack() { unpack_deb "$1" "$CACHE/dwarf_real/$1"; }

# Can we give eu-addr2line and gdb the dwz file at its absolute path?
ns_ok() {
	[ -d /usr/lib/debug ] || { as_root mkdir -p /usr/lib/debug 2>/dev/null || return 1; }
	as_root unshare -m sh -c 'mount --make-rprivate / && mount --bind "$0" /usr/lib/debug' \
		"$CACHE" >/dev/null 2>&1
}

summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
say "lidiagen: $LIDIAGEN ($("$LIDIAGEN" --version 2>/dev/null | head -n 1 || true))"
for spec in $PKGS; do
	# PKG, or PKG:DBG where the debug package is not named PKG-dbg.
	pkg=${spec%%:*} dbgpkg=${spec#*:}
	[ "$dbgpkg" != "$spec" ] || dbgpkg=$pkg-dbg
	main=$(unpack "$pkg")
	dbg=$(unpack "$dbgpkg")
	ver=$(sed 's/^[^_]*_//; s/_[^_]*$//; s/%3a/:/' "$main/.unpacked")
	extra=()
	# A -dbg package with a dwz file (binutils, libkrb5-3, liblua5.4-0, ...):
	# llvm-symbolizer 16 cannot follow it, gdb fills in its names.
	if [ -d "$dbg/usr/lib/debug/.dwz" ]; then
		oracles=llvm+gdb,llvm,eu
		extra+=(--dwz)
		if ns_ok; then
			extra+=(--ns)
		else
			say "cannot bind-mount a private /usr/lib/debug (unshare -m needs root):"
			say "gdb and eu-addr2line will not find the dwz file; names from them will be poor"
		fi
	else
		oracles=llvm
	fi
	say "$pkg $ver: comparing with $oracles ($SAMPLES addresses per file)"
	python3 "$here/lib_dwarf_real.py" --lidiagen "$LIDIAGEN" --name "$pkg $ver" \
		--main "$main" --dbg "$dbg" --oracle "$oracles" --work "$WORK/$pkg" \
		--samples "$SAMPLES" --jobs "$JOBS" --summary "$summary" "${extra[@]}"
done

echo
echo "Summary (targets: names >= $NAMES_TARGET %, file+line >= $LINES_TARGET %; the first"
echo "oracle of a package is the one the targets apply to; 'adjusted' excuses the oracle's"
echo "own limitations, listed in its section above)"
python3 - "$summary" "$NAMES_TARGET" "$LINES_TARGET" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
nt, lt = float(sys.argv[2]), float(sys.argv[3])
fmt = "%-38s %-9s %5s %8s %7s %9s %9s %9s  %s"
print(fmt % ("package", "oracle", "files", "compared", "skipped", "names", "adjusted", "file+line", "target"))
seen, missed = set(), 0
for r in rows:
    n = r["compared"] or 1
    ns, na, nl = (100.0 * r[k] / n for k in ("names_strict", "names_ok", "lines_ok"))
    primary = r["package"] not in seen
    seen.add(r["package"])
    verdict = ""
    if primary:
        ok = na >= nt and nl >= lt
        missed += not ok
        verdict = "met" if ok else "MISSED"
    print(fmt % (r["package"][:38], r["oracle"], r["files"], r["compared"], r["skipped"],
                 "%.3f" % ns, "%.3f" % na, "%.3f" % nl, verdict))
open(sys.argv[1] + ".missed", "w").write(str(missed))
EOF
missed=$(cat "$summary.missed"); rm -f "$summary.missed"
if [ "$missed" != 0 ] && [ "${DWARF_REAL_STRICT:-0}" = 1 ]; then
	exit 1
fi
exit 0
