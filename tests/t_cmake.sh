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
# -DLIDIAGEN_PREFIX_MAP) maps them, or as compiled. Then the install helper,
# LIDIAGEN_ENABLE=OFF and the errors of a package without its command.
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

	# clean removes the outputs; lidia_symbols makes them again.
	run "$work/$name.clean" "${build[@]}" --target clean
	got=$(lidia_files "$out")
	if [ "$RC" -eq 0 ] && [ -z "$got" ]; then
		ok "$name: clean removes the symbol files"
	else
		not_ok "$name: clean removes the symbol files" "exit $RC" "left:" "$got"
	fi
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

# ---- LIDIAGEN_ENABLE=OFF, and a package without its command ---------------------
nobin=$work/nobin
mkdir -p "$nobin/lib"
cp -R "$prefix/lib/cmake" "$nobin/lib/"
src=$work/off-src
rm -rf "$src" "$work/off-build"
cp -R "$FIXTURES_SRC/cmake" "$src"
run "$work/off" cmake -S "$src" -B "$work/off-build" -G Ninja -DCMAKE_PREFIX_PATH="$nobin" -DLIDIAGEN_ENABLE=OFF
[ "$RC" -eq 0 ] && run "$work/off.build" cmake --build "$work/off-build" --target all lidia_symbols
if [ "$RC" -eq 0 ] && [ ! -e "$work/off-build/lidia" ] && ! grep -q 'Lidia symbols' "$work/off.build.out"; then
	ok "LIDIAGEN_ENABLE=OFF: builds with no lidiagen at all, writes nothing, lidia_symbols still exists"
else
	not_ok "LIDIAGEN_ENABLE=OFF: builds with no lidiagen at all, writes nothing, lidia_symbols still exists" \
		"exit $RC" "$(tail -n 10 "$work/off.err")" "$(tail -n 10 "$work/off.build.err" 2>/dev/null)"
fi

# flat FILE: CMake's message, with its line wrapping undone.
flat() { tr '\n' ' ' <"$1" | tr -s ' '; }

# A project that only needs the find_package() step, to see its errors fast.
mkdir -p "$work/probe"
cat >"$work/probe/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(probe NONE)
find_package(lidiagen CONFIG REQUIRED)
EOF
rm -rf "$work/probe-build"
PATH=/usr/bin:/bin run "$work/nobin" cmake -S "$work/probe" -B "$work/probe-build" -DCMAKE_PREFIX_PATH="$nobin"
if [ "$RC" -ne 0 ] && flat "$work/nobin.err" | grep -q "no lidiagen command in $nobin/bin" &&
	grep -q 'LIDIAGEN_EXECUTABLE' "$work/nobin.err"; then
	ok "a package without its command fails find_package(REQUIRED) and says what to do"
else
	not_ok "a package without its command fails find_package(REQUIRED) and says what to do" \
		"exit $RC" "$(first_lines 20 "$work/nobin.err")"
fi
rm -rf "$work/probe-build"
run "$work/badexe" cmake -S "$work/probe" -B "$work/probe-build" -DCMAKE_PREFIX_PATH="$prefix" \
	-DLIDIAGEN_EXECUTABLE="$work/no-such-lidiagen"
if [ "$RC" -ne 0 ] && flat "$work/badexe.err" | grep -q "LIDIAGEN_EXECUTABLE is '$work/no-such-lidiagen', which does not exist"; then
	ok "-DLIDIAGEN_EXECUTABLE naming no file is a clear configure error"
else
	not_ok "-DLIDIAGEN_EXECUTABLE naming no file is a clear configure error" "exit $RC" \
		"$(first_lines 20 "$work/badexe.err")"
fi
rm -rf "$work/probe-build"
run "$work/goodexe" cmake -S "$work/probe" -B "$work/probe-build" -DCMAKE_PREFIX_PATH="$nobin" \
	-DLIDIAGEN_EXECUTABLE="$prefix/bin/lidiagen"
if [ "$RC" -eq 0 ]; then
	ok "-DLIDIAGEN_EXECUTABLE=PATH supplies the command the package lacks"
else
	not_ok "-DLIDIAGEN_EXECUTABLE=PATH supplies the command the package lacks" "$(first_lines 20 "$work/goodexe.err")"
fi
rm -rf "$work/probe-build"
sed -i 's/find_package(lidiagen CONFIG REQUIRED)/find_package(lidiagen 99 CONFIG REQUIRED)/' "$work/probe/CMakeLists.txt"
run "$work/version" cmake -S "$work/probe" -B "$work/probe-build" -DCMAKE_PREFIX_PATH="$prefix"
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
