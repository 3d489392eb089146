#!/usr/bin/env bash
# lidiagen on cross-compiled Go programs (built, never run): 32-bit
# (GOARCH=386), arm64 and big-endian (GOARCH=s390x), with Go 1.19 and 1.22.
# The oracle is the Go toolchain's own symbol table reader: every function
# that `go tool nm -size -sort address` lists as text (T/t) must be found by
# `lidiagen lookup --json` at its start address with its name as the
# depth-0 (last) frame, and its last byte must still map to it unless another
# symbol starts there. And `go tool addr2line` (Go's debug/gosym, which
# knows no inlining) at every 37 bytes of every function and at its last
# byte gives lidiagen's depth-0 function and innermost file:line: the line
# tables and inline ranges read right in 32-bit and big-endian pclntabs.
# Each output must open in Pyroscope's reader.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/tap.sh"
. "$here/lib/go_common.sh"
: "${LIDIAGEN:?set LIDIAGEN to the lidiagen binary}"

work=$TEST_TMP/t_go_cross
mkdir -p "$work"

# ELF facts of a GOARCH: class, data (readelf -h wording), machine.
elf_facts() {
	case $1 in
	386) echo "ELF32|little endian|Intel 80386" ;;
	arm64) echo "ELF64|little endian|AArch64" ;;
	s390x) echo "ELF64|big endian|IBM S/390" ;;
	esac
}

for ver in 1.19 1.22; do
	if ! go=$(go_tool "$ver"); then
		not_ok "Go $ver is installed"
		go_diag "no /usr/lib/go-$ver/bin/go (or GO119/GO122); CI installs it"
		continue
	fi
	for arch in 386 arm64 s390x; do
		label="go$ver GOARCH=$arch"
		dir=$work/$ver-$arch
		mkdir -p "$dir"
		id=0x$(go_id "cross $ver $arch")
		if ! go_build "$dir/goracle" "$ver" goracle CGO_ENABLED=0 GOOS=linux "GOARCH=$arch" \
			-- "-ldflags=-B=$id"; then
			not_ok "$label: builds"
			go_diag "$GO_LOG"
			continue
		fi
		go_diag "$label: $GO_CMD"
		IFS='|' read -r class data machine <<<"$(elf_facts "$arch")"
		hdr=$(readelf -h "$dir/goracle" 2>&1)
		if grep -q "Class: *$class" <<<"$hdr" && grep -q "Data:.*$data" <<<"$hdr" &&
			grep -q "Machine: *$machine" <<<"$hdr"; then
			ok "$label: built as $class, $data, $machine"
		else
			not_ok "$label: built as $class, $data, $machine"
			go_diag "$(grep -E 'Class|Data|Machine' <<<"$hdr")"
		fi
		if ! go_convert "$dir/out" "$dir/goracle"; then
			not_ok "$label: lidiagen converts it"
			go_diag "$GO_LOG"
			continue
		fi
		go_diag "$label: $(stat -c %s "$GO_LIDIA") bytes;$("$LIDIAGEN" info "$GO_LIDIA" | grep content | sed 's/^ *content//')"
		go_key "$label" "$GO_LIDIA" "cross $ver $arch"
		if ! "$go" tool nm -size -sort address "$dir/goracle" >"$dir/nm.txt" 2>"$dir/nm.err"; then
			not_ok "$label: go tool nm reads it"
			go_diag "$(head -n 5 "$dir/nm.err")"
			continue
		fi
		python3 "$GO_ORACLE_PY" nm "$LIDIAGEN" "$GO_LIDIA" "$dir/nm.txt" "$label"
		python3 "$GO_ORACLE_PY" addr2line "$go" "$dir/goracle" "$LIDIAGEN" "$GO_LIDIA" \
			"$dir/nm.txt" "$label"
		go_pyroscope "$label" "$GO_LIDIA"
	done
done
exit 0
