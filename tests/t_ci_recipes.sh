#!/usr/bin/env bash
# doc/ci.md's CI jobs, run: every ```sh block marked <!-- ci-step: CI STEP -->
# is extracted and run, in the order and under the conditions of its job
# (GitHub Actions: each step its own `sh -e`, a failed step skips the rest,
# the failed-inputs step runs when publish's status output is 1, the
# credentials exported by configure-aws-credentials reach only the steps
# after it; GitLab: the script items in one bash, the CI/CD variables in all
# of them), on a small C project built by a Makefile into dist/ (app and
# libgreet.so). The bucket `test-bucket` is tests/tools/fake_s3.py on
# 127.0.0.1 (tests/lib/fake_s3.sh), which checks every request's SigV4
# signature; AWS_ENDPOINT_URL points at it, the instance metadata service is
# off, and the AWS files are scratch files. On PATH: the lidiagen under test,
# fakes of apt-get, git and `make -C <clone>` that record what the install
# step asks for, and an `aws` that records any call and fails (the jobs must
# not need the AWS CLI). The CI cache is a directory the test copies the
# state to and from, as the job's cache steps say.
#
# For each CI: a first run publishes exactly the Lidia files at
# symbolizer/anonymous/<build-id> (read back from the server), which
# Pyroscope's reader opens, signed with the CI's credentials; a second run on
# a kept workspace, with the state from the cache and the inputs garbled
# behind unchanged sizes and times, reads no input, sends no PUT and GETs no
# object; a run on a fresh workspace (a new runner) sends no PUT either;
# exit 1 (a broken input) publishes the rest and fails the job; exit 2 (a
# usage error) sends no request at all. Then the `lidiagen upload` step on a
# tree as the CMake rule writes it, and the credentials note (a
# credential_process profile: run by lidiagen itself, and published after
# `aws configure export-credentials` too; skipped without the AWS CLI v2). Then
# each job's YAML parses and runs exactly those blocks (python3-yaml;
# skipped without it), and README's library example compiles against
# $BUILD/liblidia.a and prints what `lidiagen lookup` prints.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/fake_s3.sh"
top=$(cd "$TESTS_DIR/.." && pwd)
doc=$top/doc/ci.md
work=$(scratch ci)
unset MAKEFLAGS MFLAGS MAKELEVEL
# Nothing but 127.0.0.1: no proxy, no instance metadata, no AWS files of the user.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy='*' NO_PROXY='*'
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
fake_s3_env "$work"

steps=$work/steps
mkdir -p "$steps"
missing=
for ci in github gitlab; do
	doc_block "ci-recipe: $ci" "$doc" >"$steps/$ci.yaml" || missing+=" ci-recipe:$ci"
	for s in install build publish failed; do
		[ "$ci.$s" = gitlab.failed ] && continue
		doc_block "ci-step: $ci $s" "$doc" >"$steps/$ci.$s.sh" || missing+=" ci-step:$ci/$s"
	done
done
for s in upload export; do
	doc_block "ci-step: $s publish" "$doc" >"$steps/$s.publish.sh" || missing+=" ci-step:$s/publish"
done
if [ -n "$missing" ]; then
	not_ok "doc/ci.md has each recipe and step marker once" "missing or repeated:$missing"
	exit 0
fi
ok "doc/ci.md has each recipe and step marker once"

# ---- the fake project, the fake tools, lidiagen "installed" --------------------
proj=$work/project
mkdir -p "$proj"
cat >"$proj/app.c" <<'EOF'
#include <stdlib.h>
int greet(const char *who);
static inline __attribute__((always_inline)) int square(int x)
{
	return x * x + 1;
}
int main(int argc, char **argv)
{
	int n = square(argc > 1 ? atoi(argv[1]) : argc);
	return (greet("ci") + n) & 1;
}
EOF
cat >"$proj/greet.c" <<'EOF'
#include <stdio.h>
int greet(const char *who)
{
	return printf("hello, %s\n", who);
}
EOF
printf '%s\n' 'CFLAGS = -g -O2' 'all: dist/app' \
	'dist/app: app.c dist/libgreet.so' \
	"	\$(CC) \$(CFLAGS) -Wl,--build-id -o \$@ app.c -Ldist -lgreet -Wl,-rpath,'\$\$ORIGIN'" \
	'dist/libgreet.so: greet.c' '	mkdir -p dist' \
	'	$(CC) $(CFLAGS) -fPIC -shared -Wl,--build-id -o $@ greet.c' >"$proj/Makefile"

