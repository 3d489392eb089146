# lidiagen-symbols.cmake: Lidia symbol files as build outputs of CMake targets.
# lidiagenConfig.cmake includes it once it has found the lidiagen command
# (the imported executable lidiagen::lidiagen). Needs CMake 3.20. The full
# guide is installed as share/doc/lidiagen/plugins.md (plugins/README.md).
#
#   lidiagen_add_symbols(<target>... [OUTPUT_DIR dir] [TENANT t] [LAYOUT l]
#                        [PREFIX_MAP old=new...] [OPTIONS opt...])
#       Each executable, shared or module library <target> (of any directory)
#       gets one custom command, in the target lidia_symbols_<target>, that
#       runs `$<TARGET_FILE:lidiagen::lidiagen> $<TARGET_FILE:target> -o dir ...`
#       after the target links, and again each time it relinks (or the lidiagen
#       command, or these arguments, change); `--target <target>` alone runs it
#       too, through the target's link launcher (RULE_LAUNCH_LINK, unless the
#       project set one). It is in the default build, and
#       in lidia_symbols, when the target is (not for EXCLUDE_FROM_ALL
#       targets: build lidia_symbols_<target> by name). PREFIX_MAP rewrites the
#       file names written (one --prefix-map each, in order: the first that
#       matches wins), e.g. PREFIX_MAP "${CMAKE_SOURCE_DIR}/=src/" for names
#       relative to the source tree. OUTPUT_DIR, TENANT, LAYOUT, PREFIX_MAP and
#       OPTIONS default to the variables LIDIAGEN_OUTPUT_DIR, LIDIAGEN_TENANT,
#       LIDIAGEN_LAYOUT, LIDIAGEN_PREFIX_MAP and LIDIAGEN_OPTIONS when set (-D on
#       the command line sets them for a whole build), else to <build>/lidia
#       (<build>/lidia/<config> with multi-config generators) and lidiagen's own
#       defaults (pyroscope layout, tenant anonymous, names as compiled). A
#       relative OUTPUT_DIR is taken from the top of the build tree; OUTPUT_DIR
#       may use generator expressions (then it should begin with an absolute
#       path). A target without debug information in the configuration gets
#       one warning from its step (its file has function names only).
#
#   lidiagen_install_symbols([OUTPUT_DIR dir] [DESTINATION dir] [COMPONENT c] [EXCLUDE_FROM_ALL])
#       install(DIRECTORY) of a symbol tree (the OUTPUT_DIR of
#       lidiagen_add_symbols(), resolved the same way) to DESTINATION (default
#       ${CMAKE_INSTALL_DATADIR}/lidia, or share/lidia) in COMPONENT (default
#       lidia_symbols).
#
#   LIDIAGEN_ENABLE (cache, ON)  OFF turns all of the above into no-ops, so
#       debug builds pay nothing; lidia_symbols still exists and builds nothing.
#       (On a machine without lidiagen the package is not there to say so:
#       plugins.md shows the find_package() that stays optional.)
#
#   LIDIAGEN_JOB_POOL, LIDIAGEN_JOB_POOL_SIZE (1), LIDIAGEN_JOBS  how many steps
#       run at once and on how many threads: see the job pool below.
#
# How the outputs are tracked. A file's key is its GNU build ID, known only
# after linking, so the custom command's declared OUTPUT is a small record,
# CMakeFiles/lidiagen[/<config>]/<target>.keys, listing the files the last run
# wrote (read from lidiagen's "VERB DIR/KEY <- INPUT" report lines). lidiagen writes
# straight into OUTPUT_DIR (temporary file + rename), with --force (a relinked
# target's file is rewritten) and --no-state (no state file in the tree) when
# it has those options. When a relink changes the build ID, the run removes the
# file of the old ID, so OUTPUT_DIR holds exactly the current build's files;
# when CMake runs, the files of targets no longer given are removed. An
# OUTPUT_DIR that holds files no record lists is refused when CMake runs, so
# that nothing else is ever removed there. `clean` removes an OUTPUT_DIR
# inside the build tree and leaves one outside it alone; the records stay, so
# that the next step still knows what its last run wrote.

include_guard(GLOBAL)

# The aggregate target; made where find_package() first ran.
if(NOT TARGET lidia_symbols)
	add_custom_target(lidia_symbols)
	set_property(TARGET lidia_symbols PROPERTY FOLDER lidiagen)
endif()

