#!/usr/bin/env bash
# doc/ci.md's CI jobs, run: every ```sh block marked <!-- ci-step: CI STEP -->
# is extracted and run, in the order and under the conditions of its job
# (GitHub Actions: each step its own `sh -e`, a failed step skips the rest,
# the failed-inputs step runs when convert's status output is 1; GitLab: the
# script items in one bash), on a small C project built by a Makefile into
# dist/ (app and libgreet.so). On PATH: the lidiagen under test, a fake `aws`
# (tests/lib/ci_fake_aws.sh: copies into $FAKE_S3/buckets/test-bucket, which
# stands for the bucket) and fakes of apt-get, git and `make -C <clone>`
# that record what the install step asks for. The CI cache is a directory
# the test copies the state to and from, as the job's cache steps say.
#
# For each CI: a first run publishes exactly the Lidia files at
# symbolizer/anonymous/<build-id>, which Pyroscope's reader opens, with the
# state outside out/; a second run on a kept workspace, with the state from
# the cache and the inputs garbled behind unchanged sizes and times, reads no
# input, rewrites no output and uploads nothing; a run on a fresh workspace
# (a new runner) uploads nothing either; exit 1 (a broken input) publishes
# the rest and fails the job; exit 2 (a usage error) publishes nothing.
# Then each job's YAML parses and runs exactly those blocks (python3-yaml;
# skipped without it), and README's library example compiles against
# $BUILD/liblidia.a and prints what `lidiagen lookup` prints.
set -u
. "$(dirname "$0")/lib/common.sh"
top=$(cd "$TESTS_DIR/.." && pwd)
doc=$top/doc/ci.md
work=$(scratch ci)
unset MAKEFLAGS MFLAGS MAKELEVEL

# extract MARKER FILE: the fenced block after the line "<!-- MARKER -->";
# exit 1 unless the marker is there exactly once.
extract() {
	awk -v m="<!-- $1 -->" '
		$0 == m { seen++; state = 1; next }
		state == 1 && /^```/ { state = 2; next }
		state == 2 && /^```/ { state = 0; next }
		state == 2 { print }
		END { exit seen == 1 ? 0 : 1 }' "$2"
}

steps=$work/steps
mkdir -p "$steps"
missing=
for ci in github gitlab; do
	extract "ci-recipe: $ci" "$doc" >"$steps/$ci.yaml" || missing+=" ci-recipe:$ci"
	for s in install build convert publish failed; do
		[ "$ci.$s" = gitlab.failed ] && continue
		extract "ci-step: $ci $s" "$doc" >"$steps/$ci.$s.sh" || missing+=" ci-step:$ci/$s"
	done
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
printf '#!/bin/sh\nexec bash %q "$@"\n' "$TESTS_LIB/ci_fake_aws.sh" >"$fake/aws"
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

# ---- running a job ---------------------------------------------------------------
# new_ws DIR: a fresh checkout of the project (a new runner's workspace).
new_ws() {
	rm -rf "$1"
	cp -r "$proj" "$1"
}

# gh_job SCEN WS CACHE: the GitHub job's steps in WS; the cache steps copy the
# state to and from CACHE. Sets JOB_RC (0 or 1), STATUS (convert's output) and
# RAN (the steps run). Each step's output goes to SCEN.STEP.log.
gh_job() {
	local scen=$1 ws=$2 cache=$3 step rc
	JOB_RC=0 RAN=
	: >"$scen.github_output"
	for step in install build restore convert save publish failed; do
		case $step in
		restore)
			[ "$JOB_RC" -eq 0 ] && [ -f "$cache/state" ] && cp -p "$cache/state" "$ws/.lidiagen-state"
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
		(cd "$ws" && GITHUB_OUTPUT=$scen.github_output sh -e "$steps/github.$step.sh") \
			>"$scen.$step.log" 2>&1 </dev/null
		rc=$?
		RAN+=" $step"
		[ "$rc" -eq 0 ] || JOB_RC=1
	done
	STATUS=$(sed -n 's/^status=//p' "$scen.github_output")
}

# gl_job SCEN WS CACHE: the GitLab job: cache restored, the script items in one
# bash (as the runner runs them), the cache saved (when: always). Sets JOB_RC.
gl_job() {
	local scen=$1 ws=$2 cache=$3 s
	[ -f "$cache/state" ] && cp -p "$cache/state" "$ws/.lidiagen-state"
	{
		echo 'set -eo pipefail'
		for s in install build convert publish; do
			cat "$steps/gitlab.$s.sh"
		done
	} >"$scen.script"
	(cd "$ws" && bash "$scen.script") >"$scen.log" 2>&1 </dev/null
	JOB_RC=$?
	[ -f "$ws/.lidiagen-state" ] && cp -p "$ws/.lidiagen-state" "$cache/state"
	STATUS=
}

