#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/cmake_real.sh [LIDIAGEN]: lidiagen's CMake package on a real outside
# project, as its users would take it: zstd's own CMake build (build/cmake of
# Debian's source package, fetched with `apt-get source`; nothing of it is kept
# in this tree), given symbol files by three lines of a wrapper project:
#
#     find_package(lidiagen CONFIG REQUIRED)
#     add_subdirectory(<zstd>/build/cmake zstd)
#     lidiagen_add_symbols(zstd libzstd_shared)
#
# See bench/README.md ("cmake_real.sh"). Measured: the targets built and their
# files (one per target, keyed by its build ID); a no-op rebuild runs no step;
# touching one source of the program reruns its step only; and the files the
# build step wrote, compared with llvm-symbolizer-16 at CMAKE_REAL_SAMPLES
# instruction starts per target by bench/lib_dwarf_real.py (the comparison of
# dwarf_real.sh, run on the rule's own files, not on a new conversion).
#
# Environment:
#   BENCH_CACHE          the source package, the build and the install (default: bench/.cache)
#   CMAKE_REAL_SAMPLES   addresses per target (default 2000)
#   CMAKE_REAL_JOBS      build and comparison jobs (default 2)
#   CMAKE_REAL_PKG       the source package (default zstd; its build/cmake is built)
# Needs cmake, ninja, llvm-16 and dpkg-dev (installed when missing), and a deb-src
# entry for apt-get source: one for bookworm is added when there is none.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
LIDIAGEN=${1:-$root/build/lidiagen}
case $LIDIAGEN in /*) ;; *) LIDIAGEN=$PWD/$LIDIAGEN ;; esac
CACHE=${BENCH_CACHE:-$here/.cache}
SAMPLES=${CMAKE_REAL_SAMPLES:-2000}
JOBS=${CMAKE_REAL_JOBS:-2}
PKG=${CMAKE_REAL_PKG:-zstd}
WORK=$CACHE/cmake_real

die() { echo "cmake_real: $*" >&2; exit 2; }
say() { echo "cmake_real: $*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }

[ -x "$LIDIAGEN" ] || die "$LIDIAGEN: not an executable (run make first)"
command -v apt-get >/dev/null || die "needs apt-get (a Debian machine)"
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v dpkg-source >/dev/null || need+=(dpkg-dev)
[ -x /usr/lib/llvm-16/bin/llvm-symbolizer ] || need+=(llvm-16)
command -v objdump >/dev/null || need+=(binutils)
if [ ${#need[@]} -gt 0 ]; then
	say "installing ${need[*]}"
	as_root apt-get install -y -q "${need[@]}" >/dev/null || die "cannot install ${need[*]}"
fi

# ---- the source package --------------------------------------------------------
src=$(compgen -G "$WORK/src/*/build/cmake" | head -n 1 || true)
if [ -z "$src" ]; then
	if ! grep -rqs '^[^#]*deb-src\|^Types:.*deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		say "adding a deb-src entry for bookworm (apt-get source needs one)"
		printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n%s\n' \
			'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
			as_root tee /etc/apt/sources.list.d/lidiagen-bench-src.sources >/dev/null
		as_root apt-get update -q >/dev/null || die "apt-get update failed"
	fi
	rm -rf "$WORK/src" && mkdir -p "$WORK/src"
	apt_opts=()
	[ "$(id -u)" = 0 ] && apt_opts=(-o APT::Sandbox::User=root)
	(cd "$WORK/src" && apt-get "${apt_opts[@]}" -q source "$PKG" >/dev/null 2>&1) ||
		die "apt-get source $PKG failed"
	src=$(compgen -G "$WORK/src/*/build/cmake" | head -n 1 || true)
	[ -n "$src" ] || die "$PKG's source has no build/cmake"
fi
say "$PKG: $src"

# ---- lidiagen's package, installed from this tree --------------------------------
stage=$WORK/stage
rm -rf "$stage"
make -C "$root" -s install-cmake PREFIX=/usr DESTDIR="$stage" >/dev/null
install -D -m 755 "$LIDIAGEN" "$stage/usr/bin/lidiagen"

# ---- the wrapper project: the three lines -----------------------------------------
proj=$WORK/project
mkdir -p "$proj"
cat >"$proj/CMakeLists.txt.new" <<EOF
# $PKG's own CMake build, with Lidia symbol files (bench/cmake_real.sh).
cmake_minimum_required(VERSION 3.20)
project(lidia_real C CXX ASM)
find_package(lidiagen CONFIG REQUIRED)
add_subdirectory("$src" $PKG)
lidiagen_add_symbols(zstd libzstd_shared)
EOF
cmp -s "$proj/CMakeLists.txt.new" "$proj/CMakeLists.txt" 2>/dev/null || mv "$proj/CMakeLists.txt.new" "$proj/CMakeLists.txt"
rm -f "$proj/CMakeLists.txt.new"
b=$WORK/build
rm -rf "$b"
export CMAKE_BUILD_PARALLEL_LEVEL=$JOBS
unset MAKEFLAGS MFLAGS MAKELEVEL
cmake -S "$proj" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$stage/usr" \
	-DZSTD_BUILD_TESTS=OFF >"$WORK/configure.log" 2>&1 ||
	die "configure failed: $(tail -n 20 "$WORK/configure.log")"
