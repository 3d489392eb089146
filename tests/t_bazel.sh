#!/usr/bin/env bash
# lidiagen's Bazel plugin (plugins/bazel) with Debian's Bazel 4 and no network:
# `make install` (with the install-bazel fragment) into a staging DESTDIR, then
# the example workspace tests/fixtures/bazel, which loads the installed plugin
# with local_repository and shadows the three repositories Bazel 4 would fetch.
# Checked: the lidia_symbols rule (one action per input, merged into one tree in
# the object-store layout, each file accepted by Pyroscope's reader logic); the
# unstripped binary behind cc_binary's .stripped output; file names relative
# to the workspace (the default prefix_map maps /proc/self/cwd/ away; a rule's
# own prefix_map replaces it); the .dwo files of --fission builds; lidia_aspect over //... with --output_groups=lidia; a second
# build runs nothing, and after `bazel clean` every action is a cache hit; a
# vendored copy of the plugin without a tool says so (naming its own flag), and
# takes one by label, beside the installed one with no action conflict. Also:
# the actions are silent on success, but for one warning per binary without
# debug information; lidiagen comes from a toolchain (the default one or a
# registered lidia_toolchain); lidia_collect merges the aspect's trees into one
# tree of keys, as lidiagen upload takes. (MODULE.bazel is installed, not tried: Bazel 4
# has no bzlmod.)
set -u
. "$(dirname "$0")/lib/common.sh"
top=$(cd "$TESTS_DIR/.." && pwd)

need_tool bazel bazel || exit 0

work=$(scratch bazel)
stage=$work/stage
plugin=$stage/usr/share/lidiagen/bazel

# ---- install ------------------------------------------------------------------
mk=(-f Makefile)
grep -q 'plugins/bazel/install.mk' "$top/Makefile" || mk+=(-f plugins/bazel/install.mk)
run "$work/install" make -C "$top" "${mk[@]}" -s install install-bazel PREFIX=/usr DESTDIR="$stage"
if [ "$RC" -eq 0 ] && [ -f "$plugin/defs.bzl" ] && [ -f "$plugin/WORKSPACE" ] && [ -f "$plugin/MODULE.bazel" ] &&
	[ -f "$plugin/offline/rules_cc/cc/defs.bzl" ] && [ -f "$plugin/offline/remote_coverage_tools/BUILD" ] &&
	[ "$(readlink "$plugin/lidiagen")" = ../../../bin/lidiagen ] && [ -x "$plugin/lidiagen" ]; then
	ok "make install install-bazel: share/lidiagen/bazel (MODULE.bazel, offline/ stand-ins), its lidiagen linked to bin/lidiagen"
else
	not_ok "make install install-bazel: share/lidiagen/bazel (MODULE.bazel, offline/ stand-ins), its lidiagen linked to bin/lidiagen" \
		"exit $RC" "$(first_lines 20 "$work/install.err")" "$(ls -la "$plugin" 2>&1)"
	exit 0
fi
unset MAKEFLAGS MFLAGS MAKELEVEL USE_BAZEL_VERSION

ws=$work/ws
root=$work/root
dc=$work/disk-cache
cp -R "$FIXTURES_SRC/bazel" "$ws"
sed -e "s|@LIDIAGEN_BAZEL@|$plugin|" -e "s|@LIDIAGEN_VENDORED@|$top/plugins/bazel|" \
	"$ws/WORKSPACE.in" >"$ws/WORKSPACE"
ln -s "$(readlink -f "$LIDIAGEN")" "$ws/tools/lidiagen"

# bz NAME ARGS...: one bazel command in the workspace (output in $work/NAME.*).
# Debian's /etc/bazel/bazelrc is needed (its install base); ~/.bazelrc is not read.
bz() {
	local name=$1
	shift
	run "$work/$name" bash -c 'cd "$1" && shift && exec bazel --output_user_root="$0" --nohome_rc \
		--max_idle_secs=300 "$@"' "$root" "$ws" "$@"
}
# processes NAME: Bazel's "INFO: N processes: ..." summary of that command.
processes() { grep -E '^INFO: [0-9]+ process(es)?[:.]' "$work/$1.err" | tail -n 1; }
# ran_nothing NAME: every process of that build was internal or a cache hit.
ran_nothing() {
	local line
	line=$(processes "$1")
	[ -n "$line" ] && ! grep -qE 'sandbox|local|worker|remote[,.]' <<<"$line"
}
bazel_fail() { # WHAT NAME
	not_ok "$1" "exit $RC" "$(grep -E 'ERROR|rror:|lidiagen' "$work/$2.err" | head -n 15)"
}
# At the end: the server stopped, its output base gone, the rest writable.
done_bazel() {
	bz expunge clean --expunge
	chmod -R u+w "$work" 2>/dev/null
}
trap done_bazel EXIT

