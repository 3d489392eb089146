#!/usr/bin/env bash
# Go's own runtime as the oracle for lidiagen's Go support.
#
# tests/fixtures/go/goracle captures its stack with runtime.Callers from
# inside inlined code (several levels, packages and files; methods, closures,
# generics, a fault and a panic in inlined code, a goroutine, a deferred call,
# and, in the cgo variant, Go called back from C), prints what
# runtime.CallersFrames makes of every PC, then sweeps its own text with
# runtime.FuncForPC every 37 bytes and at every function entry. The same
# binary converted by lidiagen must give, with `lidiagen lookup --json`:
#   - for every physical frame of every stack, the runtime's frames of it
#     (function, file, line, inlined or not, innermost first, as many): 100%
#   - at every sweep PC, FuncForPC's function and FileLine: >= 99.9%
# (tests/lib/go_oracle.py says how addresses and frames are matched).
# Built with Go 1.19 (pclntab magic 0xfffffff0) and Go 1.22 (0xfffffff1),
# each as: exe, exe with -s -w, PIE, PIE with -s -w, cgo with external
# linking (exe, PIE, and PIE linked by lld with and without -s -w). The
# stripped ones run as the oracle themselves: the runtime needs no symbols.
# Each output must also be keyed by its GNU build ID and open in Pyroscope's
# reader, and in the cgo variants the C function keeps its ELF symbol's name.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/tap.sh"
. "$here/lib/go_common.sh"
: "${LIDIAGEN:?set LIDIAGEN to the lidiagen binary}"

work=$TEST_TMP/t_go_runtime
mkdir -p "$work"

VARIANTS="exe exe-sw pie pie-sw cgo cgo-pie cgo-pie-lld cgo-pie-lld-sw"

# variant_args VER VARIANT: sets ARGS to go_build's arguments after DIR:
# the environment, "--", then go build's arguments.
variant_args() {
	local id
	id=0x$(go_id "runtime $1 $2")
	case $2 in
	exe) ARGS=(CGO_ENABLED=0 -- "-ldflags=-B=$id") ;;
	exe-sw) ARGS=(CGO_ENABLED=0 -- "-ldflags=-s -w -B=$id") ;;
	pie) ARGS=(CGO_ENABLED=0 -- -buildmode=pie "-ldflags=-B=$id") ;;
	pie-sw) ARGS=(CGO_ENABLED=0 -- -buildmode=pie "-ldflags=-s -w -B=$id") ;;
	cgo) ARGS=(CGO_ENABLED=1 -- -tags=lidiacgo "-ldflags=-linkmode=external -B=$id") ;;
	cgo-pie) ARGS=(CGO_ENABLED=1 -- -tags=lidiacgo -buildmode=pie
		"-ldflags=-linkmode=external -B=$id") ;;
	# lld leaves the words that RELATIVE relocations fill as zeros in the file
	# (GNU ld writes the addends there too): pcHeader.textStart and the module
	# data's pointers must be read through the relocations.
	cgo-pie-lld) ARGS=(CGO_ENABLED=1 -- -tags=lidiacgo -buildmode=pie
		"-ldflags=-linkmode=external -extldflags=-fuse-ld=lld -B=$id") ;;
	cgo-pie-lld-sw) ARGS=(CGO_ENABLED=1 -- -tags=lidiacgo -buildmode=pie
		"-ldflags=-s -w -linkmode=external -extldflags=-fuse-ld=lld -B=$id") ;;
	esac
}

# is_variant LABEL VARIANT BINARY: the binary is what the variant says.
is_variant() {
	local label=$1 v=$2 bin=$3 type syms why=
	type=$(readelf -h "$bin" 2>/dev/null | awk '/Type:/ {print $2}')
	syms=$(readelf -S -W "$bin" 2>/dev/null | grep -c ' \.symtab ')
	case $v in
	*pie*) [ "$type" = DYN ] || why="ELF type $type, want DYN" ;;
	*) [ "$type" = EXEC ] || why="ELF type $type, want EXEC" ;;
	esac
	case $v in
	*-sw) [ "$syms" -eq 0 ] || why="$why; has a .symtab" ;;
	*) [ "$syms" -eq 1 ] || why="$why; no .symtab" ;;
	esac
	if [ -z "$why" ]; then
		ok "$label: built as $v (ELF $type, $([ "$syms" -eq 1 ] && echo with || echo without) .symtab)"
	else
		not_ok "$label: built as $v"
		go_diag "$why"
	fi
}

for ver in 1.19 1.22; do
	if ! go_tool "$ver" >/dev/null; then
		not_ok "Go $ver is installed"
		go_diag "$(go_tool "$ver" || echo "no /usr/lib/go-$ver/bin/go; CI installs it")"
		continue
	fi
	for v in $VARIANTS; do
		label="go$ver $v"
		dir=$work/$ver-$v
		if [[ $v == *lld* ]] && ! command -v ld.lld >/dev/null; then
			skip "$label: needs ld.lld (Debian package lld)"
			continue
		fi
		mkdir -p "$dir"
		variant_args "$ver" "$v"
		if ! go_build "$dir/goracle" "$ver" goracle "${ARGS[@]}"; then
			not_ok "$label: builds"
			go_diag "$GO_LOG"
			continue
		fi
		go_diag "$label: $GO_CMD"
		is_variant "$label" "$v" "$dir/goracle"
		if ! timeout 120 "$dir/goracle" >"$dir/oracle.jsonl" 2>"$dir/oracle.err"; then
			not_ok "$label: the oracle program runs"
			go_diag "$(tail -n 20 "$dir/oracle.err")"
			continue
		fi
		t0=$(date +%s%N)
		if ! go_convert "$dir/out" "$dir/goracle"; then
			not_ok "$label: lidiagen converts it"
			go_diag "$GO_LOG"
			continue
		fi
		t1=$(date +%s%N)
		go_diag "$label: converted in $(((t1 - t0) / 1000000)) ms, $(stat -c %s "$GO_LIDIA") bytes;$("$LIDIAGEN" info "$GO_LIDIA" | grep content | sed 's/^ *content//')"
		go_key "$label" "$GO_LIDIA" "runtime $ver $v"
		python3 "$GO_ORACLE_PY" runtime "$LIDIAGEN" "$GO_LIDIA" "$dir/oracle.jsonl" "$label"
		go_pyroscope "$label" "$GO_LIDIA"
		if [[ $v == cgo* && $v != *-sw ]]; then
			# The C function: its ELF symbol's name at its start, middle and last byte.
			read -r addr size _ _ < <("$(go_tool "$ver")" tool nm -size "$dir/goracle" |
				awk '$3 == "T" && $4 == "lidia_c_leaf"')
			if [ -z "${addr:-}" ] || [ "${size:-0}" -lt 2 ]; then
				not_ok "$label: go tool nm lists the C function lidia_c_leaf"
			else
				a=$((16#$addr))
				python3 "$GO_ORACLE_PY" symbol "$LIDIAGEN" "$GO_LIDIA" "$label: C function" \
					lidia_c_leaf "$(printf '%x' $a)" "$(printf '%x' $((a + size / 2)))" \
					"$(printf '%x' $((a + size - 1)))"
			fi
			unset addr size
		fi
	done
done
exit 0