# _lidiagen_bracket(OUT VALUE): VALUE as a CMake bracket argument.
function(_lidiagen_bracket out value)
	set(eq "=")
	while(value MATCHES "\\]${eq}\\]")
		string(APPEND eq "=")
	endwhile()
	set(${out} "[${eq}[${value}]${eq}]" PARENT_SCOPE)
endfunction()

# _lidiagen_output_dir(OUT DIR): the OUTPUT_DIR in use (DIR, else
# LIDIAGEN_OUTPUT_DIR, else <build>/lidia[/<config>]), made absolute once,
# against the top of the build tree, so that every call (in any directory) and
# lidiagen_install_symbols() name the same directory. A generator expression is
# made absolute only when it does not begin with one.
function(_lidiagen_output_dir out dir)
	if(NOT dir AND LIDIAGEN_OUTPUT_DIR)
		set(dir "${LIDIAGEN_OUTPUT_DIR}")
	endif()
	if(NOT dir)
		get_property(multi GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
		set(dir "${CMAKE_BINARY_DIR}/lidia")
		if(multi)
			string(APPEND dir "/$<CONFIG>")
		endif()
	endif()
	string(GENEX_STRIP "${dir}" plain)
	if(plain STREQUAL dir)
		get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR "${CMAKE_BINARY_DIR}")
	elseif(NOT IS_ABSOLUTE "${dir}" AND NOT dir MATCHES "^\\$<")
		set(dir "${CMAKE_BINARY_DIR}/${dir}")
	endif()
	set(${out} "${dir}" PARENT_SCOPE)
endfunction()

# _lidiagen_written(OUT): every file the symbol steps of this build tree wrote
# and still account for (the records of all targets and configurations).
function(_lidiagen_written out)
	file(GLOB_RECURSE records "${CMAKE_BINARY_DIR}/CMakeFiles/lidiagen/*.keys")
	set(all "")
	foreach(r IN LISTS records)
		file(STRINGS "${r}" listed)
		list(APPEND all ${listed})
	endforeach()
	set(${out} "${all}" PARENT_SCOPE)
endfunction()

# _lidiagen_check_output_dir(DIR): DIR must not be (or hold) the source or
# build tree, and may hold nothing but the files this build's symbol steps
# wrote: the steps remove the old keys of relinked targets and `clean` removes
# a DIR inside the build tree, so a directory shared with anything else is
# refused here, before either can touch it.
function(_lidiagen_check_output_dir dir)
	string(GENEX_STRIP "${dir}" plain)
	if(NOT plain STREQUAL dir)
		# A generator expression: check the part before it (<build>/lidia/ of
		# <build>/lidia/$<CONFIG>), when that is a directory of its own.
		string(FIND "${dir}" "$<" at)
		string(SUBSTRING "${dir}" 0 ${at} dir)
		string(REGEX REPLACE "/[^/]*$" "" dir "${dir}")
		if(dir STREQUAL "" OR dir STREQUAL CMAKE_BINARY_DIR)
			return()
		endif()
	endif()
	foreach(tree IN ITEMS "${CMAKE_SOURCE_DIR}" "${CMAKE_BINARY_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}")
		file(RELATIVE_PATH rel "${dir}" "${tree}")
		if(rel STREQUAL "" OR NOT rel MATCHES "^\\.\\.(/|$)")
			message(FATAL_ERROR "lidiagen_add_symbols: OUTPUT_DIR '${dir}' is or holds '${tree}'; "
				"give the symbol files a directory of their own")
		endif()
	endforeach()
	if(NOT IS_DIRECTORY "${dir}")
		return()
	endif()
	file(GLOB_RECURSE present LIST_DIRECTORIES false "${dir}/*")
	_lidiagen_written(ours)
	set(foreign "")
	foreach(f IN LISTS present)
		# lidiagen's temporary files of an interrupted run are its own too.
		if(NOT f IN_LIST ours AND NOT f MATCHES "/\\.[^/]*\\.tmp\\.[^/]*$")
			list(APPEND foreign "${f}")
		endif()
	endforeach()
	if(foreign)
		list(LENGTH foreign n)
		list(GET foreign 0 first)
		message(FATAL_ERROR "lidiagen_add_symbols: OUTPUT_DIR '${dir}' holds ${n} files this build did not "
			"write (e.g. '${first}'); the symbol steps and `clean` remove files there, so give "
			"the symbol files a new or empty directory of their own (or leave OUTPUT_DIR unset)")
	endif()
endfunction()