grep -- '-- Found lidiagen' "$WORK/configure.log" >&2 || true
start=$(date +%s.%N)
cmake --build "$b" >"$WORK/build.log" 2>&1 || die "build failed: $(tail -n 20 "$WORK/build.log")"
secs=$(echo "$(date +%s.%N) - $start" | bc)
# lidiagen runs with each link ("Lidia symbols of T (after its link)"); the
# build step after it (its comment, "Lidia symbols of T") finds nothing to do.
steps=$(grep -c 'Lidia symbols of .* (after its link)' "$WORK/build.log" || true)
tree=$b/lidia
files=$(find "$tree" -type f | sort)
nfiles=$(grep -c . <<<"$files" || true)

# ---- no-op rebuild, and one edit --------------------------------------------------
cmake --build "$b" >"$WORK/noop.log" 2>&1
noop=$(grep -c 'Lidia symbols of' "$WORK/noop.log" || true)
prog_src=$(compgen -G "$src/../../programs/zstdcli.c" | head -n 1)
touch "$prog_src"
cmake --build "$b" >"$WORK/edit.log" 2>&1
edit=$(grep -o 'Lidia symbols of [^ ]* (after its link)' "$WORK/edit.log" | sed 's/ (after its link)//' |
	tr '\n' ' ')

# ---- agreement with llvm-symbolizer-16 -------------------------------------------
# lib_dwarf_real.py reads a package layout: the targets as the "main package",
# each also as its own debug file, and a lidiagen whose conversion gives the
# file the build step wrote (its lookups are lidiagen's own).
cmp_dir=$WORK/compare
rm -rf "$cmp_dir"
mkdir -p "$cmp_dir/main" "$cmp_dir/dbg"
targets=()
for f in "$b/$PKG/programs/zstd" "$b/$PKG"/lib/libzstd.so.*.*.*; do
	[ -f "$f" ] || continue
	id=$(readelf -n "$f" | awk '/Build ID/ { print $3 }')
	cp "$f" "$cmp_dir/main/"
	install -D -m 644 "$f" "$cmp_dir/dbg/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	targets+=("$(basename "$f") $id")
done
cat >"$cmp_dir/lidiagen" <<EOF
#!/bin/sh
# The build step's file for a conversion; lidiagen itself for lookups.
[ "\$1" = lookup ] && exec "$LIDIAGEN" "\$@"
id=\$(readelf -n "\$1" | awk '/Build ID/ { print \$3 }')
exec cat "$tree/symbolizer/anonymous/\$id"
EOF
chmod +x "$cmp_dir/lidiagen"
summary=$cmp_dir/summary.jsonl
python3 "$here/lib_dwarf_real.py" --lidiagen "$cmp_dir/lidiagen" --name "$PKG (CMake, RelWithDebInfo)" \
	--main "$cmp_dir/main" --dbg "$cmp_dir/dbg" --oracle llvm --work "$cmp_dir/work" \
	--samples "$SAMPLES" --jobs "$JOBS" --summary "$summary"

# ---- --target zstd alone after an edit: its new file comes with its link --------
before_files=$files
cp "$prog_src" "$WORK/zstdcli.c.orig"
printf '\nint lidiagen_bench_extra(int x) { return x + 7; }\n' >>"$prog_src"
target_rc=0
cmake --build "$b" --target zstd >"$WORK/target.log" 2>&1 || target_rc=$?
cp "$WORK/zstdcli.c.orig" "$prog_src"
after_files=$(find "$tree" -type f | sort)
changed=$(comm -3 <(echo "$before_files") <(echo "$after_files") | grep -c . || true)

echo
echo "$PKG's CMake build with lidiagen_add_symbols(zstd libzstd_shared), Ninja, -j$JOBS:"
printf '  target: %s\n' "${targets[@]}"
echo "  build: $steps symbol steps, $nfiles files under build/lidia, ${secs%???????} s for the whole build"
echo "  no-op rebuild: $noop symbol steps; after touching programs/zstdcli.c: ${edit:-none}"
echo "  --target zstd after an edit of zstdcli.c: exit $target_rc, $(grep -c . <<<"$after_files") files, $changed keys changed (zstd's old one gone, its new one there)"
python3 - "$summary" <<'EOF'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("  llvm-symbolizer-16: %d addresses compared (%d skipped), names %d, file+line %d" %
          (r["compared"], r.get("skipped", 0), r["names_strict"], r["lines_ok"]))
EOF
ok=1
[ "$nfiles" = "${#targets[@]}" ] && [ "$steps" = "${#targets[@]}" ] || ok=0
[ "$noop" = 0 ] && [ "$edit" = "Lidia symbols of zstd " ] || ok=0
[ "$target_rc" = 0 ] && [ "$changed" = 2 ] && [ "$(grep -c . <<<"$after_files")" = "$nfiles" ] || ok=0
[ $ok = 1 ] || { say "unexpected: see $WORK/*.log"; exit 1; }
