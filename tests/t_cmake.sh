#!/usr/bin/env bash
# lidiagen's CMake package (plugins/cmake) as a project uses it: `make install`
# (with the install-cmake fragment) into a staging DESTDIR, then the example
# project tests/fixtures/cmake (app.cpp linking libgreet.so from a
# subdirectory, and a C program without a build ID) found through
# CMAKE_PREFIX_PATH, configured and built with the Unix Makefiles, Ninja and
# Ninja Multi-Config generators. Checked each time: exactly the expected keys
# under the output directory, each file accepted by Pyroscope's reader logic; a
# no-op rebuild runs nothing and rewrites nothing; touching one source rewrites
# only that target's file; a relink that changes the build ID replaces the old
# key; clean removes the outputs; the file names as PREFIX_MAP (or
# -DLIDIAGEN_PREFIX_MAP) maps them, or as compiled; "Found lidiagen" with its
# version; a warning per target built without -g (Release). Then the install
# helper; an EXCLUDE_FROM_ALL target; a target taken out of the call; the Ninja
# job pool; an OUTPUT_DIR holding other files (refused), relative or absolute
# (built and installed); README's optional find_package with LIDIAGEN_ENABLE=OFF
# on a machine without lidiagen; COMPONENTS and lidiagen::lidia; the errors of a
# package without its command or with one that is not lidiagen.
set -u
. "$(dirname "$0")/lib/common.sh"
top=$(cd "$TESTS_DIR/.." && pwd)

need_tool cmake cmake || exit 0
need_tool ninja ninja || exit 0

work=$(scratch cmake)
stage=$work/stage
prefix=$stage/usr

# ---- install ------------------------------------------------------------------
# Until the top Makefile includes the fragment, name it with -f.
mk=(-f Makefile)
grep -q 'plugins/cmake/install.mk' "$top/Makefile" || mk+=(-f plugins/cmake/install.mk)
run "$work/install" make -C "$top" "${mk[@]}" -s install install-cmake PREFIX=/usr DESTDIR="$stage"
if [ "$RC" -eq 0 ] && [ -f "$prefix/lib/cmake/lidiagen/lidiagenConfig.cmake" ] &&
	[ -f "$prefix/lib/cmake/lidiagen/lidiagenConfigVersion.cmake" ] && [ -x "$prefix/bin/lidiagen" ]; then
	ok "make install install-cmake PREFIX=/usr DESTDIR=...: lib/cmake/lidiagen/lidiagenConfig.cmake"
else
	not_ok "make install install-cmake PREFIX=/usr DESTDIR=...: lib/cmake/lidiagen/lidiagenConfig.cmake" \
		"exit $RC" "$(first_lines 20 "$work/install.err")" "$(find "$stage" -path '*cmake*' 2>&1)"
	exit 0
fi

# Builds below must not inherit the flags of a `make test` around this script.
unset MAKEFLAGS MFLAGS MAKELEVEL
export CMAKE_BUILD_PARALLEL_LEVEL=2

# flat FILE: CMake's message, with its line wrapping undone.
flat() { tr '\n' ' ' <"$1" | tr -s ' '; }

# snapshot FILE...: name, inode and mtime (ns) of each file; a rewrite (new
# file renamed into place) changes the inode.
snapshot() { stat -c '%n %i %y' "$@" 2>/dev/null; }

# lidia_files DIR: every file under DIR (no state or temporary file may stay), sorted.
lidia_files() { find "$1" -type f 2>/dev/null | sort; }

# key_path OUT LAYOUT TENANT FILE: where FILE's symbols go.
key_path() {
	local id
	id=$(build_id "$4")
	case $2 in
	flat) printf '%s/%s.lidia\n' "$1" "$id" ;;
	*) printf '%s/symbolizer/%s/%s\n' "$1" "$3" "$id" ;;
	esac
}