# _lidiagen_prune(): called once at the end of the top directory. The records
# of targets no longer given to lidiagen_add_symbols(): their files go (unless
# a current record lists them too), and so do the records.
function(_lidiagen_prune)
	get_property(live GLOBAL PROPERTY _LIDIAGEN_RECORDS)
	file(GLOB_RECURSE records "${CMAKE_BINARY_DIR}/CMakeFiles/lidiagen/*.keys")
	set(keep "")
	set(gone "")
	foreach(r IN LISTS records)
		file(STRINGS "${r}" listed)
		if(r IN_LIST live)
			list(APPEND keep ${listed})
		else()
			list(APPEND gone "${r}")
		endif()
	endforeach()
	foreach(r IN LISTS gone)
		file(STRINGS "${r}" listed)
		foreach(f IN LISTS listed)
			if(NOT f IN_LIST keep)
				file(REMOVE "${f}")
			endif()
		endforeach()
		string(REGEX REPLACE "\\.keys$" ".params.cmake" params "${r}")
		file(REMOVE "${r}" "${params}")
	endforeach()
endfunction()
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" ID_VAR _lidiagen_defer CALL _lidiagen_prune)
unset(_lidiagen_defer)

# The Ninja job pool of the symbol steps: LIDIAGEN_JOB_POOL names one of the
# project's own, else the pool lidiagen (LIDIAGEN_JOB_POOL_SIZE steps at once,
# default 1) is defined here. Other generators have no pools: there each step
# runs lidiagen -j LIDIAGEN_JOBS (default 1), so that N steps of a parallel
# build take N threads, not N times every core.
set(LIDIAGEN_JOB_POOL_SIZE 1 CACHE STRING "How many lidiagen steps run at once under Ninja")
set(LIDIAGEN_JOBS "" CACHE STRING
	"lidiagen -j of each symbol step (default: its own under Ninja's pool, else 1)")
if(NOT LIDIAGEN_JOB_POOL AND CMAKE_GENERATOR MATCHES "Ninja")
	get_property(_lidiagen_pools GLOBAL PROPERTY JOB_POOLS)
	if(NOT _lidiagen_pools MATCHES "(^|;)lidiagen=")
		set_property(GLOBAL APPEND PROPERTY JOB_POOLS "lidiagen=${LIDIAGEN_JOB_POOL_SIZE}")
	endif()
	unset(_lidiagen_pools)
endif()

