# lidiagen-symbols.cmake: Lidia symbol files as build outputs of CMake targets.
# lidiagenConfig.cmake includes it once it has found the lidiagen command
# (LIDIAGEN_EXECUTABLE). Needs CMake 3.20.
#
#   lidiagen_add_symbols(<target>... [OUTPUT_DIR dir] [TENANT t] [LAYOUT l]
#                        [PREFIX_MAP old=new...] [OPTIONS opt...])
#       Each executable, shared or module library <target> gets one custom
#       command that runs `lidiagen $<TARGET_FILE:target> -o dir ...` after the
#       target links, and again each time it relinks (or the lidiagen command,
#       or these arguments, change); it is in the default build, and the target
#       lidia_symbols builds them all. PREFIX_MAP rewrites the file names
#       written (one --prefix-map each, in order: the first that matches wins),
#       e.g. PREFIX_MAP "${CMAKE_SOURCE_DIR}/=src/" for names relative to the
#       source tree. OUTPUT_DIR, TENANT, LAYOUT, PREFIX_MAP and OPTIONS default
#       to the variables LIDIAGEN_OUTPUT_DIR, LIDIAGEN_TENANT, LIDIAGEN_LAYOUT,
#       LIDIAGEN_PREFIX_MAP and LIDIAGEN_OPTIONS when set (-D on the command line
#       sets them for a whole build), else to <build>/lidia (<build>/lidia/<config>
#       with multi-config generators) and lidiagen's own defaults (pyroscope
#       layout, tenant anonymous, names as compiled). OUTPUT_DIR may use
#       generator expressions.
#
#   lidiagen_install_symbols([OUTPUT_DIR dir] [DESTINATION dir] [COMPONENT c] [EXCLUDE_FROM_ALL])
#       install(DIRECTORY) of a symbol tree (the default OUTPUT_DIR unless
#       given) to DESTINATION (default ${CMAKE_INSTALL_DATADIR}/lidia, or
#       share/lidia) in COMPONENT (default lidia_symbols).
#
#   LIDIAGEN_ENABLE (cache, ON)  OFF turns all of the above into no-ops, so
#       debug builds pay nothing; lidia_symbols still exists and builds nothing.
#
# How the outputs are tracked. A file's key is its GNU build ID, known only
# after linking, so the custom command's declared OUTPUT is a small record,
# CMakeFiles/lidiagen[/<config>]/<target>.keys, listing the files the last run
# wrote (read from lidiagen's "VERB DIR/KEY <- INPUT" report lines). lidiagen writes
# straight into OUTPUT_DIR (temporary file + rename), with --force (a relinked
# target's file is rewritten) and --no-state (no state file in the tree) when
# it has those options. When a relink changes the build ID, the run removes the
# file of the old ID, so OUTPUT_DIR holds exactly the current build's files.
# `clean` removes the records and every OUTPUT_DIR (ADDITIONAL_CLEAN_FILES of
# lidia_symbols): an OUTPUT_DIR belongs to the build, so never point it at a
# directory that holds anything else.

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