fake=$work/fakebin
inst=$work/instbin
mkdir -p "$fake" "$inst"
real_make=$(command -v make)
# The AWS CLI the recipes must not need (the credentials note finds the real one).
real_aws=
for a in $(type -ap aws); do
	case $("$a" --version 2>/dev/null) in aws-cli/2.*) real_aws=$a && break ;; esac
done
cat >"$fake/aws" <<'EOF'
#!/bin/sh
echo "aws $*" >>"$CI_FAKE_LOG.aws"
echo "aws (fake): the CI recipes do not install the AWS CLI" >&2
exit 127
EOF
cat >"$fake/apt-get" <<'EOF'
#!/bin/sh
echo "apt-get $*" >>"$CI_FAKE_LOG"
EOF
cat >"$fake/git" <<'EOF'
#!/bin/sh
# git clone ... DEST: recorded; DEST is remembered for the fake make.
echo "git $*" >>"$CI_FAKE_LOG"
[ "$1" = clone ] || exit 1
for a; do dest=$a; done
echo "$dest" >"$CI_FAKE_LOG.clone"
EOF
cat >"$fake/make" <<EOF
#!/bin/sh
# make -C <what git cloned> ...: lidiagen's own build, recorded, not run.
if [ "\$1" = -C ] && [ -f "\$CI_FAKE_LOG.clone" ] && [ "\$2" = "\$(cat "\$CI_FAKE_LOG.clone")" ]; then
	echo "make \$*" >>"\$CI_FAKE_LOG"
	exit 0
