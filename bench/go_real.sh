#!/usr/bin/env bash
# lidiagen on real Go programs: hugo, rclone, dockerd and docker from Debian 12.
# Not part of `make test` (it downloads ~63 MB once and takes a minute or
# two); its output is for a closing note.
#
#   bench/go_real.sh [path/to/lidiagen]
#
# The packages are fetched with `apt-get download` (not installed) and
# unpacked with `dpkg-deb -x` into bench/.cache/go_real/. For each binary:
#   - what it is: Go version (`go version`), ELF type, whether it has a
#     .gopclntab section and a .symtab (dockerd and docker are PIEs whose
#     pclntab has no section of its own, and Debian strips the symbols);
#   - lidiagen's conversion under `/usr/bin/time -f '%e s %M KiB'`, the output
#     size, and `lidiagen info`'s counts (functions, inline ranges, line rows);
#   - an independent oracle, bench/go/gosymcheck.go: Go's own pclntab reader
#     (debug/gosym on the table debug/elf finds) lists every function; each
#     must be lidiagen's depth-0 frame at its entry and at its last byte, and
#     at PCs every 97 bytes lidiagen's depth-0 function and innermost
#     file:line must be gosym's function and pc-file/pc-line value.
# Exit status 1 when a check disagrees or a step fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
LIDIAGEN=${1:-${LIDIAGEN:-$here/../build/lidiagen}}
LIDIAGEN=$(cd "$(dirname "$LIDIAGEN")" && pwd)/$(basename "$LIDIAGEN")
cache=$here/.cache/go_real
# GO_REAL_PKGS and GO_REAL_INPUTS (paths inside the unpacked packages) choose others.
PKGS=${GO_REAL_PKGS:-"hugo rclone docker.io"}
INPUTS=${GO_REAL_INPUTS:-"usr/bin/hugo usr/bin/rclone usr/sbin/dockerd usr/bin/docker"}
export LC_ALL=C

GO=${GO:-}
for g in /usr/lib/go-1.22/bin/go /usr/lib/go-1.19/bin/go; do
	[ -z "$GO" ] && [ -x "$g" ] && GO=$g
done
[ -x "$LIDIAGEN" ] || { echo "go_real: no lidiagen at $LIDIAGEN (run make)" >&2; exit 1; }
[ -n "$GO" ] || { echo "go_real: no Go toolchain (golang-1.19-go or golang-1.22-go)" >&2; exit 1; }
PYROSCOPE_LOOKUP=${PYROSCOPE_LOOKUP:-$here/../tests/tools/pyroscope_reader.py}
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "go_real: needs /usr/bin/time (Debian package time)" >&2; exit 1; }

mkdir -p "$cache/debs" "$cache/root"
status=0

# 1. Packages.
for p in $PKGS; do
	ls "$cache/debs/${p}_"*.deb >/dev/null 2>&1 && continue
	echo "downloading $p"
	if ! (cd "$cache/debs" && apt-get download "$p" >/dev/null 2>&1); then
		apt-get update -qq >/dev/null 2>&1
		(cd "$cache/debs" && apt-get download "$p") || { echo "go_real: cannot download $p" >&2; exit 1; }
	fi