bin=$ws/bazel-bin
app_id= lib_id=

# ---- the rule -------------------------------------------------------------------
targets=(//:symbols //:stripped //:release_symbols //:absolute //:as_compiled)
bz build build "${targets[@]}" --disk_cache="$dc"
if [ "$RC" -ne 0 ]; then
	bazel_fail "bazel build //:symbols //:stripped //:release_symbols (offline, Bazel 4)" build
	exit 0
fi
ok "bazel build //:symbols //:stripped //:release_symbols (offline, Bazel 4)"
# summaries FILE: lidiagen's summary lines in a build's output.
summaries() { grep -E '^lidiagen: [0-9]+ files?, ' "$@"; }
if [ -z "$(summaries "$work/build.err" "$work/build.out")" ] && grep -q 'LidiaSymbols\|Writing Lidia' "$work/build.err"; then
	ok "the LidiaSymbols actions are silent on success (no summary line)"
else
	not_ok "the LidiaSymbols actions are silent on success (no summary line)" "$(summaries "$work/build.err" | head -5)"
fi
app_id=$(build_id "$bin/app")
lib_id=$(build_id "$bin/libshapes.so")
want=$(printf '%s\n' "$bin/symbols/symbolizer/team-a/$app_id" "$bin/symbols/symbolizer/team-a/$lib_id" | sort)
got=$(find -L "$bin/symbols" -type f | sort)
if [ -n "$app_id" ] && [ -n "$lib_id" ] && [ "$got" = "$want" ]; then
	ok "lidia_symbols: one tree, symbolizer/team-a/<build-id> of app and libshapes.so"
else
	not_ok "lidia_symbols: one tree, symbolizer/team-a/<build-id> of app and libshapes.so" \
		"expected:" "$want" "got:" "$got"
fi
bad=
for f in $got $(find -L "$bin/stripped" "$bin/release_symbols" "$bin/absolute" "$bin/as_compiled" -type f); do
	pyroscope_reader "$f" >"$work/lookup.out" 2>&1 || bad+="$f: $(cat "$work/lookup.out")"$'\n'
done
if [ -z "$bad" ] && [ -n "$got" ]; then
	ok "lidia_symbols: every file is accepted by Pyroscope's reader logic"
else
	not_ok "lidia_symbols: every file is accepted by Pyroscope's reader logic" "$bad"
fi

# greet_count, linked into app from the cc_library, with its source file.
lookup_greet() { # LIDIA-FILE: the Pyroscope lookup of app's greet_count
	local addr
	addr=$("$PYTHON" "$TESTS_LIB/elfsyms.py" funcs "$bin/app" | awk '$NF == "greet_count" { print $1; exit }')
	pyroscope_reader "$1" "${addr:-0}" 2>&1
}
out=$(lookup_greet "$bin/symbols/symbolizer/team-a/$app_id")
if grep -q '| greet_count @ greet\.c\( |\|$\)' <<<"$out" &&
	! grep -qF /proc/self/cwd "$bin/symbols/symbolizer/team-a/$app_id"; then
	ok "lidia_symbols: app's file names greet_count @ greet.c, relative to the workspace (no /proc/self/cwd/ in it)"
else
	not_ok "lidia_symbols: app's file names greet_count @ greet.c, relative to the workspace" "$out" \
		"$(grep -c /proc/self/cwd "$bin/symbols/symbolizer/team-a/$app_id") mentions of /proc/self/cwd"
fi
out_abs=$(lookup_greet "$bin/absolute/$app_id.lidia")
out_raw=$(lookup_greet "$bin/as_compiled/$app_id.lidia")
if grep -q '| greet_count @ /ws/greet\.c\( |\|$\)' <<<"$out_abs" &&
	grep -q '| greet_count @ /proc/self/cwd/greet\.c\( |\|$\)' <<<"$out_raw"; then
	ok "lidia_symbols(prefix_map = [...]): the rule's list replaces the default (/ws/greet.c; as compiled: /proc/self/cwd/greet.c)"
else
	not_ok "lidia_symbols(prefix_map = [...]): the rule's list replaces the default" "$out_abs" "$out_raw"
fi

bz aquery aquery 'mnemonic(LidiaSymbols, //:symbols)'
n=$(grep -c 'Mnemonic: LidiaSymbols' "$work/aquery.out")
if [ "$RC" -eq 0 ] && [ "$n" -eq 2 ]; then
	ok "lidia_symbols: one LidiaSymbols action per input (2 for 2 binaries)"
else
	not_ok "lidia_symbols: one LidiaSymbols action per input (2 for 2 binaries)" "exit $RC, $n actions" \
		"$(head -n 20 "$work/aquery.err")"
fi

# :app.stripped alone has no DWARF; the rule converts it with :app behind it.
rows() { "$LIDIAGEN" info "$1" 2>/dev/null | sed -n 's/.* \([0-9][0-9]*\) line rows.*/\1/p'; }
stripped=$(find -L "$bin/stripped" -type f)
release=$(find -L "$bin/release_symbols" -type f)
rows_s=$(rows "$stripped")
if [ "$stripped" = "$bin/stripped/$app_id.lidia" ] && [ "$release" = "$bin/release_symbols/$app_id.lidia" ] &&
	[ "$(rows "$release")" = 0 ] && [ "${rows_s:-0}" -gt 0 ]; then
	ok "lidia_symbols(:app.stripped): app's key, with the line rows of the unstripped :app ($rows_s; the stripped copy alone: 0)"
else
	not_ok "lidia_symbols(:app.stripped): app's key, with the line rows of the unstripped :app" \
		"stripped: $stripped ($(rows "$stripped") rows)" "release: $release ($(rows "$release") rows)" \
		"app's build ID: $app_id"
fi

# ---- no debug information: one warning, per target, once ---------------------------
# (the fixture's .bazelrc builds -c opt: //:libnodebug.so has no copts = ["-g"];
# in the first build, //:release, app with its debug information stripped, had one)
nodebug_warning='lidiagen: warning: //:libnodebug.so has no debug information: its symbol file has function names only'
warned() { grep -c 'has no debug information' "$work/$1.err"; }
bz nodebug build //:nodebug_symbols --disk_cache="$dc"
bz nodebug2 build //:nodebug_symbols --disk_cache="$dc"
if [ "$RC" -eq 0 ] && [ "$(grep -cF "$nodebug_warning" "$work/nodebug.err")" = 1 ] && [ "$(warned nodebug)" = 1 ] &&
	[ "$(warned nodebug2)" = 0 ] && [ "$(warned build)" = 1 ] &&
	grep -q '^lidiagen: warning: //:release has no debug information' "$work/build.err"; then
	ok "a binary without debug information: one warning naming it, not again on a rebuild; none for -g targets (//:app)"
else
	not_ok "a binary without debug information: one warning naming it, not again on a rebuild; none for -g targets (//:app)" \
		"exit $RC" "$(grep -B1 'has no debug' "$work/nodebug.err" "$work/nodebug2.err" "$work/build.err")"
fi

# ---- the toolchain -----------------------------------------------------------------
# The default toolchain runs --@lidiagen//:tool (here a stub that fails); a
# registered toolchain of the project's own comes first.
bz notool build //:symbols --@lidiagen//:tool=@lidiagen_vendored//:no_lidiagen
bz owntc build //:symbols --@lidiagen//:tool=@lidiagen_vendored//:no_lidiagen --extra_toolchains=//tools:own_toolchain
if [ "$RC" -eq 0 ] && grep -q 'no lidiagen beside it' "$work/notool.err" &&
	[ "$(find -L "$bin/symbols" -type f | sort)" = "$want" ]; then
	ok "lidiagen comes from the toolchain type @lidiagen//:toolchain_type: the default runs --@lidiagen//:tool, a registered lidia_toolchain comes first"
else
	not_ok "lidiagen comes from the toolchain type @lidiagen//:toolchain_type: the default runs --@lidiagen//:tool, a registered lidia_toolchain comes first" \
		"exit $RC" "$(grep -E 'ERROR|lidiagen' "$work/notool.err" "$work/owntc.err" | head -n 10)"
fi

# ---- lidia_collect: the aspect's trees, one tree ------------------------------------
bz collect build //:collected --disk_cache="$dc"
want_c=$(printf '%s\n' "$bin/collected/symbolizer/anonymous/$app_id" "$bin/collected/symbolizer/anonymous/$lib_id" | sort)
got_c=$(find -L "$bin/collected" -type f 2>/dev/null | sort)
if [ "$RC" -eq 0 ] && [ "$got_c" = "$want_c" ] && cmp -s "$bin/collected/symbolizer/anonymous/$app_id" "$bin/app.lidia/symbolizer/anonymous/$app_id"; then
	ok "lidia_collect(targets = [a filegroup]): one tree of both binaries' files, the aspect's own"
else
	not_ok "lidia_collect(targets = [a filegroup]): one tree of both binaries' files, the aspect's own" "exit $RC" \
		"expected:" "$want_c" "got:" "$got_c" "$(grep ERROR "$work/collect.err" | head -5)"
fi
run "$work/verify" "$LIDIAGEN" verify "$bin/collected"
if [ "$RC" -eq 0 ] && [ -n "$got_c" ]; then
	ok "lidiagen verify takes lidia_collect's tree as lidiagen upload does (a directory of keys)"
else
	not_ok "lidiagen verify takes lidia_collect's tree as lidiagen upload does (a directory of keys)" "exit $RC" \
		"$(first_lines 5 "$work/verify.err")"
fi

# ---- caching ---------------------------------------------------------------------
bz again build "${targets[@]}" --disk_cache="$dc"
if [ "$RC" -eq 0 ] && ran_nothing again; then
	ok "a second build runs nothing: $(processes again)"
else
	not_ok "a second build runs nothing" "exit $RC" "$(processes again)"
fi
bz clean clean
bz cached build "${targets[@]}" --disk_cache="$dc"
if [ "$RC" -eq 0 ] && ran_nothing cached && grep -q 'cache hit' <<<"$(processes cached)" &&
	[ "$(find -L "$bin/symbols" -type f | sort)" = "$want" ]; then
	ok "after bazel clean, every action is a cache hit: $(processes cached)"
else
	not_ok "after bazel clean, every action is a cache hit" "exit $RC" "$(processes cached)"
fi

# ---- --fission: the .dwo files --------------------------------------------------
bz fission build //:symbols //:dwp --fission=yes --features=per_object_debug_info --disk_cache="$dc"
fapp_id=$(build_id "$bin/app")
out=$(lookup_greet "$bin/symbols/symbolizer/team-a/$fapp_id")
if [ "$RC" -eq 0 ] && [ -f "$bin/_objs/greet/greet.dwo" ] && grep -q '| greet_count @ .*greet\.c' <<<"$out" &&
	[ "$(rows "$bin/symbols/symbolizer/team-a/$fapp_id")" -gt 0 ] 2>/dev/null; then
	ok "--fission: the .dwo files (the library's too) are inputs; greet_count @ greet.c, line rows"
else
	not_ok "--fission: the .dwo files (the library's too) are inputs; greet_count @ greet.c, line rows" \
		"exit $RC" "$out" "$(ls "$bin/_objs/greet" 2>&1)" "$(grep ERROR "$work/fission.err" | head -5)"
fi
got=$(find -L "$bin/dwp" -type f)
if [ "$RC" -eq 0 ] && [ "$got" = "$bin/dwp/$fapp_id.lidia" ] && [ "$(rows "$got")" -gt 0 ] 2>/dev/null &&
	pyroscope_reader "$got" >/dev/null 2>&1; then
	ok "lidia_symbols(:app.dwp): app's key, converted from :app with its split debug info"
else
	not_ok "lidia_symbols(:app.dwp): app's key, converted from :app with its split debug info" \
		"got: $got" "app's build ID: $fapp_id"
fi

# ---- the aspect ------------------------------------------------------------------
aspect=(--aspects=@lidiagen//:defs.bzl%lidia_aspect --output_groups=lidia --@lidiagen//:tenant=aspect-t
	--@lidiagen//:options=--no-inlines
	--disk_cache="$dc" -- //... -//vendored:default_tool)
bz aspect build "${aspect[@]}"
want_a=$(printf '%s\n' "$bin/app.lidia/symbolizer/aspect-t/$app_id" \
	"$bin/libshapes.so.lidia/symbolizer/aspect-t/$lib_id" \
	"$bin/libnodebug.so.lidia/symbolizer/aspect-t/$(build_id "$bin/libnodebug.so")" | sort)
got_a=$(find -L "$bin" -path '*.lidia/*' -type f | sort)
if [ "$RC" -eq 0 ] && [ "$got_a" = "$want_a" ]; then
	ok "bazel build --aspects=...lidia_aspect --output_groups=lidia //... (a vendored copy's rule too): a tree per cc_binary, no conflict"
elif [ "$RC" -ne 0 ]; then
	bazel_fail "bazel build --aspects=...lidia_aspect --output_groups=lidia //...: a tree per cc_binary" aspect
else
	not_ok "bazel build --aspects=...lidia_aspect --output_groups=lidia //...: a tree per cc_binary" \
		"expected:" "$want_a" "got:" "$got_a"
fi
bad=
for f in $got_a; do
	pyroscope_reader "$f" >"$work/lookup.out" 2>&1 || bad+="$f: $(cat "$work/lookup.out")"$'\n'
done
if [ -z "$bad" ] && [ -n "$got_a" ]; then
	ok "lidia_aspect: every file is accepted by Pyroscope's reader logic"
else
	not_ok "lidia_aspect: every file is accepted by Pyroscope's reader logic" "$bad"
fi
if [ -n "$got_a" ] && ! grep -qlF /proc/self/cwd $got_a; then
	ok "lidia_aspect: file names relative to the workspace (--@lidiagen//:prefix_map's default)"
else
	not_ok "lidia_aspect: file names relative to the workspace" "$(grep -lF /proc/self/cwd $got_a)"
fi
inl=$("$LIDIAGEN" info "$bin/app.lidia/symbolizer/aspect-t/$app_id" 2>&1 | grep -o '[0-9]* inline ranges')
if [ "$inl" = "0 inline ranges" ] && [ "$(rows "$bin/app.lidia/symbolizer/aspect-t/$app_id")" -gt 0 ] 2>/dev/null; then
	ok "lidia_aspect: --@lidiagen//:options=--no-inlines reaches lidiagen (0 inline ranges, line rows kept)"
else
	not_ok "lidia_aspect: --@lidiagen//:options=--no-inlines reaches lidiagen" "$inl"
fi
bz clean2 clean
bz aspect2 build "${aspect[@]}"
if [ "$RC" -eq 0 ] && ran_nothing aspect2 && [ "$(find -L "$bin" -path '*.lidia/*' -type f | sort)" = "$want_a" ]; then
	ok "lidia_aspect: after bazel clean, every action is a cache hit: $(processes aspect2)"
else
	not_ok "lidia_aspect: after bazel clean, every action is a cache hit" "exit $RC" "$(processes aspect2)"
fi

# ---- a vendored plugin: the tool by label -----------------------------------------
bz vendored_default build //vendored:default_tool
if [ "$RC" -ne 0 ] && grep -q 'no lidiagen beside it.*--@lidiagen_vendored//:tool=<label>' "$work/vendored_default.err"; then
	ok "a plugin copy without lidiagen fails, naming its own flag --@lidiagen_vendored//:tool"
else
	not_ok "a plugin copy without lidiagen fails, naming its own flag --@lidiagen_vendored//:tool" "exit $RC" \
		"$(grep -E 'ERROR|lidiagen' "$work/vendored_default.err" | head -n 10)"
fi
bz vendored_own build //vendored:own_tool
bz vendored_flag build //vendored:default_tool --@lidiagen_vendored//:tool=//tools:lidiagen
if [ "$RC" -eq 0 ] && [ -f "$bin/vendored/default_tool/symbolizer/anonymous/$lib_id" ] &&
	[ -f "$bin/vendored/own_tool/symbolizer/anonymous/$lib_id" ]; then
	ok "the tool from tool = //tools:lidiagen, or --@lidiagen_vendored//:tool=//tools:lidiagen"
else
	not_ok "the tool from tool = //tools:lidiagen, or --@lidiagen_vendored//:tool=//tools:lidiagen" "exit $RC" \
		"$(grep -E 'ERROR' "$work/vendored_own.err" "$work/vendored_flag.err" | head -n 10)"
fi

# ---- uninstall ------------------------------------------------------------------
run "$work/uninstall" make -C "$top" "${mk[@]}" -s uninstall-bazel PREFIX=/usr DESTDIR="$stage"
if [ "$RC" -eq 0 ] && [ ! -e "$plugin" ]; then
	ok "make uninstall-bazel removes the plugin"
else
	not_ok "make uninstall-bazel removes the plugin" "exit $RC" "$(ls -la "$plugin" 2>&1)"
fi
