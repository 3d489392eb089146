#!/usr/bin/env bash
# Debug files from debuginfod servers (issue 25, part 1): --debuginfod and
# --debuginfod-url against Debian's own debuginfod serving a directory of
# debug files on 127.0.0.1 (DEBUGINFOD_CACHE_PATH in the scratch directory):
#
#   gcc -O2 -g -Wl,--build-id -o prog.full prog.c
#   objcopy --only-keep-debug prog.full srv/prog.debug; strip -o prog prog.full
#
# (a) the stripped prog and --debuginfod-url give the bytes of prog with its
#     debug file given beside it; the manifest's inputs and the -v line name
#     the URL; --debuginfod with DEBUGINFOD_URLS (a cache hit) gives them too;
# (b) a build ID the server lacks (a program with .symtab, no DWARF): one
#     warning naming it, the symbols-only file as without --debuginfod, exit 0;
# (c) a closed port: one line naming it, the rest converted, in under 20 s;
# (d) a server that answers nothing (DEBUGINFOD_TIMEOUT=2): one line, the
#     rest converted, in under 20 s; each request tried twice, not three
#     times (DEBUGINFOD_RETRY_LIMIT defaults to 1 here);
# (e) --debuginfod without any server: a usage error;
# (f) dwz: p1 and p2 share a supplementary file (dwz -m alt.debug), served
#     too: stripped p1 and --debuginfod-url, alt.debug moved away, give the
#     bytes of p1 with its debug file and alt.debug at hand; the manifest
#     names both URLs; nothing is left in TMPDIR;
# (g) -j 2 over six build IDs a server answers slowly (404 after 0.5 s):
#     never more than two requests at once, one warning each;
# (h) --build-id ID alone (no PATH): its executable and debug file fetched,
#     the bytes of the binary with its debug file; --build-ids FILE too;
# (i) a build ID the servers lack: one line naming it, exit 1, the others
#     converted; (j) one that is no build ID: a usage error.
set -u
. "$(dirname "$0")/lib/common.sh"

if ! command -v debuginfod >/dev/null 2>&1; then
	skip "debuginfod is not installed (Debian: debuginfod)"
	exit 0
fi
for t in gcc objcopy strip cmp curl dwz; do
	need_tool "$t" "$t" || exit 0
done
w=$(scratch work)
cd "$w" || exit 0
export DEBUGINFOD_CACHE_PATH=$w/cache
unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT DEBUGINFOD_PROGRESS
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done' EXIT