fi
exec $real_make "\$@"
EOF
chmod +x "$fake"/*
ln -sf "$LIDIAGEN" "$inst/lidiagen"

export LIDIAGEN_GIT=https://git.example.com/lidiagen.git LIDIAGEN_REF=v0.1.0 LIDIA_BUCKET=test-bucket
export PATH=$fake:$inst:$PATH

# ---- the bucket ----------------------------------------------------------------------
# The credentials each CI gives the job: GitHub's role session (what
# configure-aws-credentials exports), GitLab's CI/CD variables.
GH_CREDS=(AWS_ACCESS_KEY_ID=ASIAGITHUBROLE AWS_SECRET_ACCESS_KEY='role/Secret+key=1'
	AWS_SESSION_TOKEN=github-oidc-session AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1)
GL_CREDS=(AWS_ACCESS_KEY_ID=AKIAGITLABCI AWS_SECRET_ACCESS_KEY='gitlab/Secret+key=2'
	AWS_DEFAULT_REGION=us-east-1)

# server NAME CREDS...: stop the server started last, start a new one with an
# empty test-bucket that accepts only CREDS (VAR=VALUE, as in GH_CREDS);
# AWS_ENDPOINT_URL points at it. Sets SRV, its directory.
server() {
	local name=$1 n=${#FAKE_S3_PIDS[@]} c ak='' sk='' tok=''
	shift
	if [ "$n" -gt 0 ]; then
		kill "${FAKE_S3_PIDS[n - 1]}" 2>/dev/null
		wait "${FAKE_S3_PIDS[n - 1]}" 2>/dev/null
		unset 'FAKE_S3_PIDS[n - 1]'
	fi
	for c; do
		case $c in
		AWS_ACCESS_KEY_ID=*) ak=${c#*=} ;;
		AWS_SECRET_ACCESS_KEY=*) sk=${c#*=} ;;
		AWS_SESSION_TOKEN=*) tok=${c#*=} ;;
		esac
	done
	SRV=$work/srv-$name
	fake_s3_start "$SRV" --access-key "$ak" --secret-key "$sk" ${tok:+--session-token "$tok"} \
		--bucket test-bucket
	export AWS_ENDPOINT_URL=$FAKE_S3_URL
}

# s3_log: the S3 requests since the last clear, one a line:
# METHOD STATUS ACCESS_KEY TOKEN(0/1) KEY ("-": none).
s3_log() {
	fake_s3_ctl GET log | "$S3_PYTHON" -c '
import json, sys
for r in json.load(sys.stdin):
    if not r.get("imds"):
        print(r["method"], r["status"], r.get("access_key"), int(bool(r.get("token"))),
              r.get("key") or "-")
'
}
# object_gets: how many GETs of an object (not of a listing) since the last clear.
object_gets() { s3_log | awk '$1 == "GET" && $5 != "-"' | grep -c .; }
# stored_keys: the keys in the bucket of the server started last, sorted
# (every PUT it accepted since it started: nothing deletes).
stored_keys() {
	"$S3_PYTHON" -c '
import json, sys
keys = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("method") == "PUT" and r.get("status") == 200 and not r.get("imds"):
        keys.add(r["key"])
print("\n".join(sorted(keys)))
' "$SRV/log.jsonl" 2>/dev/null
}

# ---- running a job ---------------------------------------------------------------
# new_ws DIR: a fresh checkout of the project (a new runner's workspace).
new_ws() {
	rm -rf "$1"
	cp -r "$proj" "$1"
}

# gh_job SCEN WS CACHE: the GitHub job's steps in WS; the cache steps copy the
# state to and from CACHE; configure-aws-credentials exports GH_CREDS for the
# steps after it. Sets JOB_RC (0 or 1), STATUS (publish's output) and RAN (the
# run steps run). Each step's output goes to SCEN.STEP.log.
gh_job() {
	local scen=$1 ws=$2 cache=$3 step rc
	local creds=()
	JOB_RC=0 RAN=
	: >"$scen.github_output"
	for step in install build restore credentials publish save failed; do
		case $step in
		restore)
			[ "$JOB_RC" -eq 0 ] && [ -f "$cache/state" ] && cp -p "$cache/state" "$ws/.lidiagen-state"
			continue
			;;
		credentials)
			[ "$JOB_RC" -eq 0 ] && creds=("${GH_CREDS[@]}")
			continue
			;;
		save)
			[ "$JOB_RC" -eq 0 ] && [ -f "$ws/.lidiagen-state" ] && cp -p "$ws/.lidiagen-state" "$cache/state"
			continue
			;;
		failed)
			STATUS=$(sed -n 's/^status=//p' "$scen.github_output")
			[ "$STATUS" = 1 ] || continue
			;;
		esac
		[ "$JOB_RC" -eq 0 ] || continue
		(cd "$ws" && env "${creds[@]}" GITHUB_OUTPUT="$scen.github_output" sh -e "$steps/github.$step.sh") \
			>"$scen.$step.log" 2>&1 </dev/null
		rc=$?
		RAN+=" $step"
		[ "$rc" -eq 0 ] || JOB_RC=1
	done
	STATUS=$(sed -n 's/^status=//p' "$scen.github_output")
}

# gl_job SCEN WS CACHE: the GitLab job: cache restored, the script items in one
# bash (as the runner runs them) with GL_CREDS as CI/CD variables, the cache
# saved (when: always). Sets JOB_RC.
gl_job() {
	local scen=$1 ws=$2 cache=$3 s
	[ -f "$cache/state" ] && cp -p "$cache/state" "$ws/.lidiagen-state"
	{
		echo 'set -eo pipefail'
		for s in install build publish; do
			cat "$steps/gitlab.$s.sh"
		done
	} >"$scen.script"
	(cd "$ws" && env "${GL_CREDS[@]}" bash "$scen.script") >"$scen.log" 2>&1 </dev/null
	JOB_RC=$?
	[ -f "$ws/.lidiagen-state" ] && cp -p "$ws/.lidiagen-state" "$cache/state"
	STATUS=
}

# job CI SCEN WS CACHE: either job, after clearing the server's log; its whole
# log in SCEN.all.
job() {
	local ci=$1
	shift
	fake_s3_clear_log
	if [ "$ci" = github ]; then gh_job "$@"; else gl_job "$@"; fi
	cat "$1".*log >"$1.all" 2>/dev/null
}

# The keys Pyroscope reads for WS's dist/ files, sorted.
expected_keys() {
	local f
	for f in "$1"/dist/app "$1"/dist/libgreet.so; do
		printf 'symbolizer/anonymous/%s\n' "$(build_id "$f")"
	done | sort
}
# new_files WS: what a job wrote in WS outside dist/ (the project's files aside).
new_files() {
	(cd "$1" && find . -path ./dist -prune -o -type f -print | sed 's|^\./||' | sort) |
		grep -vxF -f <(cd "$proj" && find . -type f | sed 's|^\./||')
}
manifest_count() { grep -c "\"status\":\"$2\"" "$1" 2>/dev/null; }

# ---- the runs ----------------------------------------------------------------------
run_ci() {
	local ci=$1 base=$work/$1 ws cache keys got detail k main
	local credvar=GH_CREDS
	[ "$ci" = gitlab ] && credvar=GL_CREDS
	local -n ci_creds=$credvar
	mkdir -p "$base"
	ws=$base/ws cache=$base/cache
	mkdir -p "$cache"
	export CI_FAKE_LOG=$base/install.log
	server "$ci-1" "${ci_creds[@]}"

	# 1. The first run: nothing cached, an empty bucket.
	new_ws "$ws"
	job "$ci" "$base/run1" "$ws" "$cache"
	if [ "$JOB_RC" -ne 0 ]; then
		not_ok "$ci: the first run succeeds" "exit $JOB_RC" "$(tail -n 20 "$base/run1.all")"
		return
	fi
	ok "$ci: the first run succeeds"

	local pkgs want p miss=
	pkgs=" $(sed -n 's/^apt-get install //p' "$CI_FAKE_LOG" | tr -s ' \\' '  ') "
	want=$(sed -n '/^BUILD_DEPS="/,/"/p' "$top/quickstart.sh" | sed 's/^BUILD_DEPS="//; s/"$//')
	for p in $want git; do
		case $pkgs in *" $p "*) ;; *) miss+=" $p" ;; esac
	done
	case $pkgs in *" awscli "*) miss+=" (and awscli is installed)" ;; esac
	if grep -q '^apt-get update' "$CI_FAKE_LOG" && [ -z "$miss" ] && [ ! -s "$CI_FAKE_LOG.aws" ]; then
		ok "$ci: install: apt-get installs quickstart.sh's build packages and git; no awscli, and no step runs aws"
	else
		not_ok "$ci: install: apt-get installs quickstart.sh's build packages and git; no awscli, and no step runs aws" \
			"missing:${miss:- (no apt-get update)}" "$(cat "$CI_FAKE_LOG")" \
			"$(cat "$CI_FAKE_LOG.aws" 2>/dev/null)"
	fi
	local dest
	dest=$(cat "$CI_FAKE_LOG.clone" 2>/dev/null)
	if grep -qx "git clone .*--branch $LIDIAGEN_REF $LIDIAGEN_GIT $dest" "$CI_FAKE_LOG" &&
		[ "$(grep '^make ' "$CI_FAKE_LOG" | sed 's/ -j[0-9]*//')" = "make -C $dest