# job CI SCEN WS CACHE: either job; its whole log in SCEN.all.
job() {
	local ci=$1
	shift
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
bucket_files() { (cd "$1" && find . -type f -printf '%P\n' | sort); }
# stamps DIR: name, inode and mtime (ns) of each file under DIR.
stamps() { (cd "$1" && find . -type f -printf '%P %i %T@\n' | sort); }
uploads() { cat "$FAKE_S3/uploads" 2>/dev/null; }
calls() { cat "$FAKE_S3/calls" 2>/dev/null; }

# ---- the runs ----------------------------------------------------------------------
run_ci() {
	local ci=$1 base=$work/$1 ws cache bucket keys got before out_before detail
	mkdir -p "$base"
	ws=$base/ws cache=$base/cache
	mkdir -p "$cache"
	export FAKE_S3=$base/s3 CI_FAKE_LOG=$base/install.log
	bucket=$FAKE_S3/buckets/test-bucket
	mkdir -p "$bucket"

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
	for p in $want git awscli; do
		case $pkgs in *" $p "*) ;; *) miss+=" $p" ;; esac
	done
	if grep -q '^apt-get update' "$CI_FAKE_LOG" && [ -z "$miss" ]; then
		ok "$ci: install: apt-get installs quickstart.sh's build packages, git and awscli"
	else
		not_ok "$ci: install: apt-get installs quickstart.sh's build packages, git and awscli" \
			"missing:${miss:- (no apt-get update)}" "$(cat "$CI_FAKE_LOG")"
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
	got=$(bucket_files "$bucket")
	if [ "$got" = "$keys" ]; then
		ok "$ci: the bucket holds exactly the Lidia files, at symbolizer/anonymous/<build-id>"
	else
		not_ok "$ci: the bucket holds exactly the Lidia files, at symbolizer/anonymous/<build-id>" \
			"want:" "$keys" "got:" "$got"
	fi
	detail=
	local k main
	for k in $keys; do
		pyroscope_reader "$bucket/$k" >/dev/null 2>&1 || detail+=" $k"
	done
	main=$(nm "$ws/dist/app" | awk '$3 == "main" { print $1 }')
	if [ -z "$detail" ] && [ -n "$main" ] &&
		pyroscope_reader "$bucket/symbolizer/anonymous/$(build_id "$ws/dist/app")" "0x$main" 2>&1 |
		grep -q '| main @ .*app\.c'; then
		ok "$ci: Pyroscope's reader opens each, and finds main in app's"
	else
		not_ok "$ci: Pyroscope's reader opens each, and finds main in app's" "refused:${detail:- none}" \
			"main at 0x$main"
	fi
	if [ -f "$ws/.lidiagen-state" ] && [ -f "$ws/manifest.jsonl" ] &&
		[ "$(bucket_files "$ws/out")" = "$keys" ] && [ -f "$cache/state" ] &&
		[ "$(grep -c '"build_id"' "$ws/manifest.jsonl")" -eq 2 ]; then
		ok "$ci: the state and the manifest are outside out/, which holds only the Lidia files; the state is cached"
	else
		not_ok "$ci: the state and the manifest are outside out/, which holds only the Lidia files; the state is cached" \
			"$(cd "$ws" && find . -path ./dist -prune -o -type f -print)" "cache: $(ls "$cache")"
	fi
	if [ "$(calls)" = "aws s3 sync out/ s3://test-bucket/ --size-only --no-progress" ]; then
		ok "$ci: publish runs aws s3 sync out/ s3://\$LIDIA_BUCKET/ --size-only, once, without --delete"
	else
		not_ok "$ci: publish runs aws s3 sync out/ s3://\$LIDIA_BUCKET/ --size-only, once, without --delete" \
			"$(calls)"
	fi

	# 2. A runner that keeps its workspace: the state comes from the cache, and
	# the inputs are garbled behind unchanged sizes and times, so that reading
	# any of them would show.
	rm -f "$ws/.lidiagen-state" "$FAKE_S3/calls" "$FAKE_S3/uploads"
	before=$(stamps "$bucket")
	out_before=$(stamps "$ws/out")
	cp -p "$ws/dist/app" "$ws/dist/libgreet.so" "$base/"
	for f in "$ws/dist/app" "$ws/dist/libgreet.so"; do
		head -c "$(stat -c %s "$f")" /dev/zero >"$f.new"
		touch -r "$f" "$f.new"
		mv "$f.new" "$f"
	done
	job "$ci" "$base/run2" "$ws" "$cache"
	# Had lidiagen read the garbled inputs, it would have found no build ID in them.
	if [ "$JOB_RC" -eq 0 ] && [ "$(grep -c . "$ws/manifest.jsonl")" -eq 2 ] &&
		[ "$(grep -c '"status":"kept"' "$ws/manifest.jsonl")" -eq 2 ]; then
		ok "$ci: a second run with the cached state reads no input (garbled ones unnoticed: both kept)"
	else
		not_ok "$ci: a second run with the cached state reads no input (garbled ones unnoticed: both kept)" \
			"exit $JOB_RC" "$(grep lidiagen "$base/run2.all")" "$(cat "$ws/manifest.jsonl")"
	fi
	if [ "$(stamps "$ws/out")" = "$out_before" ]; then
		ok "$ci: and rewrites no output (inodes and mtimes unchanged)"
	else
		not_ok "$ci: and rewrites no output (inodes and mtimes unchanged)" "$out_before" "$(stamps "$ws/out")"
	fi
	if [ -z "$(uploads)" ] && [ "$(stamps "$bucket")" = "$before" ] && [ -n "$(calls)" ]; then
		ok "$ci: and uploads nothing"
	else
		not_ok "$ci: and uploads nothing" "$(uploads)" "$(calls)"
	fi
	cp -p "$base/app" "$base/libgreet.so" "$ws/dist/"

	# 3. A fresh runner: a new workspace, the state from the cache.
	rm -f "$FAKE_S3/calls" "$FAKE_S3/uploads"
	new_ws "$ws"
	job "$ci" "$base/run3" "$ws" "$cache"
	detail=
	for k in $keys; do
		cmp -s "$ws/out/$k" "$bucket/$k" || detail+=" $k"
	done
	if [ "$JOB_RC" -eq 0 ] && [ -z "$detail" ] && [ -z "$(uploads)" ] &&
		[ "$(stamps "$bucket")" = "$before" ]; then
		ok "$ci: on a fresh runner, the same files again, and --size-only uploads none"
	else
		not_ok "$ci: on a fresh runner, the same files again, and --size-only uploads none" \
			"exit $JOB_RC; differ from the bucket:${detail:- none}" "uploads: $(uploads)" \
			"$(tail -n 5 "$base/run3.all")"
	fi

	# 4. Exit 1: one input fails, the others are published, the job fails.
	local b1=$FAKE_S3/buckets/test-bucket
	rm -rf "$FAKE_S3" "$cache"/*
	mkdir -p "$b1"
	new_ws "$ws"
	mkdir -p "$ws/dist"
	head -c 3000 "$base/app" >"$ws/dist/broken"
	job "$ci" "$base/run4" "$ws" "$cache"
	got=$(bucket_files "$b1")
	local want_rc="job exits 1"
	[ "$ci" = github ] && want_rc="convert sets status=1, the failed-inputs step fails the job"
	if [ "$JOB_RC" -eq 1 ] && [ "$got" = "$keys" ] && grep -q 'dist/broken' "$base/run4.all" &&
		{ [ "$ci" = gitlab ] || { [ "$STATUS" = 1 ] && [ "$RAN" = " install build convert publish failed" ]; }; }; then
		ok "$ci: exit 1 (a truncated ELF in dist/): the others are published, then $want_rc"
	else
		not_ok "$ci: exit 1 (a truncated ELF in dist/): the others are published, then $want_rc" \
			"job exit $JOB_RC, status '$STATUS', steps run:${RAN:-}" "bucket:" "$got" \
			"$(tail -n 8 "$base/run4.all")"
	fi

	# 5. Exit 2: the manifest's path is a directory; nothing is published.
	rm -rf "$FAKE_S3"
	mkdir -p "$b1"
	new_ws "$ws"
	mkdir "$ws/manifest.jsonl"
	RAN=
	job "$ci" "$base/run5" "$ws" "$cache"
	if [ "$JOB_RC" -ne 0 ] && [ -z "$(calls)" ] && grep -q "manifest.jsonl' is not a regular file" "$base/run5.all" &&
		{ [ "$ci" = gitlab ] && [ "$JOB_RC" -eq 2 ] ||
			{ [ "$STATUS" = 2 ] && [ "$RAN" = " install build convert" ]; }; }; then
		ok "$ci: exit 2 (manifest.jsonl is a directory): the job fails before publishing"
	else
		not_ok "$ci: exit 2 (manifest.jsonl is a directory): the job fails before publishing" \
			"job exit $JOB_RC, status '$STATUS', steps run:${RAN:-}" "calls: $(calls)" \
			"$(tail -n 5 "$base/run5.all")"
	fi
}

run_ci github
run_ci gitlab

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
	"$BUILD/liblidia.a" $(pkg-config --libs libelf libdw libzstd liblzma zlib) -lpthread -ldl -lstdc++
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