free_port() {
	"$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

cat >prog.c <<'C'
#include <stdio.h>
static int __attribute__((noinline)) twice(int x) { return x * 2; }
int main(int argc, char **argv) { printf("%d\n", twice(argc)); return 0; }
C
mkdir -p srv bin plain
gcc -O2 -g -Wl,--build-id -o prog.full prog.c &&
	objcopy --only-keep-debug prog.full srv/prog.debug && strip -o bin/prog prog.full &&
	gcc -O2 -Wl,--build-id -DPLAIN -o plain/plain prog.c || {
	not_ok "the test programs are built"
	exit 0
}
# (f)'s programs: one inline function and one struct, shared through alt.debug.
cat >common.h <<'C'
struct big { int a, b, c; double d[4]; };
static inline int __attribute__((always_inline)) mix(struct big *p, int x)
{ return p->a * x + p->b - p->c + (int)p->d[x & 3]; }
C
for n in 1 2; do
	cat >p$n.c <<C
#include <stdio.h>
#include "common.h"
static int __attribute__((noinline)) f$n(struct big *p, int x) { return mix(p, x) + $n; }
int main(int argc, char **argv)
{ struct big b = { argc, 2, 3, { 1, 2, 3, 4 } }; printf("%d\\n", f$n(&b, argc)); return 0; }
C
	gcc -O2 -g -Wl,--build-id -o p$n.full p$n.c || exit 0
done
if ! dwz -m "$w/alt.debug" -M "$w/alt.debug" p1.full p2.full >dwz.log 2>&1; then
	not_ok "(f) dwz -m makes a supplementary file" "$(first_lines 5 dwz.log)"
	exit 0
fi
for n in 1 2; do
	objcopy --only-keep-debug p$n.full srv/p$n.debug && strip -o bin/p$n p$n.full || exit 0
done
cp alt.debug srv/alt.debug
cp bin/prog srv/prog # the executable too, for --build-id (h)
ID=$(build_id bin/prog)
PLAIN_ID=$(build_id plain/plain)

# The server, and its first scan done (the four files scanned).
PORT=$(free_port)
debuginfod -p "$PORT" -d "$w/db.sqlite" -F -t 0 -g 0 srv >server.log 2>&1 &
pids+=($!)
URL=http://127.0.0.1:$PORT
for _ in $(seq 100); do
	curl -sf "$URL/metrics" 2>/dev/null | grep -q '^scanned_files_total{source="file"} [5-9]' && break
	sleep 0.1
done
if ! curl -sf -o /dev/null "$URL/buildid/$ID/debuginfo"; then
	not_ok "debuginfod serves srv/prog.debug" "$(first_lines 10 server.log)"
	exit 0
fi

# (a) the same bytes as the debug file given beside the binary.
run direct "$LIDIAGEN" -q bin/prog srv/prog.debug -o direct --layout flat
run fetched "$LIDIAGEN" -v bin/prog --debuginfod-url "$URL" -o fetched --layout flat \
	--manifest fetched.json
want=direct/$ID.lidia got=fetched/$ID.lidia
if [ "$RC" -eq 0 ] && [ -s "$want" ] && cmp -s "$want" "$got"; then
	ok "(a) --debuginfod-url: the bytes of the binary with its debug file given"
else
	not_ok "(a) --debuginfod-url: the bytes of the binary with its debug file given" \
		"exit $RC" "$(first_lines 10 fetched.err)"
fi
from="debuginfod:$URL/buildid/$ID/debuginfo"
if grep -qF "\"inputs\":[\"bin/prog\",\"$from\"]" fetched.json &&
	cat fetched.out fetched.err | grep -qF "<- bin/prog, $from ("; then
	ok "(a) the manifest's inputs and the -v line name the URL"
else
	not_ok "(a) the manifest's inputs and the -v line name the URL" \
		"$(first_lines 5 fetched.json)" "$(first_lines 5 fetched.err)"
fi
DEBUGINFOD_URLS=$URL run cached "$LIDIAGEN" -q --debuginfod bin/prog -o cached --layout flat \
	--manifest cached.json
if [ "$RC" -eq 0 ] && cmp -s "$want" "cached/$ID.lidia" && grep -qF "\"$from\"" cached.json; then
	ok "(a) --debuginfod with DEBUGINFOD_URLS, from the cache: the same bytes and URL"
else
	not_ok "(a) --debuginfod with DEBUGINFOD_URLS, from the cache: the same bytes and URL" \
		"exit $RC" "$(first_lines 10 cached.err)"
fi

# (b) a build ID the server lacks: one warning, the inputs' symbols kept.
run alone "$LIDIAGEN" -q plain/plain -o alone --layout flat
run lacks "$LIDIAGEN" plain/plain --debuginfod-url "$URL" -o lacks --layout flat
n=$(grep -c 'warning:' lacks.err)
if [ "$RC" -eq 0 ] && [ "$n" -eq 1 ] &&
	grep -q "$PLAIN_ID: no debug information on the debuginfod servers" lacks.err &&
	[ -s "alone/$PLAIN_ID.lidia" ] && cmp -s "alone/$PLAIN_ID.lidia" "lacks/$PLAIN_ID.lidia"; then
	ok "(b) a build ID the server lacks: one warning, the symbols-only file, exit 0"
else
	not_ok "(b) a build ID the server lacks: one warning, the symbols-only file, exit 0" \
		"exit $RC, $n warnings" "$(first_lines 10 lacks.err)"
fi

# (c), (d): one line naming the server, the rest converted, in bounded time.
unreachable() { # LABEL URL [ENV...]
	local label=$1 url=$2 t0 t1 n
	shift 2
	rm -rf "$DEBUGINFOD_CACHE_PATH"
	t0=$(date +%s)
	run down env "$@" "$LIDIAGEN" bin/prog plain/plain --debuginfod-url "$url" -o down \
		--layout flat
	t1=$(date +%s)
	n=$(grep -c "debuginfod: $url" down.err)
	if [ "$RC" -eq 0 ] && [ "$n" -eq 1 ] && [ $((t1 - t0)) -lt 20 ] &&
		cmp -s "alone/$PLAIN_ID.lidia" "down/$PLAIN_ID.lidia"; then
		ok "$label: one line naming it, the rest converted, in $((t1 - t0)) s"
	else
		not_ok "$label: one line naming it, the rest converted, in under 20 s" \
			"exit $RC, $n lines, $((t1 - t0)) s" "$(first_lines 10 down.err)"
	fi
}
CLOSED=$(free_port)
unreachable "(c) a closed port" "http://127.0.0.1:$CLOSED"

SLOW=$(free_port)
cat >slow.py <<'PY'
import http.server, socketserver, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[2], "a") as f:
            f.write(self.path + "\n")
        time.sleep(60)
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
"$PYTHON" slow.py "$SLOW" "$w/slow.log" &
pids+=($!)
for _ in $(seq 50); do
	"$PYTHON" -c 'import socket,sys; socket.create_connection(("127.0.0.1",int(sys.argv[1])),1)' \
		"$SLOW" 2>/dev/null && break
	sleep 0.1