make -C $dest install" ]; then
		ok "$ci: install: clones \$LIDIAGEN_REF of \$LIDIAGEN_GIT, then make and make install in it"
	else
		not_ok "$ci: install: clones \$LIDIAGEN_REF of \$LIDIAGEN_GIT, then make and make install in it" \
			"$(cat "$CI_FAKE_LOG")"
	fi

	keys=$(expected_keys "$ws")
	got=$(stored_keys)
	if [ "$got" = "$keys" ] && [ "$(fake_s3_count PUT)" -eq 2 ]; then
		ok "$ci: the bucket holds exactly the Lidia files, at symbolizer/anonymous/<build-id>, one PUT each"
	else
		not_ok "$ci: the bucket holds exactly the Lidia files, at symbolizer/anonymous/<build-id>, one PUT each" \
			"want:" "$keys" "got ($(fake_s3_count PUT) PUT):" "$got"
	fi
	# Read back from the server: Pyroscope's reader opens each; the metadata
	# is lidiagen's, with the SHA-256 of what is stored.
	detail=
	mkdir -p "$base/got"
	for k in $keys; do
		if ! fake_s3_object test-bucket "$k" "$base/got/${k##*/}"; then
			detail+=" missing:$k"
		elif ! pyroscope_reader "$base/got/${k##*/}" >/dev/null 2>&1; then
			detail+=" refused:$k"
		elif ! fake_s3_meta test-bucket "$k" |
			grep -q "\"x-amz-meta-lidia-sha256\": *\"$(sha256sum <"$base/got/${k##*/}" | cut -c1-64)\""; then
			detail+=" metadata:$k"
		fi
	done
	main=$(nm "$ws/dist/app" | awk '$3 == "main" { print $1 }')
	if [ -z "$detail" ] && [ -n "$main" ] &&
		pyroscope_reader "$base/got/$(build_id "$ws/dist/app")" "0x$main" 2>&1 |
		grep -q '| main @ .*app\.c'; then
		ok "$ci: read back, Pyroscope's reader opens each and finds main in app's; each carries its SHA-256"
	else
		not_ok "$ci: read back, Pyroscope's reader opens each and finds main in app's; each carries its SHA-256" \
			"${detail:- main at 0x$main}"
	fi
	local who
	who=$(s3_log | awk '{ print $3, $4 }' | sort -u)
	if { [ "$ci" = github ] && [ "$who" = "ASIAGITHUBROLE 1" ]; } ||
		{ [ "$ci" = gitlab ] && [ "$who" = "AKIAGITLABCI 0" ]; }; then
		ok "$ci: every request is signed with the CI's credentials from the environment${who:+ ($who)}"
	else
		not_ok "$ci: every request is signed with the CI's credentials from the environment" \
			"access key, token sent:" "$who"
	fi
	if [ "$(new_files "$ws")" = ".lidiagen-state
manifest.jsonl" ] && [ -f "$cache/state" ] && [ "$(manifest_count "$ws/manifest.jsonl" uploaded)" = 2 ]; then
		ok "$ci: the workspace gets the state and the manifest (both uploaded), nothing else; the state is cached"
	else
		not_ok "$ci: the workspace gets the state and the manifest (both uploaded), nothing else; the state is cached" \
			"$(new_files "$ws")" "cache: $(ls "$cache")" "$(cat "$ws/manifest.jsonl" 2>/dev/null)"
	fi

	# 2. A runner that keeps its workspace: the state comes from the cache, and
	# the inputs are garbled behind unchanged sizes and times, so that reading
	# any of them would show.
	rm -f "$ws/.lidiagen-state"
	cp -p "$ws/dist/app" "$ws/dist/libgreet.so" "$base/"
	for f in "$ws/dist/app" "$ws/dist/libgreet.so"; do
		head -c "$(stat -c %s "$f")" /dev/zero >"$f.new"
		touch -r "$f" "$f.new"
		mv "$f.new" "$f"
	done
	job "$ci" "$base/run2" "$ws" "$cache"
	# Had lidiagen read the garbled inputs, it would have found no build ID in them.
	if [ "$JOB_RC" -eq 0 ] && [ "$(grep -c . "$ws/manifest.jsonl")" -eq 2 ] &&
		[ "$(manifest_count "$ws/manifest.jsonl" exists)" = 2 ]; then
		ok "$ci: a second run with the cached state reads no input (garbled ones unnoticed: both exist)"
	else
		not_ok "$ci: a second run with the cached state reads no input (garbled ones unnoticed: both exist)" \
			"exit $JOB_RC" "$(grep lidiagen "$base/run2.all")" "$(cat "$ws/manifest.jsonl")"
	fi
	local puts gets heads
	puts=$(fake_s3_count PUT) gets=$(object_gets) heads=$(fake_s3_count HEAD)
	# The state has each object's ETag: the listing shows them unchanged, no HEAD needed.
	if [ "$puts" -eq 0 ] && [ "$gets" -eq 0 ] && [ "$heads" -eq 0 ] && [ "$(stored_keys)" = "$keys" ]; then
		ok "$ci: and sends no PUT, GETs no object, no HEAD (the state knows the objects)"
	else
		not_ok "$ci: and sends no PUT, GETs no object" "$puts PUT, $gets GET of an object, $heads HEAD" \
			"$(s3_log)"
	fi
	cp -p "$base/app" "$base/libgreet.so" "$ws/dist/"

	# 3. A fresh runner: a new workspace, the state from the cache.
	new_ws "$ws"
	job "$ci" "$base/run3" "$ws" "$cache"
	puts=$(fake_s3_count PUT) gets=$(object_gets)
	if [ "$JOB_RC" -eq 0 ] && [ "$(expected_keys "$ws")" = "$keys" ] && [ "$puts" -eq 0 ] &&
		[ "$gets" -eq 0 ] && [ "$(manifest_count "$ws/manifest.jsonl" exists)" = 2 ]; then
		ok "$ci: on a fresh runner, the same build IDs, both exist: no PUT, no GET of an object"
	else
		not_ok "$ci: on a fresh runner, the same build IDs, both exist: no PUT, no GET of an object" \
			"exit $JOB_RC; $puts PUT, $gets GET of an object" "$(cat "$ws/manifest.jsonl" 2>/dev/null)" \
			"$(tail -n 5 "$base/run3.all")"
	fi

	# 4. Exit 1: one input fails, the others are published, the job fails.
	server "$ci-4" "${ci_creds[@]}"
	rm -rf "${cache:?}"/*
	new_ws "$ws"
	mkdir -p "$ws/dist"
	head -c 3000 "$base/app" >"$ws/dist/broken"
	job "$ci" "$base/run4" "$ws" "$cache"
	got=$(stored_keys)
	local want_rc="job exits 1"
	[ "$ci" = github ] && want_rc="publish sets status=1, the failed-inputs step fails the job"
	if [ "$JOB_RC" -eq 1 ] && [ "$got" = "$keys" ] && grep -q 'dist/broken' "$base/run4.all" &&
		grep -q '"input":"dist/broken","status":"failed"' "$ws/manifest.jsonl" &&
		{ [ "$ci" = gitlab ] || { [ "$STATUS" = 1 ] && [ "$RAN" = " install build publish failed" ]; }; }; then
		ok "$ci: exit 1 (a truncated ELF in dist/, named): the others are published, then $want_rc"
	else
		not_ok "$ci: exit 1 (a truncated ELF in dist/, named): the others are published, then $want_rc" \
			"job exit $JOB_RC, status '$STATUS', steps run:${RAN:-}" "bucket:" "$got" \
			"$(tail -n 8 "$base/run4.all")"
	fi

	# 5. Exit 2: the manifest's path is a directory; no request is sent.
	new_ws "$ws"
	mkdir "$ws/manifest.jsonl"
	RAN=
	job "$ci" "$base/run5" "$ws" "$cache"
	if [ "$JOB_RC" -ne 0 ] && [ -z "$(s3_log)" ] && grep -q "manifest.jsonl' is not a regular file" "$base/run5.all" &&
		{ [ "$ci" = gitlab ] && [ "$JOB_RC" -eq 2 ] ||
			{ [ "$STATUS" = 2 ] && [ "$RAN" = " install build publish" ]; }; }; then
		ok "$ci: exit 2 (manifest.jsonl is a directory): no request reaches the bucket, the job fails there"
	else
		not_ok "$ci: exit 2 (manifest.jsonl is a directory): no request reaches the bucket, the job fails there" \
			"job exit $JOB_RC, status '$STATUS', steps run:${RAN:-}" "requests:" "$(s3_log)" \
			"$(tail -n 5 "$base/run5.all")"
	fi
}

run_ci github
run_ci gitlab

# ---- lidiagen upload: a tree the build wrote ----------------------------------------
# The tree as lidiagen_add_symbols() writes it: build/lidia/symbolizer/...
up=$work/upload
mkdir -p "$up"
server upload "${GL_CREDS[@]}"
new_ws "$up/ws"
(cd "$up/ws" && make -s && "$LIDIAGEN" -q -r dist -o build/lidia) >"$up/build.log" 2>&1
keys=$(expected_keys "$up/ws")
for i in 1 2; do
	fake_s3_clear_log
	run "$up/run$i" env "${GL_CREDS[@]}" sh -c 'cd "$1" && sh -e "$2"' sh "$up/ws" "$steps/upload.publish.sh"
	puts[i]=$(fake_s3_count PUT) heads[i]=$(fake_s3_count HEAD) rc[i]=$RC
	cp "$up/ws/manifest.jsonl" "$up/run$i.jsonl" 2>/dev/null
done
detail=
for k in $keys; do
	fake_s3_object test-bucket "$k" "$up/got" && cmp -s "$up/got" "$up/ws/build/lidia/$k" || detail+=" $k"
done
if [ "${rc[1]}" -eq 0 ] && [ "$(stored_keys)" = "$keys" ] && [ -z "$detail" ] && [ "${puts[1]}" -eq 2 ] &&
	[ "$(manifest_count "$up/run1.jsonl" uploaded)" = 2 ]; then
	ok "upload: the tree's files, byte for byte, at their keys, one PUT each"
else
	not_ok "upload: the tree's files, byte for byte, at their keys, one PUT each" \
		"exit ${rc[1]}, ${puts[1]} PUT; differ:${detail:- none}" "$(stored_keys)" "$(first_lines 5 "$up/run1.err")"
fi
if [ "${rc[2]}" -eq 0 ] && [ "${puts[2]}" -eq 0 ] && [ "${heads[2]}" -eq 0 ] &&
	[ "$(manifest_count "$up/run2.jsonl" exists)" = 2 ]; then
	ok "upload again: both exist, no PUT and no HEAD (the listing's ETags are the files' MD5)"
else
	not_ok "upload again: both exist, no PUT and no HEAD" "exit ${rc[2]}, ${puts[2]} PUT, ${heads[2]} HEAD" \
		"$(cat "$up/run2.jsonl" 2>/dev/null)"
fi

# ---- credentials lidiagen cannot get itself: aws configure export-credentials --------
if [ -z "$real_aws" ]; then
	skip "the credentials note: no AWS CLI version 2 here (Debian 12: apt-get install awscli)"
else
	ex=$work/export
	mkdir -p "$ex/bin"
	server export "${GL_CREDS[@]}"
	ln -sf "$real_aws" "$ex/bin/aws"
	cat >"$ex/creds.sh" <<EOF
#!/bin/sh
printf '{"Version": 1, "AccessKeyId": "%s", "SecretAccessKey": "%s"}\n' "${GL_CREDS[0]#*=}" "${GL_CREDS[1]#*=}"
EOF
	chmod +x "$ex/creds.sh"
	printf '[profile ci-process]\ncredential_process = %s\nregion = us-east-1\n' "$ex/creds.sh" >"$ex/config"
	new_ws "$ex/ws"
	make -s -C "$ex/ws" >"$ex/build.log" 2>&1
	keys=$(expected_keys "$ex/ws")
	penv=(AWS_CONFIG_FILE="$ex/config" AWS_PROFILE=ci-process)
	run "$ex/alone" env "${penv[@]}" sh -c 'cd "$1" && lidiagen -r dist/ -o "s3://$LIDIA_BUCKET"' sh "$ex/ws"
	if [ "$RC" -eq 0 ] && [ "$(stored_keys)" = "$keys" ] &&
		[ "$(s3_log | awk '{ print $3 }' | sort -u)" = "${GL_CREDS[0]#*=}" ]; then
		ok "a credential_process profile alone: lidiagen runs it, published, signed with the process's keys"
	else
		not_ok "a credential_process profile alone: lidiagen runs it, published with its keys" \
			"exit $RC" "$(first_lines 3 "$ex/alone.err")" "$(s3_log)"
	fi
	run "$ex/run" env "${penv[@]}" PATH="$ex/bin:$PATH" \
		sh -c 'cd "$1" && sh -e "$2"' sh "$ex/ws" "$steps/export.publish.sh"
	if [ "$RC" -eq 0 ] && [ "$(stored_keys)" = "$keys" ] &&
		[ "$(s3_log | awk '{ print $3 }' | sort -u)" = "${GL_CREDS[0]#*=}" ]; then
		ok "the same after aws configure export-credentials: published, signed with the process's keys"
	else
		not_ok "the same after aws configure export-credentials: published, signed with the process's keys" \
			"exit $RC" "$(first_lines 5 "$ex/run.err")" "$(stored_keys)"
	fi
fi

# ---- the YAML -------------------------------------------------------------------------
out=$("$PYTHON" "$TESTS_LIB/ci_yaml.py" "$steps" 2>&1)
case $? in
0) printf '%s\n' "$out" ;;
3) skip "doc/ci.md's YAML parses and runs the ci-step blocks: python3's yaml module is missing (apt-get install python3-yaml)" ;;
*) not_ok "doc/ci.md's YAML is checked" "$out" ;;
esac

# ---- README ---------------------------------------------------------------------------
if grep -q '(doc/ci.md)' "$top/README.md"; then
	ok "README links doc/ci.md"
else
	not_ok "README links doc/ci.md"
fi

# README's library example: the ```c block of "## The library", compiled
# against this build's static library and run on the project's app at an
# address with an inlined frame.
ex=$work/example
mkdir -p "$ex"
awk '/^## / { in_lib = ($0 == "## The library") }
	in_lib && /^```c$/ { on = 1; n++; next }
	on && /^```/ { on = 0; next }
	on && n == 1 { print }' "$top/README.md" >"$ex/example.c"
if [ ! -s "$ex/example.c" ]; then
	not_ok "README's library example is a \`\`\`c block under \"## The library\""
	exit 0
fi
# A sanitizer build's library needs the same -fsanitize in the program.
# shellcheck disable=SC2086
run "$ex/cc" cc -std=c11 -Wall -Wextra -Werror ${SANITIZE:+-fsanitize=$SANITIZE} -I"$top/lib" \
	-o "$ex/example" "$ex/example.c" \
	"$BUILD/liblidia.a" $(pkg-config --libs libelf libdw libzstd liblzma libdeflate) -lpthread -ldl -lstdc++
if [ "$RC" -ne 0 ]; then
	not_ok "README's library example compiles against $BUILD/liblidia.a" "$(first_lines 20 "$ex/cc.err")"
	exit 0
fi
ok "README's library example compiles against $BUILD/liblidia.a"

# The project's app, and lidiagen's file of it; the first address of main with an inlined frame.
cp -r "$proj" "$ex/project"
make -s -C "$ex/project" >/dev/null 2>&1
app=$ex/project/dist/app
ref=$ex/ref.lidia
"$LIDIAGEN" -q "$app" -o - >"$ref" 2>/dev/null
read -r mainaddr mainsize < <(nm -S "$app" | awk '$4 == "main" { print $1, $2 }')
addr=$(for ((i = 0; i < 16#${mainsize:-0}; i++)); do printf '0x%x\n' $((16#$mainaddr + i)); done |
	"$LIDIAGEN" lookup --json "$ref" | awk -F'"' '/"inlined":true/ { print $4; exit }')
if [ -z "$addr" ]; then
	not_ok "app's main has an address with an inlined frame" "main: $mainaddr size $mainsize" "$ref"
	exit 0
fi
(cd "$ex" && "$ex/example" "$app" "$addr") >"$ex/run.out" 2>"$ex/run.err"
RC=$?
"$LIDIAGEN" lookup "$ref" "$addr" | grep . >"$ex/lookup.out"
if [ "$RC" -eq 0 ] && diff -u "$ex/lookup.out" "$ex/run.out" >"$ex/diff" &&
	grep -q '^ (inlined by) main at ' "$ex/run.out"; then
	ok "README's library example runs and prints $addr as lidiagen lookup does, (inlined by) before main"
else
	not_ok "README's library example runs and prints $addr as lidiagen lookup does, (inlined by) before main" \
		"exit $RC" "$(first_lines 5 "$ex/run.err")" "$(cat "$ex/diff")"
fi
written=$(find "$ex/out" -path "*/symbolizer/*/$(build_id "$app")")
if [ -n "$written" ] && pyroscope_reader "$written" >/dev/null 2>&1; then
	ok "the file it wrote at out/symbolizer/<tenant>/<build-id> opens in Pyroscope's reader"
else
	not_ok "the file it wrote at out/symbolizer/<tenant>/<build-id> opens in Pyroscope's reader" \
		"$(ls -R "$ex/out" 2>&1 | head -n 5)"
fi