# _lidiagen_default_output_dir(OUT)
function(_lidiagen_default_output_dir out)
	get_property(multi GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
	if(multi)
		set(${out} "${CMAKE_BINARY_DIR}/lidia/$<CONFIG>" PARENT_SCOPE)
	else()
		set(${out} "${CMAKE_BINARY_DIR}/lidia" PARENT_SCOPE)
	endif()
endfunction()

# _lidiagen_check_output_dir(DIR): an OUTPUT_DIR is removed by `clean`, so it
# must not be (or contain) the source or build tree.
function(_lidiagen_check_output_dir dir)
	string(GENEX_STRIP "${dir}" plain)
	if(NOT plain STREQUAL dir)
		return() # a generator expression: checked when it is known, not here
	endif()
	get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
	foreach(tree IN ITEMS "${CMAKE_SOURCE_DIR}" "${CMAKE_BINARY_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}")
		file(RELATIVE_PATH rel "${dir}" "${tree}")
		if(rel STREQUAL "" OR NOT rel MATCHES "^\\.\\.(/|$)")
			message(FATAL_ERROR "lidiagen_add_symbols: OUTPUT_DIR '${dir}' is or holds '${tree}'; "
				"`clean` removes OUTPUT_DIR, so give it a directory of its own")
		endif()
	endforeach()
endfunction()

function(lidiagen_add_symbols)
	cmake_parse_arguments(PARSE_ARGV 0 arg "" "OUTPUT_DIR;TENANT;LAYOUT" "PREFIX_MAP;OPTIONS")
	set(targets ${arg_UNPARSED_ARGUMENTS})
	if(NOT targets)
		message(FATAL_ERROR "lidiagen_add_symbols: name at least one target")
	endif()
	if(NOT LIDIAGEN_ENABLE)
		return()
	endif()
	if(NOT LIDIAGEN_EXECUTABLE)
		message(FATAL_ERROR "lidiagen_add_symbols: LIDIAGEN_EXECUTABLE is not set (find_package(lidiagen) first)")
	endif()

	foreach(key IN ITEMS OUTPUT_DIR TENANT LAYOUT PREFIX_MAP OPTIONS)
		if(NOT DEFINED arg_${key} AND DEFINED LIDIAGEN_${key})
			set(arg_${key} "${LIDIAGEN_${key}}")
		endif()
	endforeach()
	if(NOT arg_OUTPUT_DIR)
		_lidiagen_default_output_dir(arg_OUTPUT_DIR)
	endif()
	_lidiagen_check_output_dir("${arg_OUTPUT_DIR}")
	string(GENEX_STRIP "${arg_OUTPUT_DIR}" plain)
	if(plain STREQUAL arg_OUTPUT_DIR)
		get_filename_component(arg_OUTPUT_DIR "${arg_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
	endif()
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
	list(APPEND args ${step_options} ${arg_OPTIONS})
	set(run_script "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/lidiagen-run.cmake")

	get_property(multi GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
	set(state "${CMAKE_BINARY_DIR}/CMakeFiles/lidiagen")
	if(multi)
		string(APPEND state "/$<CONFIG>")
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

		set(record "${state}/${tgt}.keys")
		set(params "${state}/${tgt}.params.cmake")
		# Everything the run needs, per configuration; file(GENERATE) rewrites
		# it only when it changes, and the command depends on it, so a changed
		# TENANT or OPTIONS reruns the command under every generator.
		set(content "")
		foreach(pair IN ITEMS "EXECUTABLE|${LIDIAGEN_EXECUTABLE}" "TARGET|${tgt}"
				"INPUT|$<TARGET_FILE:${tgt}>" "OUTPUT_DIR|${arg_OUTPUT_DIR}" "RECORD|${record}")
			string(REGEX REPLACE "^([A-Z_]+)\\|.*" "\\1" name "${pair}")
			string(REGEX REPLACE "^[A-Z_]+\\|" "" value "${pair}")
			_lidiagen_bracket(value "${value}")
			string(APPEND content "set(LIDIAGEN_${name} ${value})\n")
		endforeach()
		_lidiagen_bracket(value "${args}")
		string(APPEND content "set(LIDIAGEN_ARGS ${value})\n")
		file(GENERATE OUTPUT "${params}" CONTENT "${content}")

		add_custom_command(
			OUTPUT "${record}"
			COMMAND "${CMAKE_COMMAND}" "-DLIDIAGEN_PARAMS=${params}" -P "${run_script}"
			DEPENDS "${tgt}" "$<TARGET_FILE:${tgt}>" "${params}" "${run_script}"
				"${LIDIAGEN_EXECUTABLE}"
			COMMENT "Lidia symbols of ${tgt}"
			VERBATIM)
		add_custom_target("lidia_symbols_${tgt}" ALL DEPENDS "${record}")
		set_property(TARGET "lidia_symbols_${tgt}" PROPERTY FOLDER lidiagen)
		add_dependencies(lidia_symbols "lidia_symbols_${tgt}")
		set_property(TARGET lidia_symbols APPEND PROPERTY ADDITIONAL_CLEAN_FILES "${record}")
	endforeach()

	get_property(dirs TARGET lidia_symbols PROPERTY ADDITIONAL_CLEAN_FILES)
	if(NOT arg_OUTPUT_DIR IN_LIST dirs)
		set_property(TARGET lidia_symbols APPEND PROPERTY ADDITIONAL_CLEAN_FILES "${arg_OUTPUT_DIR}")
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
	if(NOT arg_OUTPUT_DIR)
		if(DEFINED LIDIAGEN_OUTPUT_DIR AND LIDIAGEN_OUTPUT_DIR)
			set(arg_OUTPUT_DIR "${LIDIAGEN_OUTPUT_DIR}")
		else()
			_lidiagen_default_output_dir(arg_OUTPUT_DIR)
		endif()
	endif()
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