done
unreachable "(d) a server that answers nothing (DEBUGINFOD_TIMEOUT=2)" "http://127.0.0.1:$SLOW" \
	DEBUGINFOD_TIMEOUT=2
# Tried twice, not libdebuginfod's three times: DEBUGINFOD_RETRY_LIMIT defaults to 1.
tries=$(sort slow.log 2>/dev/null | uniq -c | awk '{print $1}' | sort -u | tr '\n' ' ')
if [ "$tries" = "2 " ]; then
	ok "(d) a silent server is tried twice for each build ID asked (DEBUGINFOD_RETRY_LIMIT 1)"
else
	not_ok "(d) a silent server is tried twice for each build ID asked (DEBUGINFOD_RETRY_LIMIT 1)" \
		"requests per path: ${tries:-none}" "$(cat slow.log 2>/dev/null)"
fi

# (e) no server to ask.
run none "$LIDIAGEN" -q --debuginfod bin/prog -o none
if [ "$RC" -eq 2 ] && grep -q "DEBUGINFOD_URLS" none.err; then
	ok "(e) --debuginfod without a server: a usage error naming DEBUGINFOD_URLS"
else
	not_ok "(e) --debuginfod without a server: a usage error naming DEBUGINFOD_URLS" \
		"exit $RC" "$(first_lines 5 none.err)"
fi

# (f) a dwz file named by the debug file fetched is fetched too.
P1=$(build_id bin/p1)
ALT=$(build_id srv/alt.debug)
run dwz_direct "$LIDIAGEN" -q bin/p1 srv/p1.debug -o dwz_direct --layout flat
mv alt.debug alt.moved
mkdir -p tmp
TMPDIR=$w/tmp run dwz_fetched "$LIDIAGEN" bin/p1 --debuginfod-url "$URL" -o dwz_fetched \
	--layout flat --manifest dwz.json
mv alt.moved alt.debug
if [ "$RC" -eq 0 ] && [ -s "dwz_direct/$P1.lidia" ] &&
	cmp -s "dwz_direct/$P1.lidia" "dwz_fetched/$P1.lidia" && ! grep -q "warning:" dwz_fetched.err &&
	grep -qF "\"debuginfod:$URL/buildid/$ALT/debuginfo\"" dwz.json && [ -z "$(ls tmp)" ]; then
	ok "(f) dwz: its supplementary file fetched too, the same bytes, both URLs named, TMPDIR clean"
