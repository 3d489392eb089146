#!/usr/bin/env bash
# Reproducers (tests/fixtures/repro/, see its README): inputs that once made
# lidiagen crash, hang or lose files. Each is converted alone under `timeout`
# and must end by itself with exit status 0 (converted; the output verifies)
# or 1 (the input failed, said on stderr): not killed by a signal, not timed
# out, no sanitizer report. REPRO_TIMEOUT sets the limit in seconds (60).
set -u
. "$(dirname "$0")/lib/common.sh"

limit=${REPRO_TIMEOUT:-60}
w=$(scratch work)
n=0

for f in "$FIXTURES_SRC"/repro/*; do
	name=$(basename "$f")
	[ -f "$f" ] && [ "$name" != README ] || continue
	n=$((n + 1))
	out=$w/$name
	rm -rf "$out"
	what="repro $name: converting it ends with exit 0 or 1 within ${limit}s"
	# Sanitizer reports exit with a status of their own, never 0 or 1.
	ASAN_OPTIONS=${ASAN_OPTIONS:-}:exitcode=86 UBSAN_OPTIONS=${UBSAN_OPTIONS:-}:halt_on_error=1:exitcode=87 \
		timeout -k 5 "$limit" "$LIDIAGEN" "$f" -o "$out" -j 1 --no-debug-search \
		>"$out.out" 2>"$out.err" </dev/null
	rc=$?
	case $rc in
	0 | 1) ;;
	124 | 137) not_ok "$what" "timed out (exit $rc): a hang" "$(first_lines 5 "$out.err")"; continue ;;
	*) not_ok "$what" "exit $rc (over 128: killed by signal $((rc - 128)))" \
		"$(first_lines 20 "$out.err")"; continue ;;
	esac
	if grep -Eq 'Sanitizer|runtime error:' "$out.err"; then
		not_ok "$what" "a sanitizer report, exit $rc" "$(first_lines 20 "$out.err")"
		continue
	fi
	if [ "$rc" -eq 1 ] && ! grep -q "$name" "$out.err"; then
		not_ok "$what" "exit 1 without a message naming the input" "$(first_lines 5 "$out.err")"
		continue
	fi
	ok "$what (exit $rc)"
	if [ "$rc" -eq 0 ]; then
		run "$out.verify" "$LIDIAGEN" verify "$out"
		if [ "$RC" -eq 0 ]; then
			ok "repro $name: its output verifies"
		else
			not_ok "repro $name: its output verifies" "lidiagen verify: exit $RC" \
				"$(first_lines 5 "$out.verify.out")" "$(first_lines 5 "$out.verify.err")"
		fi
	fi
done
[ "$n" -gt 0 ] || not_ok "repro: tests/fixtures/repro holds reproducers"
