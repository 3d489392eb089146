# A local S3 server (s3rver, from npm: tests/s3rver) for the publishing
# tests and benches; source it, do not run it. Needs bash.
#
#   s3rver_need                 print "skip - ..." (S3RVER_MISSING=fail: "not
#                               ok - ...") and exit 0 when node or s3rver
#                               is missing (s3rver_start does it too: call it
#                               first to skip before any other work)
#   s3rver_start DIR BUCKET...  start s3rver on a free port of 127.0.0.1, its
#                               objects under DIR/data (give a new DIR: what is
#                               there stays), its log in DIR/s3rver.log, each
#                               BUCKET created at start; export
#                               S3RVER_URL, S3RVER_PID, S3RVER_LOG. Prints
#                               "skip - ..." and exits 0 when node or s3rver is
#                               missing; returns 1 ("# ..." lines say why) when
#                               it does not start.
#   s3rver_stop                 stop it (also done at exit, whatever the exit)
#   s3rver_mark                 start counting requests from here
#   s3rver_count METHOD         requests of METHOD (GET, PUT, HEAD, ...) the
#                               server answered since the last mark
#   s3rver_requests [METHOD]    those requests, one "METHOD PATH STATUS" a line
#                               (but the probes of conditional writes, publish.c)
#   s3_env HOME_DIR             export an AWS environment that reaches nothing
#                               but this server: s3rver's own credentials, no
#                               config or credentials files, no instance metadata
#   s3aws ARGS...               Debian's awscli (/usr/bin/aws) at the server
#
# The log: s3rver logs each response through koa-logger as
# "info: PUT /BUCKET/KEY 200 12ms 0b" (ANSI colours around the words). It
# cuts the first 16 characters of koa-logger's line, which are the colour
# codes of "-->" only when colours are on: without a terminal they are off
# and the cut eats the method. So s3rver runs with FORCE_COLOR=1, and the
# colours are taken out when reading the log. The log has the method, the
# path as sent (percent-encoded) with its query, the status, the response
# size: not the request's headers or size.
#
# s3rver 3.7.1 knows the access key (S3RVER) but does not check SigV4
# signatures ("unimplemented" in its authentication.js): a wrong secret
# passes. The signing is tested against botocore's signer (tests/t_s3.sh).

S3RVER_BIN=${S3RVER_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/s3rver/node_modules/.bin/s3rver}
# Debian's awscli: the `aws` on PATH may be another one (pyenv's).
S3_AWS=${S3_AWS:-/usr/bin/aws}
S3_PY=${S3_PY:-/usr/bin/python3}
S3RVER_PID=
S3RVER_URL=
S3RVER_LOG=
_s3rver_mark_line=0

# _s3rver_say TEXT...: "# " lines on stdout (the TAP detail).
_s3rver_say() { printf '%s\n' "$@" | sed 's/^/# /'; }

# A free TCP port of 127.0.0.1, as the OS gives one to a bind to port 0.
_s3rver_free_port() {
	"$S3_PY" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

# Add "s3rver_stop" in front of whatever the EXIT trap does already (env.sh
# removes TEST_TMP there: the server must stop before its directory goes).
# INT, TERM and HUP, when nothing handles them, exit through that trap too,
# so that no server outlives an interrupted test.
_s3rver_third() { printf '%s' "${3:-}"; }
_s3rver_trap() {
	local prev sig
	# `trap -p EXIT` prints "trap -- 'COMMAND' EXIT", quoted for the shell.
	prev=$(eval "_s3rver_third $(trap -p EXIT)")
	# shellcheck disable=SC2064 # the previous command is put in now, on purpose
	case $prev in *s3rver_stop*) ;; *) trap "s3rver_stop; $prev" EXIT ;; esac
	for sig in INT TERM HUP; do
		[ -n "$(trap -p $sig)" ] || trap "exit 129" $sig
	done
}

# S3RVER_MISSING=fail (the tests: CI installs s3rver, so its absence is an
# error there) prints "not ok" instead of "skip" (the benches).
s3rver_need() {
	local verdict=skip
	[ "${S3RVER_MISSING:-skip}" = fail ] && verdict="not ok"
	if ! command -v node >/dev/null 2>&1; then
		echo "$verdict - s3rver tests: node is not installed (./quickstart.sh test installs nodejs)"
		exit 0
	fi
	if [ ! -x "$S3RVER_BIN" ]; then
		echo "$verdict - s3rver tests: $S3RVER_BIN is missing (./quickstart.sh test installs it)"
		exit 0
	fi
}