# exercise NAME GENERATOR LAYOUT TENANT OUT CONFIG [CMAKE-ARGS...]; with
# EX_GREET_ARGS, the fixture's lidiagen_add_symbols(greet) gets those arguments;
# EX_GREET_FILE is the file the lookup of greet_count must name.
EX_GREET_ARGS= EX_GREET_FILE=
exercise() {
	local name=$1 gen=$2 layout=$3 tenant=$4 out=$5 config=$6
	shift 6
	local src=$work/$name-src b=$work/$name-build bin=$work/$name-build
	local build=(cmake --build "$b")
	rm -rf "$src" "$b"
	cp -R "$FIXTURES_SRC/cmake" "$src"
	if [ -n "$EX_GREET_ARGS" ]; then
		sed -i "s|^lidiagen_add_symbols(greet)|lidiagen_add_symbols(greet $EX_GREET_ARGS)|" \
			"$src/greet/CMakeLists.txt"
	fi
	if [ -n "$config" ]; then
		build+=(--config "$config")
		bin=$b/$config
	fi

	run "$work/$name.configure" cmake -S "$src" -B "$b" -G "$gen" -DCMAKE_PREFIX_PATH="$prefix" \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
	if [ "$RC" -ne 0 ]; then
		not_ok "$name: configure against the installed package" "$(tail -n 20 "$work/$name.configure.err")"
		return
	fi
	local exe
	exe=$(sed -n 's/^LIDIAGEN_EXECUTABLE:FILEPATH=//p' "$b/CMakeCache.txt")
	if [ "$exe" = "$prefix/bin/lidiagen" ]; then
		ok "$name: find_package(lidiagen CONFIG REQUIRED) finds the installed lidiagen"
	else
		not_ok "$name: find_package(lidiagen CONFIG REQUIRED) finds the installed lidiagen" \
			"LIDIAGEN_EXECUTABLE=$exe, expected $prefix/bin/lidiagen"
	fi

	local version
	version=$("$prefix/bin/lidiagen" --version | sed -n '1s/^lidiagen \([^ ]*\).*/\1/p')
	if grep -qF -- "-- Found lidiagen: $prefix/bin/lidiagen (found version \"$version\")" "$work/$name.configure.out"; then
		ok "$name: configure says Found lidiagen: PATH (found version \"$version\")"
	else
		not_ok "$name: configure says Found lidiagen: PATH (found version \"$version\")" \
			"$(grep -i lidiagen "$work/$name.configure.out")"
	fi

	run "$work/$name.build" "${build[@]}"
	if [ "$RC" -ne 0 ]; then
		not_ok "$name: build" "$(tail -n 20 "$work/$name.build.out")" "$(tail -n 20 "$work/$name.build.err")"
		return
	fi
	local app=$bin/app lib=$bin/greet/libgreet.so.1.2.3
	[ -n "$config" ] && lib=$b/greet/$config/libgreet.so.1.2.3
	local app_key lib_key expected got
	app_key=$(key_path "$out" "$layout" "$tenant" "$app")
	lib_key=$(key_path "$out" "$layout" "$tenant" "$lib")
	expected=$(printf '%s\n' "$app_key" "$lib_key" | sort)
	got=$(lidia_files "$out")
	if [ "$got" = "$expected" ]; then
		ok "$name: the build writes the keys of app and libgreet.so (layout $layout, tenant $tenant)"
	else
		not_ok "$name: the build writes the keys of app and libgreet.so (layout $layout, tenant $tenant)" \
			"expected:" "$expected" "got:" "$got" "$(tail -n 10 "$work/$name.build.out")"
		return
	fi
	if grep -q 'nobid: no GNU build ID, skipped' "$work/$name.build.out" "$work/$name.build.err"; then
		ok "$name: a target without a build ID is skipped with a warning, the build goes on"
	else
		not_ok "$name: a target without a build ID is skipped with a warning, the build goes on" \
			"$(grep -i nobid "$work/$name.build.out" "$work/$name.build.err")"
	fi
	# Release has no -g: one warning per target; RelWithDebInfo has none.
	local warned
	warned=$(cat "$work/$name.build.out" "$work/$name.build.err" | grep 'has no debug information' | sort)
	if [ "$config" = Release ]; then
		if [ "$(grep -c . <<<"$warned")" = 2 ] && grep -q '^lidiagen: warning: app has no debug information in this configuration (Release)' <<<"$warned" &&
			grep -q '^lidiagen: warning: greet has no debug' <<<"$warned"; then
			ok "$name: Release: one warning per target without debug information (app, greet)"
		else
			not_ok "$name: Release: one warning per target without debug information (app, greet)" "$warned"
		fi
	elif [ -n "$warned" ]; then
		not_ok "$name: RelWithDebInfo: no warning of missing debug information" "$warned"
	else
		ok "$name: RelWithDebInfo: no warning of missing debug information"
	fi
	local f bad=""
	for f in $got; do
		pyroscope_reader "$f" >"$work/$name.lookup" 2>&1 || bad+="$f: $(cat "$work/$name.lookup")"$'\n'
	done
	if [ -z "$bad" ]; then
		ok "$name: every file is accepted by Pyroscope's reader logic"
	else
		not_ok "$name: every file is accepted by Pyroscope's reader logic" "$bad"
	fi
	local addr
	addr=$("$PYTHON" "$TESTS_LIB/elfsyms.py" funcs "$lib" 2>/dev/null | awk '$NF == "greet_count" { print $1; exit }')
	if [ -n "$addr" ] && pyroscope_reader "$lib_key" "$addr" 2>&1 | grep -qF "| greet_count @ $EX_GREET_FILE"; then
		ok "$name: libgreet.so's file names greet_count at its address${EX_GREET_FILE:+, in $EX_GREET_FILE}"
	else
		not_ok "$name: libgreet.so's file names greet_count at its address${EX_GREET_FILE:+, in $EX_GREET_FILE}" \
			"address '$addr'" "$(pyroscope_reader "$lib_key" ${addr:+"$addr"} 2>&1 | head -5)"
	fi

	# A no-op rebuild runs nothing and rewrites nothing.
	local before after
	before=$(snapshot "$app_key" "$lib_key")
	run "$work/$name.noop" "${build[@]}"
	after=$(snapshot "$app_key" "$lib_key")
	if [ "$RC" -eq 0 ] && ! grep -q 'Lidia symbols of' "$work/$name.noop.out" && [ "$before" = "$after" ]; then
		ok "$name: a no-op rebuild runs no lidiagen step and rewrites no file"
	else
		not_ok "$name: a no-op rebuild runs no lidiagen step and rewrites no file" \
			"exit $RC" "$(grep 'Lidia symbols of' "$work/$name.noop.out")" "before:" "$before" "after:" "$after"
	fi
	if [ "$gen" != "Unix Makefiles" ]; then
		run "$work/$name.dry" "${build[@]}" -- -n
		if grep -q 'no work to do' "$work/$name.dry.out"; then
			ok "$name: ninja -n: no work to do"
		else
			not_ok "$name: ninja -n: no work to do" "$(head -n 10 "$work/$name.dry.out")"
		fi
	fi

	# Touch the executable's source: app relinks (to the same bytes, so its
	# file, the same bytes too, is not rewritten), libgreet does not.
	sleep 0.01
	touch "$src/main.cpp"
	run "$work/$name.touch" "${build[@]}"
	local app_after lib_after
	app_after=$(snapshot "$app_key")
	lib_after=$(snapshot "$lib_key")
	if [ "$RC" -eq 0 ] && grep -q 'Lidia symbols of app' "$work/$name.touch.out" &&
		! grep -q 'Lidia symbols of greet' "$work/$name.touch.out" &&
		[ "$app_after" = "$(grep "^$app_key " <<<"$before")" ] &&
		[ "$lib_after" = "$(grep "^$lib_key " <<<"$before")" ]; then
		ok "$name: touching main.cpp runs app's step only, which rewrites nothing (the same bytes)"
	else
		not_ok "$name: touching main.cpp runs app's step only, which rewrites nothing (the same bytes)" "exit $RC" \
			"$(grep -E 'Lidia|Linking' "$work/$name.touch.out")" "before:" "$before" "after:" "$app_after" "$lib_after"
	fi

	# Change app's code and build app alone (--target app): its link brings
	# its step, so the new build ID's file replaces the old one at once.
	printf 'extern "C" int app_extra(int x)\n{\n\treturn x + 7;\n}\n' >>"$src/main.cpp"
	run "$work/$name.apponly" "${build[@]}" --target app
	local new_app_key
	new_app_key=$(key_path "$out" "$layout" "$tenant" "$app")
	if [ "$RC" -eq 0 ] && [ "$new_app_key" != "$app_key" ] && [ -f "$new_app_key" ] &&
		[ ! -e "$app_key" ] && [ -f "$lib_key" ]; then
		ok "$name: --target app after an edit: app's file under its new build ID, the old one gone"
	else
		not_ok "$name: --target app after an edit: app's file under its new build ID, the old one gone" \
			"exit $RC" "old $app_key: $([ -e "$app_key" ] && echo there || echo gone)" \
			"new $new_app_key: $([ -f "$new_app_key" ] && echo there || echo missing)" \
			"$(grep -E 'Lidia|Linking|rror' "$work/$name.apponly.out" | head -5)"
	fi
	app_key=$new_app_key

	# Change the library's code: a new build ID replaces the old key.
	printf 'int greet_extra(int x)\n{\n\treturn x * 3;\n}\n' >>"$src/greet/greet.c"
	run "$work/$name.change" "${build[@]}"
	local new_lib_key
	new_lib_key=$(key_path "$out" "$layout" "$tenant" "$lib")
	app_key=$(key_path "$out" "$layout" "$tenant" "$app")
	expected=$(printf '%s\n' "$app_key" "$new_lib_key" | sort)
	got=$(lidia_files "$out")
	if [ "$RC" -eq 0 ] && [ "$new_lib_key" != "$lib_key" ] && [ "$got" = "$expected" ]; then
		ok "$name: a relink with a new build ID writes the new key and removes the old one"
	else
		not_ok "$name: a relink with a new build ID writes the new key and removes the old one" \
			"exit $RC; old $lib_key, new $new_lib_key" "expected:" "$expected" "got:" "$got"
	fi

	# clean removes an output directory inside the build tree, and leaves
	# one outside it alone; lidia_symbols makes the files again.
	run "$work/$name.clean" "${build[@]}" --target clean
	got=$(lidia_files "$out")
	case $out in
	"$b"/*)
		if [ "$RC" -eq 0 ] && [ -z "$got" ]; then
			ok "$name: clean removes the symbol files of an output directory in the build tree"
		else
			not_ok "$name: clean removes the symbol files of an output directory in the build tree" \
				"exit $RC" "left:" "$got"
		fi
		;;
	*)
		if [ "$RC" -eq 0 ] && [ "$got" = "$expected" ]; then
			ok "$name: clean leaves an output directory outside the build tree alone"
		else
			not_ok "$name: clean leaves an output directory outside the build tree alone" \
				"exit $RC" "expected:" "$expected" "got:" "$got"
		fi
		;;
	esac
	run "$work/$name.again" "${build[@]}" --target lidia_symbols
	got=$(lidia_files "$out")
	if [ "$RC" -eq 0 ] && [ "$got" = "$expected" ]; then
		ok "$name: the lidia_symbols target builds them all again"
	else
		not_ok "$name: the lidia_symbols target builds them all again" "exit $RC" "expected:" "$expected" \
			"got:" "$got" "$(tail -n 10 "$work/$name.again.err")"
	fi
	LAST_BUILD=$b
}

LAST_BUILD=
# PREFIX_MAP: names relative to the source tree (the first rule that matches wins).
EX_GREET_ARGS='PREFIX_MAP "${CMAKE_SOURCE_DIR}/=src/" "/=/not-this/"' EX_GREET_FILE=src/greet/greet.c
exercise make "Unix Makefiles" pyroscope anonymous "$work/make-build/lidia" ""
make_build=$LAST_BUILD
EX_GREET_ARGS= EX_GREET_FILE=/ninja/greet/greet.c
exercise ninja Ninja pyroscope team-a "$work/ninja-out" "" \
	-DLIDIAGEN_TENANT=team-a -DLIDIAGEN_OUTPUT_DIR="$work/ninja-out" \
	-DLIDIAGEN_PREFIX_MAP="$work/ninja-src/=/ninja/"
EX_GREET_FILE= # Release: no debug information, so no file name
exercise multi "Ninja Multi-Config" flat anonymous "$work/multi-build/lidia/Release" Release \
	-DLIDIAGEN_LAYOUT=flat
if [ -n "$(lidia_files "$work/multi-build/lidia/Debug")" ]; then
	not_ok "multi: building Release leaves the Debug tree alone" "$(lidia_files "$work/multi-build/lidia/Debug")"
else
	ok "multi: building Release leaves the Debug tree alone"
fi

# ---- the install helper ---------------------------------------------------------
if [ -n "$make_build" ]; then
	inst=$work/installed
	run "$work/install-component" cmake --install "$make_build" --component lidia_symbols --prefix "$inst"
	want=$(lidia_files "$make_build/lidia" | sed "s|^$make_build/lidia|$inst/share/lidia|")
	got=$(lidia_files "$inst")
	if [ "$RC" -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want" ]; then
		ok "lidiagen_install_symbols(): cmake --install --component lidia_symbols installs the tree"
	else
		not_ok "lidiagen_install_symbols(): cmake --install --component lidia_symbols installs the tree" \
			"exit $RC" "expected:" "$want" "got:" "$got" "$(first_lines 10 "$work/install-component.err")"
	fi
fi

# ---- targets and steps ------------------------------------------------------------
# project DIR-NAME [SED-EXPR]: a fresh copy of the fixture in $work/DIR-NAME-src,
# edited by SED-EXPR in its CMakeLists.txt.
project() {
	rm -rf "$work/$1-src" "$work/$1-build"
	cp -R "$FIXTURES_SRC/cmake" "$work/$1-src"
	[ -z "${2:-}" ] || sed -i "$2" "$work/$1-src/CMakeLists.txt"
}
if [ -n "$make_build" ]; then
	extra_key=
	run "$work/extra" cmake --build "$make_build" --target lidia_symbols_extra
	[ -x "$make_build/extra" ] && extra_key=$(key_path "$make_build/lidia" pyroscope anonymous "$make_build/extra")
	if [ "$RC" -eq 0 ] && [ -n "$extra_key" ] && [ -f "$extra_key" ]; then
		ok "an EXCLUDE_FROM_ALL target: out of the default build and lidia_symbols; lidia_symbols_extra builds it and its file"
	else
		not_ok "an EXCLUDE_FROM_ALL target: out of the default build and lidia_symbols; lidia_symbols_extra builds it and its file" \
			"exit $RC" "$(lidia_files "$make_build/lidia")" "$(tail -n 5 "$work/extra.err")"
	fi
	# A target taken out of the call: its file goes when CMake next runs.
	sed -i 's/^lidiagen_add_symbols(app nobid extra)/lidiagen_add_symbols(nobid extra)/' "$work/make-src/CMakeLists.txt"
	app_key=$(key_path "$make_build/lidia" pyroscope anonymous "$make_build/app")
	before=$(lidia_files "$make_build/lidia")
	run "$work/dropped" cmake "$make_build"
	got=$(lidia_files "$make_build/lidia")
	if [ "$RC" -eq 0 ] && [ -f "$extra_key" ] && grep -qxF "$app_key" <<<"$before" &&
		[ "$got" = "$(grep -vxF "$app_key" <<<"$before")" ]; then
		ok "a target no longer given to lidiagen_add_symbols loses its file at the next configure, the others stay"
	else
		not_ok "a target no longer given to lidiagen_add_symbols loses its file at the next configure, the others stay" \
			"exit $RC" "before:" "$before" "after:" "$got"
	fi
fi

# The Ninja job pool, and lidiagen -j 1 under Makefiles.
ninja_pool=$(grep -B3 -A12 'Lidia symbols of app' "$work/ninja-build/build.ninja" 2>/dev/null | grep -c 'pool = lidiagen')
if grep -q '^pool lidiagen$' "$work/ninja-build/build.ninja" "$work/ninja-build/CMakeFiles/rules.ninja" 2>/dev/null &&
	[ "$ninja_pool" -ge 1 ] && grep -q -- '-j;1' "$work/make-build/CMakeFiles/lidiagen/greet.params.cmake" 2>/dev/null; then
	ok "the steps run in the Ninja job pool lidiagen (depth 1); under Makefiles each runs lidiagen -j 1"
else
	not_ok "the steps run in the Ninja job pool lidiagen (depth 1); under Makefiles each runs lidiagen -j 1" \
		"$(grep -n 'pool' "$work/ninja-build/build.ninja" | head -5)" \
		"$(cat "$work/make-build/CMakeFiles/lidiagen/greet.params.cmake" 2>&1)"
fi

# ---- the output directory: its own, relative or absolute ---------------------------
# A directory holding other files is refused at configure time, and left as it was.
shared=$work/shared-dir
rm -rf "$shared"
mkdir -p "$shared"
echo keep >"$shared/notes.txt"
project shared
run "$work/shared" cmake -S "$work/shared-src" -B "$work/shared-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
	-DLIDIAGEN_OUTPUT_DIR="$shared"
if [ "$RC" -ne 0 ] && flat "$work/shared.err" | grep -q "OUTPUT_DIR '$shared' holds 1 files this build did not write" &&
	[ "$(cat "$shared/notes.txt")" = keep ] && [ "$(find "$shared" | wc -l)" = 2 ]; then
	ok "an OUTPUT_DIR holding other files is refused at configure time, and left as it was"
else
	not_ok "an OUTPUT_DIR holding other files is refused at configure time, and left as it was" "exit $RC" \
		"$(first_lines 10 "$work/shared.err")" "$(find "$shared")"
fi

# Relative (to the build tree, from any directory) and absolute: built and installed.
for kind in relative absolute; do
	project "$kind"
	b=$work/$kind-build
	dir=symtree
	[ "$kind" = absolute ] && dir=$work/abs-symtree && rm -rf "$dir"
	run "$work/$kind" cmake -S "$work/$kind-src" -B "$b" -G "Unix Makefiles" -DCMAKE_PREFIX_PATH="$prefix" \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIDIAGEN_OUTPUT_DIR="$dir"
	[ "$RC" -eq 0 ] && run "$work/$kind.build" cmake --build "$b"
	[ "$RC" -eq 0 ] && run "$work/$kind.install" cmake --install "$b" --prefix "$work/$kind-inst"
	tree=$dir
	[ "$kind" = relative ] && tree=$b/symtree
	want=$(printf '%s\n' "$(key_path "$tree" pyroscope anonymous "$b/app")" \
		"$(key_path "$tree" pyroscope anonymous "$b/greet/libgreet.so.1.2.3")" | sort)
	got=$(lidia_files "$tree")
	inst=$(lidia_files "$work/$kind-inst/share/lidia" | sed "s|^$work/$kind-inst/share/lidia|$tree|")
	if [ "$RC" -eq 0 ] && [ "$got" = "$want" ] && [ "$inst" = "$want" ]; then
		ok "-DLIDIAGEN_OUTPUT_DIR=$dir ($kind): both targets' files in $tree, and cmake --install installs them"
	else
		not_ok "-DLIDIAGEN_OUTPUT_DIR=$dir ($kind): both targets' files in $tree, and cmake --install installs them" \
			"exit $RC" "expected:" "$want" "built:" "$got" "installed:" "$inst" \
			"$(tail -n 5 "$work/$kind.install.err" 2>/dev/null)"
	fi
done

# ---- optional: LIDIAGEN_ENABLE=OFF, and a package without its command -------------
# The fixture finds lidiagen as README.md says; OFF needs no lidiagen at all.
project off
run "$work/off" cmake -S "$work/off-src" -B "$work/off-build" -G Ninja -DLIDIAGEN_ENABLE=OFF
[ "$RC" -eq 0 ] && run "$work/off.build" cmake --build "$work/off-build" --target all lidia_symbols
if [ "$RC" -eq 0 ] && [ ! -e "$work/off-build/lidia" ] && ! grep -q 'Lidia symbols' "$work/off.build.out"; then
	ok "README's optional find_package: LIDIAGEN_ENABLE=OFF builds with no lidiagen package, writes nothing, lidia_symbols exists"
else
	not_ok "README's optional find_package: LIDIAGEN_ENABLE=OFF builds with no lidiagen package, writes nothing, lidia_symbols exists" \
		"exit $RC" "$(tail -n 10 "$work/off.err")" "$(tail -n 10 "$work/off.build.err" 2>/dev/null)"
fi
project on
run "$work/on" cmake -S "$work/on-src" -B "$work/on-build" -G Ninja
if [ "$RC" -ne 0 ] && grep -q 'lidiagenConfig.cmake' "$work/on.err"; then
	ok "README's optional find_package: ON (the default) without lidiagen fails at find_package"
else
	not_ok "README's optional find_package: ON (the default) without lidiagen fails at find_package" \
		"exit $RC" "$(first_lines 10 "$work/on.err")"
fi
nobin=$work/nobin
mkdir -p "$nobin/lib"
cp -R "$prefix/lib/cmake" "$nobin/lib/"

# probe NAME CMAKE-ARGS...: configure the probe project afresh (output in $work/NAME.*).
probe() {
	local name=$1
	shift
	rm -rf "$work/probe-build"
	run "$work/$name" cmake -S "$work/probe" -B "$work/probe-build" "$@"
}

# A project that only needs the find_package() step, to see its errors fast.
mkdir -p "$work/probe"
cat >"$work/probe/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(probe NONE)
find_package(lidiagen CONFIG REQUIRED)
EOF
PATH=/usr/bin:/bin probe nobin -DCMAKE_PREFIX_PATH="$nobin"
if [ "$RC" -ne 0 ] && flat "$work/nobin.err" | grep -q "no lidiagen command in $nobin/bin" &&
	grep -q 'LIDIAGEN_EXECUTABLE' "$work/nobin.err"; then
	ok "a package without its command fails find_package(REQUIRED) and says what to do"
else
	not_ok "a package without its command fails find_package(REQUIRED) and says what to do" \
		"exit $RC" "$(first_lines 20 "$work/nobin.err")"
fi
probe badexe -DCMAKE_PREFIX_PATH="$prefix" \
	-DLIDIAGEN_EXECUTABLE="$work/no-such-lidiagen"
if [ "$RC" -ne 0 ] && flat "$work/badexe.err" | grep -q "LIDIAGEN_EXECUTABLE is '$work/no-such-lidiagen', which does not exist"; then
	ok "-DLIDIAGEN_EXECUTABLE naming no file is a clear configure error"
else
	not_ok "-DLIDIAGEN_EXECUTABLE naming no file is a clear configure error" "exit $RC" \
		"$(first_lines 20 "$work/badexe.err")"
fi
probe goodexe -DCMAKE_PREFIX_PATH="$nobin" \
	-DLIDIAGEN_EXECUTABLE="$prefix/bin/lidiagen"
if [ "$RC" -eq 0 ]; then
	ok "-DLIDIAGEN_EXECUTABLE=PATH supplies the command the package lacks"
else
	not_ok "-DLIDIAGEN_EXECUTABLE=PATH supplies the command the package lacks" "$(first_lines 20 "$work/goodexe.err")"
fi
probe true -DCMAKE_PREFIX_PATH="$prefix" \
	-DLIDIAGEN_EXECUTABLE=/bin/true
if [ "$RC" -ne 0 ] && flat "$work/true.err" | grep -q "'/bin/true --version' printed '[^']*', not 'lidiagen VERSION': it is not lidiagen"; then
	ok "-DLIDIAGEN_EXECUTABLE=/bin/true: not lidiagen, says so (no 'failed (0)')"
else
	not_ok "-DLIDIAGEN_EXECUTABLE=/bin/true: not lidiagen, says so (no 'failed (0)')" "exit $RC" \
		"$(first_lines 20 "$work/true.err")"
fi
probe offpkg -DCMAKE_PREFIX_PATH="$nobin" -DLIDIAGEN_ENABLE=OFF
if [ "$RC" -eq 0 ]; then
	ok "LIDIAGEN_ENABLE=OFF: the package without its command is found, to do nothing"
else
	not_ok "LIDIAGEN_ENABLE=OFF: the package without its command is found, to do nothing" "$(first_lines 20 "$work/offpkg.err")"
fi

# COMPONENTS: lidiagen and lidia exist, nothing else; lidiagen::lidia links a reader.
sed -i 's/find_package(lidiagen CONFIG REQUIRED)/find_package(lidiagen CONFIG REQUIRED COMPONENTS lidiagen nosuch)/' \
	"$work/probe/CMakeLists.txt"
probe nosuch -DCMAKE_PREFIX_PATH="$prefix"
if [ "$RC" -ne 0 ] && flat "$work/nosuch.err" | grep -q "component 'nosuch' not found"; then
	ok "find_package(lidiagen COMPONENTS lidiagen nosuch) fails, naming nosuch"
else
	not_ok "find_package(lidiagen COMPONENTS lidiagen nosuch) fails, naming nosuch" "exit $RC" \
		"$(first_lines 20 "$work/nosuch.err")"
fi
mkdir -p "$work/reader"
cat >"$work/reader/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(reader C)
find_package(lidiagen CONFIG REQUIRED COMPONENTS lidia)
add_executable(reader reader.c)
target_link_libraries(reader PRIVATE lidiagen::lidia)
EOF
cat >"$work/reader/reader.c" <<'EOF'
#include <lidia.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	struct lidia_reader *r;
	struct lidia_frame f[8];
	unsigned long long va;
	if (argc != 3 || lidia_reader_open(&r, argv[1], NULL) || sscanf(argv[2], "%llx", &va) != 1)
		return 1;
	int n = lidia_reader_lookup(r, va, f, 8);
	if (n > 0)
		printf("%.*s\n", (int)f[0].function.len, f[0].function.ptr);
	lidia_reader_close(r);
	return n > 0 ? 0 : 1;
}
EOF
rm -rf "$work/reader-build"
# A sanitized build (make SANITIZE=...) installs a sanitized library: its users build so too.
run "$work/reader" cmake -S "$work/reader" -B "$work/reader-build" -DCMAKE_PREFIX_PATH="$prefix" \
	${SANITIZE:+"-DCMAKE_C_FLAGS=-fsanitize=$SANITIZE" "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=$SANITIZE"}
[ "$RC" -eq 0 ] && run "$work/reader.build" cmake --build "$work/reader-build"
lib=$work/relative-build/greet/libgreet.so.1.2.3
addr=$("$PYTHON" "$TESTS_LIB/elfsyms.py" funcs "$lib" 2>/dev/null | awk '$NF == "greet_count" { print $1; exit }')
got=$(LD_LIBRARY_PATH=$prefix/lib "$work/reader-build/reader" \
	"$(key_path "$work/relative-build/symtree" pyroscope anonymous "$lib")" "${addr:-0}" 2>&1)
if [ "$RC" -eq 0 ] && [ "$got" = greet_count ]; then
	ok "find_package(lidiagen COMPONENTS lidia): a program linked to lidiagen::lidia reads a symbol file (greet_count)"
else
	not_ok "find_package(lidiagen COMPONENTS lidia): a program linked to lidiagen::lidia reads a symbol file (greet_count)" \
		"exit $RC" "$got" "$(tail -n 10 "$work/reader.err" "$work/reader.build.out" 2>/dev/null)"
fi
sed -i 's/ COMPONENTS lidiagen nosuch)/)/' "$work/probe/CMakeLists.txt"
sed -i 's/find_package(lidiagen CONFIG REQUIRED)/find_package(lidiagen 99 CONFIG REQUIRED)/' "$work/probe/CMakeLists.txt"
probe version -DCMAKE_PREFIX_PATH="$prefix"
if [ "$RC" -ne 0 ] && flat "$work/version.err" | grep -q 'compatible with requested version "99"'; then
	ok "find_package(lidiagen 99) rejects this version"
else
	not_ok "find_package(lidiagen 99) rejects this version" "exit $RC" "$(first_lines 20 "$work/version.err")"
fi

# ---- uninstall ------------------------------------------------------------------
run "$work/uninstall" make -C "$top" "${mk[@]}" -s uninstall-cmake PREFIX=/usr DESTDIR="$stage"
if [ "$RC" -eq 0 ] && [ ! -e "$prefix/lib/cmake/lidiagen" ]; then
	ok "make uninstall-cmake removes the package"
else
	not_ok "make uninstall-cmake removes the package" "exit $RC" "$(find "$prefix/lib/cmake" 2>&1)"
fi