else
	not_ok "(f) dwz: its supplementary file fetched too, the same bytes, both URLs named, TMPDIR clean" \
		"exit $RC; tmp: $(ls tmp)" "$(first_lines 10 dwz_fetched.err)" "$(first_lines 3 dwz.json)"
fi

# (g) at most -j fetches at once.
mkdir -p many
for n in 1 2 3 4 5 6; do
	{ cat prog.c && echo "int variant = $n;"; } >many/m$n.c
	gcc -O2 -Wl,--build-id -o many/m$n many/m$n.c || exit 0
done
COUNT=$(free_port)
cat >count.py <<'PY'
import http.server, socketserver, sys, threading, time
lock, now, most = threading.Lock(), [0], [0]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
            open(sys.argv[2], "w").write("%d\n" % most[0])
        time.sleep(0.5)
        with lock:
            now[0] -= 1
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
"$PYTHON" count.py "$COUNT" "$w/most" &
pids+=($!)
for _ in $(seq 50); do
	"$PYTHON" -c 'import socket,sys; socket.create_connection(("127.0.0.1",int(sys.argv[1])),1)' \
		"$COUNT" 2>/dev/null && break
	sleep 0.1
done
rm -rf "$DEBUGINFOD_CACHE_PATH"
run bounded "$LIDIAGEN" -j 2 many/m1 many/m2 many/m3 many/m4 many/m5 many/m6 \
	--debuginfod-url "http://127.0.0.1:$COUNT" -o bounded --layout flat
most=$(cat most 2>/dev/null)
n=$(grep -c "no debug information on the debuginfod servers" bounded.err)
if [ "$RC" -eq 0 ] && [ "${most:-0}" -ge 1 ] && [ "${most:-0}" -le 2 ] && [ "$n" -eq 6 ]; then
	ok "(g) -j 2: at most $most requests at once, one warning for each of 6 build IDs"
else
	not_ok "(g) -j 2: at most 2 requests at once, one warning for each of 6 build IDs" \
		"exit $RC, at most ${most:-?} at once, $n warnings" "$(first_lines 10 bounded.err)"
fi

# (h)-(j): by build ID alone, from the server of (a) (prog and prog.debug).
rm -rf "$DEBUGINFOD_CACHE_PATH"
run byid "$LIDIAGEN" --build-id "$ID" --debuginfod-url "$URL" -o byid --layout flat
if [ "$RC" -eq 0 ] && cmp -s "$want" "byid/$ID.lidia"; then
	ok "(h) --build-id alone: executable and debug file fetched, the bytes of both given"
else
	not_ok "(h) --build-id alone: the bytes of both given" "exit $RC" "$(first_lines 10 byid.err)"
fi
printf '# seen by the profiler\n%s\n\n  %s  \n' "$PLAIN_ID" "$ID" >ids.txt
run byfile "$LIDIAGEN" --build-ids ids.txt --debuginfod-url "$URL" -o byfile --layout flat
if [ "$RC" -eq 1 ] && cmp -s "$want" "byfile/$ID.lidia" &&
	[ "$(grep -c "^lidiagen: $PLAIN_ID: not on the debuginfod servers" byfile.err)" -eq 1 ]; then
	ok "(i) --build-ids FILE: the one served converted, the one lacking one line, exit 1"
else
	not_ok "(i) --build-ids FILE: the one served converted, the one lacking one line, exit 1" \
		"exit $RC" "$(first_lines 10 byfile.err)"
fi
run badid "$LIDIAGEN" --build-id xyz --debuginfod-url "$URL" -o badid
if [ "$RC" -eq 2 ] && grep -q "'xyz' is not a build ID" badid.err; then
	ok "(j) --build-id that is no build ID: a usage error"
else
	not_ok "(j) --build-id that is no build ID: a usage error" "exit $RC" "$(cat badid.err)"
fi