s3rver_start() {
	local dir=$1 port i b
	shift
	s3rver_need
	[ -n "$S3RVER_PID" ] && s3rver_stop
	_s3rver_trap
	mkdir -p "$dir/data" || return 1
	S3RVER_LOG=$dir/s3rver.log
	local args=()
	for b in "$@"; do args+=(--configure-bucket "$b"); done
	# The port is free when asked about, but another process may take it
	# before s3rver binds it: then s3rver exits, and another port is tried.
	for _ in 1 2 3; do
		port=$(_s3rver_free_port) || { _s3rver_say "cannot find a free port"; return 1; }
		: >"$S3RVER_LOG"
		FORCE_COLOR=1 "$S3RVER_BIN" --directory "$dir/data" --address 127.0.0.1 \
			--port "$port" "${args[@]}" >"$S3RVER_LOG" 2>&1 </dev/null &
		S3RVER_PID=$!
		S3RVER_URL=http://127.0.0.1:$port
		export S3RVER_URL S3RVER_PID S3RVER_LOG
		# Up when it says it listens and the port takes a connection;
		# at most ~15 s (node starts in well under a second).
		for ((i = 0; i < 150; i++)); do
			if ! kill -0 "$S3RVER_PID" 2>/dev/null; then
				break
			fi
			if grep -q 'listening on' "$S3RVER_LOG" &&
				"$S3_PY" -c 'import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$port" 2>/dev/null; then
				s3rver_mark
				return 0
			fi
			sleep 0.1
		done
		if kill -0 "$S3RVER_PID" 2>/dev/null; then
			_s3rver_say "s3rver did not answer on $S3RVER_URL within 15 s; its log:" \
				"$(head -n 20 "$S3RVER_LOG")"
			s3rver_stop
			return 1
		fi
		wait "$S3RVER_PID" 2>/dev/null
		S3RVER_PID=
		grep -q EADDRINUSE "$S3RVER_LOG" || break
	done
	_s3rver_say "s3rver exited at start; its log:" "$(head -n 20 "$S3RVER_LOG")"
	S3RVER_PID=
	return 1
}

s3rver_stop() {
	local i
	[ -n "${S3RVER_PID:-}" ] || return 0
	kill "$S3RVER_PID" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		kill -0 "$S3RVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$S3RVER_PID" 2>/dev/null
	wait "$S3RVER_PID" 2>/dev/null
	S3RVER_PID=
}

# koa-logger writes a response's line when the response has gone out, which
# may be a moment after the client has it: wait until the log stops growing
# (100 ms without a change, at most 2 s) before reading it.
_s3rver_settle() {
	local last=-1 now i
	for ((i = 0; i < 20; i++)); do
		now=$(stat -c %s "$S3RVER_LOG" 2>/dev/null || echo 0)
		[ "$now" = "$last" ] && return 0
		last=$now
		sleep 0.1
	done
}

s3rver_mark() {
	_s3rver_settle
	_s3rver_mark_line=$(wc -l <"$S3RVER_LOG")
}

s3rver_requests() {
	local method=${1:-[A-Z]+}
	_s3rver_settle
	tail -n +$((_s3rver_mark_line + 1)) "$S3RVER_LOG" | sed 's/\x1b\[[0-9;]*m//g' |
		grep -E "^[a-z]+: +$method /" | sed -E 's/^[a-z]+: +([A-Z]+) ([^ ]*) ([0-9]+).*/\1 \2 \3/' |
		grep -v '/\.lidiagen-probe/' # the probe of conditional writes (publish.c)
}

s3rver_count() {
	s3rver_requests "$1" | grep -c .
}

s3_env() {
	mkdir -p "$1"
	export HOME=$1
	export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
	unset AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE AWS_REGION AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3
	export AWS_CONFIG_FILE=$1/no-such-aws-config AWS_SHARED_CREDENTIALS_FILE=$1/no-such-aws-credentials
	export AWS_EC2_METADATA_DISABLED=true AWS_DEFAULT_REGION=us-east-1
	# awscli's pager and its version check would wait or reach out.
	export AWS_PAGER='' AWS_CLI_AUTO_PROMPT=off
}

s3aws() { "$S3_AWS" --endpoint-url "$S3RVER_URL" "$@"; }
