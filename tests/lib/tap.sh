# Shell helpers for tests/t_*.sh: print the lines tests/run.sh counts.
# check WHAT COMMAND...   run COMMAND; "ok - WHAT" or "not ok - WHAT"; returns its status
# ok WHAT / not_ok WHAT / skip WHAT / diag TEXT (as "# " lines)
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }
skip() { echo "skip - $*"; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
check() {
	local what=$1
	shift
	if "$@" >/dev/null 2>&1; then
		ok "$what"
		return 0
	fi
	not_ok "$what"
	return 1
}
