#!/usr/bin/env bash
# Issue 14: a Go 1.20+ function whose inline tree the runtime cannot unwind.
#
# tests/fixtures/go/bigfunc has the shape of go.opentelemetry.io/otel/semconv's
# package initialisers (five of them in the Google Cloud SDK's cbt and
# local-extract, Go 1.24 and 1.25): package variables built by inlined calls
# (Key.Int -> IntValue -> Int64Value), which Go 1.20+ compiles to a frameless
# leaf main.init of one store each, all of it inlined code and no inline mark
# left. Every node of its inline tree then has parentPc 0, and the node at
# pc 0 is an inlined one: the runtime's unwinder would go round it forever,
# and lidiagen up to HEAD of issue 14 called the table malformed and dropped
# the function's lines and inline frames.
#
# For each Go (1.19: its older layout names each node's parent, the control;
# 1.22 and 1.23: the shape), the program prints runtime.FuncForPC and
# FileLine at every byte of main.init (from go tool nm), and lidiagen must:
#   - convert it with no "malformed" warning;
#   - give at every byte the runtime's innermost function, file and line, and
#     main.init outermost (tests/lib/go_bigfunc.py);
#   - for 1.22/1.23, give the frames the table says and no other: the callee,
#     then main.init at line 0 (the table keeps no call line for it);
#   - agree with go tool addr2line (debug/gosym) every 37 bytes of every text
#     symbol (tests/lib/go_oracle.py addr2line).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/tap.sh"
. "$here/lib/go_common.sh"
: "${LIDIAGEN:?set LIDIAGEN to the lidiagen binary}"

work=$TEST_TMP/t_go_bigfunc
mkdir -p "$work"

for ver in 1.19 1.22 1.23; do
	label="go$ver bigfunc"
	dir=$work/$ver
	if ! go=$(go_tool "$ver"); then
		if [ "$ver" = 1.23 ]; then
			skip "$label: needs Go 1.23 (Debian bookworm-backports: golang-1.23-go)"
		else
			not_ok "Go $ver is installed"
			go_diag "no /usr/lib/go-$ver/bin/go; CI installs it"
		fi
		continue
	fi
	mkdir -p "$dir"
	if ! go_build "$dir/bigfunc" "$ver" bigfunc CGO_ENABLED=0 -- \
		"-ldflags=-B=0x$(go_id "bigfunc $ver")"; then
		not_ok "$label: builds"
		go_diag "$GO_LOG"
		continue
	fi
	go_diag "$label: $GO_CMD"
	read -r addr size _ < <("$go" tool nm -size "$dir/bigfunc" | awk '$4 == "main.init"')
	if [ -z "${addr:-}" ] || [ "${size:-0}" -lt 1 ]; then
		not_ok "$label: go tool nm lists main.init"
		continue
	fi
	if ! timeout 60 "$dir/bigfunc" "$addr" "$(printf '%x' "$size")" >"$dir/oracle.jsonl" \
		2>"$dir/oracle.err"; then
		not_ok "$label: the oracle program runs"
		go_diag "$(tail -n 20 "$dir/oracle.err")"
		continue
	fi
	rm -rf "$dir/out"
	"$LIDIAGEN" -v "$dir/bigfunc" -o "$dir/out" >"$dir/convert.log" 2>&1 </dev/null
	lidia=$(find "$dir/out" -type f)
	if [ "$(printf '%s' "$lidia" | grep -c .)" -ne 1 ]; then
		not_ok "$label: lidiagen converts it"
		go_diag "$(head -n 10 "$dir/convert.log")"
		continue
	fi
	if grep -q malformed "$dir/convert.log"; then
		not_ok "$label: no Go function with a malformed table"
		go_diag "$(grep malformed "$dir/convert.log")"
	else
		ok "$label: no Go function with a malformed table"
	fi
	shape=yes
	[ "$ver" = 1.19 ] && shape=no
	python3 "$here/lib/go_bigfunc.py" "$LIDIAGEN" "$lidia" "$dir/oracle.jsonl" "$label" \
		main.init "$shape"
	"$go" tool nm -size -sort address "$dir/bigfunc" >"$dir/nm.txt"
	python3 "$GO_ORACLE_PY" addr2line "$go" "$dir/bigfunc" "$LIDIAGEN" "$lidia" "$dir/nm.txt" \
		"$label"
	unset addr size
done
exit 0