done
for d in "$cache"/debs/*.deb; do
	m=$cache/root/.$(basename "$d").unpacked
	[ -f "$m" ] && continue
	if ! dpkg-deb -x "$d" "$cache/root"; then
		echo "go_real: cannot unpack $d" >&2
		exit 1
	fi
	touch "$m"
done
echo "packages: $(cd "$cache/debs" && printf '%s ' ./*.deb)"

# 2. The oracle, built with the standard library only.
if ! (cd "$here/go" && env GOCACHE="$cache/gocache" GOPATH="$cache/gopath" GOENV=off GOFLAGS= \
	GO111MODULE=on GOPROXY=off GOTOOLCHAIN=local GOTELEMETRY=off CGO_ENABLED=0 \
	"$GO" build -o "$cache/gosymcheck" gosymcheck.go); then
	echo "go_real: cannot build bench/go/gosymcheck.go" >&2
	exit 1
fi
echo "oracle: bench/go/gosymcheck.go built with $("$GO" version | awk '{print $3}')"
echo "lidiagen: $LIDIAGEN ($("$LIDIAGEN" --version 2>&1 | head -n 1))"

summary=()
for rel in $INPUTS; do
	bin=$cache/root/$rel
	name=$(basename "$rel")
	echo
	echo "== /$rel"
	if [ ! -f "$bin" ]; then
		echo "missing: not in the packages"
		status=1
		continue
	fi
	gover=$("$GO" version "$bin" 2>/dev/null | awk '{print $NF}')
	type=$(readelf -h "$bin" | awk '/Type:/ {print $2}')
	sect=$(readelf -S -W "$bin")
	has() { grep -q " $1 " <<<"$sect" && echo yes || echo no; }
	echo "$(stat -c %s "$bin") bytes, built with ${gover:-?}, ELF $type," \
		".gopclntab section: $(has .gopclntab), .symtab: $(has .symtab)," \
		"GNU build ID $(readelf -n "$bin" | awk '/Build ID/ {print $3}')"

	out=$cache/out/$name
	rm -rf "$out"
	mkdir -p "$out"
	# Once untimed so that the binary is in the page cache, then timed.
	"$LIDIAGEN" -q "$bin" -o "$out" >/dev/null 2>&1
	rm -rf "$out"
	mkdir -p "$out"
	if ! "$TIME" -f '%e s %M KiB' -o "$cache/$name.time" "$LIDIAGEN" -q "$bin" -o "$out" \
		>"$cache/$name.log" 2>&1; then
		echo "lidiagen failed: $(head -n 5 "$cache/$name.log")"
		status=1
		continue
	fi
	file=$(find "$out" -type f | head -n 1)
	timing=$(tail -n 1 "$cache/$name.time")
	size=$(stat -c %s "$file")
	content=$("$LIDIAGEN" info "$file" | sed -n 's/^ *content *//p')
	echo "lidiagen: $timing (wall, max RSS); output $size bytes ($((size / 1024)) KiB): $content"
	echo "output: ${file#"$cache/"}"
	if [ -f "$PYROSCOPE_LOOKUP" ]; then
		t0=$(date +%s)
		if pr=$(python3 "$PYROSCOPE_LOOKUP" "$file" 2>&1); then
			echo "Pyroscope's reader (re-stated in Python): $pr ($(($(date +%s) - t0)) s)"
		else
			echo "Pyroscope's reader REJECTS it: $pr"
			status=1
		fi
	fi
	"$cache/gosymcheck" "$bin" "$file" "$LIDIAGEN" >"$cache/$name.check" 2>&1
	rc=$?
	sed 's/^/  /' "$cache/$name.check"
	[ "$rc" -eq 0 ] || status=1
	nf=$(sed -n 's/^functions at entry: \([0-9]*\), \([0-9]*\) agree.*/\2\/\1/p' "$cache/$name.check")
	nl=$(sed -n 's/^lines at every [0-9]* bytes: \([0-9]*\) PCs.*, \([0-9]*\) agree.*/\2\/\1/p' "$cache/$name.check")
	summary+=("$(printf '%-8s %-8s %-16s %-16s %-22s %10s' "$name" "${gover:-?}" "${nf:-?}" "${nl:-?}" "$timing" "$((size / 1024)) KiB") ; $content")
done

echo
echo "== summary (functions: found at entry / gosym's; lines: agree / sampled PCs)"
printf '%-8s %-8s %-16s %-16s %-22s %10s\n' binary go functions lines "lidiagen time, RSS" output
printf '%s\n' "${summary[@]}"
exit "$status"