function(lidiagen_add_symbols)
	cmake_parse_arguments(PARSE_ARGV 0 arg "" "OUTPUT_DIR;TENANT;LAYOUT" "PREFIX_MAP;OPTIONS")
	set(targets ${arg_UNPARSED_ARGUMENTS})
	if(NOT targets)
		message(FATAL_ERROR "lidiagen_add_symbols: name at least one target")
	endif()
	if(NOT LIDIAGEN_ENABLE)
		return()
	endif()
	if(NOT TARGET lidiagen::lidiagen)
		message(FATAL_ERROR "lidiagen_add_symbols: no lidiagen::lidiagen target (find_package(lidiagen) first)")
	endif()

	foreach(key IN ITEMS TENANT LAYOUT PREFIX_MAP OPTIONS)
		if(NOT DEFINED arg_${key} AND DEFINED LIDIAGEN_${key})
			set(arg_${key} "${LIDIAGEN_${key}}")
		endif()
	endforeach()
	_lidiagen_output_dir(arg_OUTPUT_DIR "${arg_OUTPUT_DIR}")
	_lidiagen_check_output_dir("${arg_OUTPUT_DIR}")
	foreach(opt IN LISTS arg_OPTIONS)
		if(opt MATCHES "^(-o|--output|--layout|--tenant)(=|$)|^-o.")
			message(FATAL_ERROR "lidiagen_add_symbols: give '${opt}' as OUTPUT_DIR, LAYOUT or TENANT, not in OPTIONS")
		endif()
	endforeach()
	set(args "")
	if(arg_LAYOUT)
		list(APPEND args --layout "${arg_LAYOUT}")
	endif()
	if(arg_TENANT)
		list(APPEND args --tenant "${arg_TENANT}")
	endif()
	foreach(map IN LISTS arg_PREFIX_MAP)
		if(NOT map MATCHES "^[^=]+=")
			message(FATAL_ERROR "lidiagen_add_symbols: PREFIX_MAP '${map}' is not OLD=NEW (OLD not empty)")
		endif()
		list(APPEND args --prefix-map "${map}")
	endforeach()
	get_property(step_options GLOBAL PROPERTY _LIDIAGEN_BUILD_STEP_OPTIONS)
	list(APPEND args ${step_options})
	# Under Ninja the pool bounds the steps, and each may use the cores free;
	# elsewhere N parallel steps take N threads.
	set(pool "")
	if(CMAKE_GENERATOR MATCHES "Ninja")
		set(pool JOB_POOL "${LIDIAGEN_JOB_POOL}")
		if(NOT LIDIAGEN_JOB_POOL)
			set(pool JOB_POOL lidiagen)
		endif()
		if(LIDIAGEN_JOBS)
			list(APPEND args -j "${LIDIAGEN_JOBS}")
		endif()
	else()
		if(NOT LIDIAGEN_JOBS)
			list(APPEND args -j 1)
		else()
			list(APPEND args -j "${LIDIAGEN_JOBS}")
		endif()
	endif()
	list(APPEND args ${arg_OPTIONS})
	set(run_script "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/lidiagen-run.cmake")

	get_property(multi GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
	set(state "${CMAKE_BINARY_DIR}/CMakeFiles/lidiagen")
	set(records "")
	if(multi)
		foreach(config IN LISTS CMAKE_CONFIGURATION_TYPES)
			list(APPEND records "${state}/${config}/@.keys")
		endforeach()
		string(APPEND state "/$<CONFIG>")
	else()
		list(APPEND records "${state}/@.keys")
	endif()

	foreach(tgt IN LISTS targets)
		if(NOT TARGET "${tgt}")
			message(FATAL_ERROR "lidiagen_add_symbols: '${tgt}' is not a target")
		endif()
		get_target_property(real "${tgt}" ALIASED_TARGET)
		if(real)
			set(tgt "${real}")
		endif()
		get_target_property(type "${tgt}" TYPE)
		get_target_property(imported "${tgt}" IMPORTED)
		if(imported)
			set(type "an imported ${type}")
		endif()
		if(imported OR NOT type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY)$")
			message(FATAL_ERROR "lidiagen_add_symbols: '${tgt}' is ${type}; "
				"only executables and shared or module libraries built here have symbol files")
		endif()
		get_property(seen GLOBAL PROPERTY "_LIDIAGEN_SYMBOLS_${tgt}")
		if(seen)
			message(FATAL_ERROR "lidiagen_add_symbols: '${tgt}' already has its symbol file (one per target)")
		endif()
		set_property(GLOBAL PROPERTY "_LIDIAGEN_SYMBOLS_${tgt}" TRUE)
		foreach(r IN LISTS records)
			string(REPLACE "@" "${tgt}" r "${r}")
			set_property(GLOBAL APPEND PROPERTY _LIDIAGEN_RECORDS "${r}")
		endforeach()

		set(record "${state}/${tgt}.keys")
		set(params "${state}/${tgt}.params.cmake")
		# Everything the run needs, per configuration; file(GENERATE) rewrites
		# it only when it changes, and the command depends on it, so a changed
		# TENANT or OPTIONS reruns the command under every generator.
		set(content "")
		foreach(pair IN ITEMS "EXECUTABLE|$<TARGET_FILE:lidiagen::lidiagen>" "TARGET|${tgt}"
				"INPUT|$<TARGET_FILE:${tgt}>" "OUTPUT_DIR|${arg_OUTPUT_DIR}" "RECORD|${record}"
				"CONFIG|$<CONFIG>")
			string(REGEX REPLACE "^([A-Z_]+)\\|.*" "\\1" name "${pair}")
			string(REGEX REPLACE "^[A-Z_]+\\|" "" value "${pair}")
			_lidiagen_bracket(value "${value}")
			string(APPEND content "set(LIDIAGEN_${name} ${value})\n")
		endforeach()
		_lidiagen_bracket(value "${args}")
		string(APPEND content "set(LIDIAGEN_ARGS ${value})\n")
		file(GENERATE OUTPUT "${params}" CONTENT "${content}")

		# The record is the step's one declared output (the keys are known
		# only after linking); it is not cleaned, so that the step after a
		# `clean` still knows which files its last run wrote.
		add_custom_command(
			OUTPUT "${record}"
			COMMAND "${CMAKE_COMMAND}" "-DLIDIAGEN_PARAMS=${params}" -P "${run_script}"
			DEPENDS "${tgt}" "$<TARGET_FILE:${tgt}>" "${params}" "${run_script}"
				"$<TARGET_FILE:lidiagen::lidiagen>"
			COMMENT "Lidia symbols of ${tgt}"
			${pool}
			VERBATIM)
		# In the default build (and lidia_symbols) when the target is: an
		# EXCLUDE_FROM_ALL target's symbols are built by name, with it, by
		# lidia_symbols_<target>.
		set(all ALL)
		get_target_property(excluded "${tgt}" EXCLUDE_FROM_ALL)
		get_target_property(tgt_dir "${tgt}" SOURCE_DIR)
		get_directory_property(dir_excluded DIRECTORY "${tgt_dir}" EXCLUDE_FROM_ALL)
		if(excluded OR (dir_excluded AND NOT excluded STREQUAL "OFF" AND NOT excluded STREQUAL "FALSE"
				AND NOT excluded STREQUAL "0"))
			set(all "")
		endif()
		# `cmake --build --target <tgt>` builds the target alone (it cannot
		# depend on a step that depends on it): its link is launched through
		# the run script, which links and then runs the step, so that a
		# relinked target never keeps its old file. With a multi-config
		# generator the script finds the configuration's params by the file
		# the link writes. Not over a link launcher the project set itself.
		get_target_property(launcher "${tgt}" RULE_LAUNCH_LINK)
		get_property(dir_launcher DIRECTORY "${tgt_dir}" PROPERTY RULE_LAUNCH_LINK)
		get_property(global_launcher GLOBAL PROPERTY RULE_LAUNCH_LINK)
		if(NOT launcher AND NOT dir_launcher AND NOT global_launcher)
			set(find "-DLIDIAGEN_PARAMS=${params}")
			if(multi)
				set(find "-DLIDIAGEN_PARAMS_OF=${CMAKE_BINARY_DIR}/CMakeFiles/lidiagen/*/${tgt}.params.cmake")
			endif()
			set_property(TARGET "${tgt}" PROPERTY RULE_LAUNCH_LINK
				"\"${CMAKE_COMMAND}\" \"${find}\" -DLIDIAGEN_LINK=ON -P \"${run_script}\" --")
		endif()
		add_custom_target("lidia_symbols_${tgt}" ${all} DEPENDS "${record}")
		set_property(TARGET "lidia_symbols_${tgt}" PROPERTY FOLDER lidiagen)
		if(all)
			add_dependencies(lidia_symbols "lidia_symbols_${tgt}")
		endif()
	endforeach()

	# `clean` removes an OUTPUT_DIR inside the build tree (every file there is
	# this build's, checked above); one outside it is left alone, the steps
	# keeping it to exactly the current build's files.
	string(GENEX_STRIP "${arg_OUTPUT_DIR}" plain)
	file(RELATIVE_PATH rel "${CMAKE_BINARY_DIR}" "${plain}")
	if(NOT rel MATCHES "^\\.\\.(/|$)")
		get_property(dirs TARGET lidia_symbols PROPERTY ADDITIONAL_CLEAN_FILES)
		if(NOT arg_OUTPUT_DIR IN_LIST dirs)
			set_property(TARGET lidia_symbols APPEND PROPERTY ADDITIONAL_CLEAN_FILES "${arg_OUTPUT_DIR}")
		endif()
	endif()
endfunction()

function(lidiagen_install_symbols)
	cmake_parse_arguments(PARSE_ARGV 0 arg "EXCLUDE_FROM_ALL" "OUTPUT_DIR;DESTINATION;COMPONENT" "")
	if(arg_UNPARSED_ARGUMENTS)
		message(FATAL_ERROR "lidiagen_install_symbols: unknown arguments '${arg_UNPARSED_ARGUMENTS}'")
	endif()
	if(NOT LIDIAGEN_ENABLE)
		return()
	endif()
	_lidiagen_output_dir(arg_OUTPUT_DIR "${arg_OUTPUT_DIR}")
	if(NOT arg_DESTINATION)
		if(CMAKE_INSTALL_DATADIR)
			set(arg_DESTINATION "${CMAKE_INSTALL_DATADIR}/lidia")
		else()
			set(arg_DESTINATION share/lidia)
		endif()
	endif()
	if(NOT arg_COMPONENT)
		set(arg_COMPONENT lidia_symbols)
	endif()
	set(exclude "")
	if(arg_EXCLUDE_FROM_ALL)
		set(exclude EXCLUDE_FROM_ALL)
	endif()
	# The trailing slash installs the tree's contents; lidiagen's temporary
	# files of an interrupted run are left behind.
	install(DIRECTORY "${arg_OUTPUT_DIR}/" DESTINATION "${arg_DESTINATION}"
		COMPONENT "${arg_COMPONENT}" ${exclude}
		PATTERN ".*.tmp.*" EXCLUDE)
endfunction()
