# lidiagen-run.cmake: the build step lidiagen_add_symbols() adds for one target.
#   cmake -DLIDIAGEN_PARAMS=<target>.params.cmake -P lidiagen-run.cmake
# and the target's link launcher (RULE_LAUNCH_LINK), which links first:
#   cmake -DLIDIAGEN_PARAMS=... -DLIDIAGEN_LINK=ON -P lidiagen-run.cmake -- LINK COMMAND...
# The params file (written at generate time) sets LIDIAGEN_EXECUTABLE,
# LIDIAGEN_TARGET, LIDIAGEN_INPUT, LIDIAGEN_OUTPUT_DIR, LIDIAGEN_RECORD,
# LIDIAGEN_CONFIG and LIDIAGEN_ARGS.
#
# Runs `lidiagen INPUT -o OUTPUT_DIR ARGS...`, which writes each file under its
# final key by temporary file + rename, and reads the keys it wrote from the
# report lines lidiagen prints ("wrote OUTPUT_DIR/KEY <- INPUT (N functions)"). The
# record, the build step's declared output, lists those files; a file the
# previous run of this target wrote and this one did not (the old build ID of a
# relinked target) is removed, unless another target's record lists it too.
# A target whose file has no line rows (built without -g in this
# configuration) gets one warning, unless symbols only were asked for.
cmake_minimum_required(VERSION 3.20)

# Launched as the target's link (RULE_LAUNCH_LINK, LIDIAGEN_LINK): the link
# command follows "--"; it runs first, then the step, and says so as the
# build step would. With a multi-config generator LIDIAGEN_PARAMS_OF globs
# every configuration's params: the one whose input the link writes is this
# link's.
if(LIDIAGEN_LINK)
	set(link "")
	set(seen FALSE)
	math(EXPR last "${CMAKE_ARGC} - 1")
	foreach(i RANGE 1 ${last})
		if(seen)
			list(APPEND link "${CMAKE_ARGV${i}}")
		elseif(CMAKE_ARGV${i} STREQUAL "--")
			set(seen TRUE)
		endif()
	endforeach()
	execute_process(COMMAND ${link} RESULT_VARIABLE rc)
	if(NOT rc EQUAL 0)
		message(FATAL_ERROR "linking failed (${rc}): ${link}")
	endif()
	if(LIDIAGEN_PARAMS_OF)
		file(GLOB candidates "${LIDIAGEN_PARAMS_OF}")
		set(written "")
		foreach(arg IN LISTS link)
			get_filename_component(arg "${arg}" ABSOLUTE)
			list(APPEND written "${arg}")
		endforeach()
		foreach(c IN LISTS candidates)
			include("${c}")
			if(LIDIAGEN_INPUT IN_LIST written)
				set(LIDIAGEN_PARAMS "${c}")
				break()
			endif()
		endforeach()
	endif()
endif()

if(NOT LIDIAGEN_PARAMS OR NOT EXISTS "${LIDIAGEN_PARAMS}")
	message(FATAL_ERROR "lidiagen-run.cmake: LIDIAGEN_PARAMS='${LIDIAGEN_PARAMS}' names no file")
endif()
include("${LIDIAGEN_PARAMS}")

# Run as the build step after such a link, there is nothing left to do.
if(LIDIAGEN_LINK)
	message(STATUS "Lidia symbols of ${LIDIAGEN_TARGET} (after its link)")
elseif(EXISTS "${LIDIAGEN_RECORD}")
	set(done TRUE)
	foreach(input IN ITEMS "${LIDIAGEN_INPUT}" "${LIDIAGEN_PARAMS}" "${CMAKE_CURRENT_LIST_FILE}"
			"${LIDIAGEN_EXECUTABLE}")
		if(NOT EXISTS "${input}" OR "${input}" IS_NEWER_THAN "${LIDIAGEN_RECORD}")
			set(done FALSE) # newer, or as old: run
		endif()
	endforeach()
	if(done)
		return()
	endif()
endif()

# The report lines the keys are read from come with -v (a line per output,
# written or unchanged); -q would silence them.
set(args ${LIDIAGEN_ARGS})
list(REMOVE_ITEM args "" -q --quiet)
list(APPEND args -v)
string(REGEX REPLACE "/+$" "" out_dir "${LIDIAGEN_OUTPUT_DIR}")
file(MAKE_DIRECTORY "${out_dir}")

execute_process(
	COMMAND "${LIDIAGEN_EXECUTABLE}" "${LIDIAGEN_INPUT}" -o "${out_dir}" ${args}
	RESULT_VARIABLE rc
	OUTPUT_VARIABLE report)
if(NOT rc EQUAL 0)
	list(JOIN args " " shown)
	message(FATAL_ERROR "lidiagen failed (${rc}) on ${LIDIAGEN_TARGET}: "
		"${LIDIAGEN_EXECUTABLE} ${LIDIAGEN_INPUT} -o ${out_dir} ${shown}")
endif()

set(written "")
set(no_lines TRUE)
string(LENGTH "${out_dir}/" prefix_len)
string(REGEX MATCHALL "[^\n]+" lines "${report}")
foreach(line IN LISTS lines)
	string(FIND "${line}" " <- " arrow)
	if(arrow LESS 0)
		continue()
	endif()
	string(SUBSTRING "${line}" 0 ${arrow} path)
	# "wrote DIR/KEY", "replaced DIR/KEY", "kept DIR/KEY": the verb goes.
	string(REGEX REPLACE "^[a-z]+ " "" path "${path}")
	string(SUBSTRING "${path}" 0 ${prefix_len} head)
	if(head STREQUAL "${out_dir}/" AND EXISTS "${path}")
		list(APPEND written "${path}")
		if(NOT line MATCHES " 0 line rows\\)")
			set(no_lines FALSE)
		endif()
	endif()
endforeach()
if(written AND no_lines AND NOT args MATCHES "(^|;)(--symbols-only|--no-lines)(;|$)")
	set(config "")
	if(LIDIAGEN_CONFIG)
		set(config " (${LIDIAGEN_CONFIG})")
	endif()
	message("lidiagen: warning: ${LIDIAGEN_TARGET} has no debug information in this configuration${config}: "
		"its symbol file has function names only; compile it with -g (e.g. RelWithDebInfo) for files and lines")
endif()

# The files of the previous run that this one did not write.
get_filename_component(record_dir "${LIDIAGEN_RECORD}" DIRECTORY)
if(EXISTS "${LIDIAGEN_RECORD}")
	file(STRINGS "${LIDIAGEN_RECORD}" previous)
	set(stale "")
	foreach(path IN LISTS previous)
		if(NOT path IN_LIST written)
			list(APPEND stale "${path}")
		endif()
	endforeach()
	if(stale)
		file(GLOB records "${record_dir}/*.keys")
		list(REMOVE_ITEM records "${LIDIAGEN_RECORD}")
		set(others "")
		foreach(r IN LISTS records)
			file(STRINGS "${r}" listed)
			list(APPEND others ${listed})
		endforeach()
		foreach(path IN LISTS stale)
			if(NOT path IN_LIST others)
				file(REMOVE "${path}")
			endif()
		endforeach()
	endif()
endif()

# The record, by temporary file + rename: another target's run may read it.
list(JOIN written "\n" text)
if(written)
	string(APPEND text "\n")
endif()
string(RANDOM LENGTH 8 tag)
file(WRITE "${LIDIAGEN_RECORD}.tmp.${tag}" "${text}")
file(RENAME "${LIDIAGEN_RECORD}.tmp.${tag}" "${LIDIAGEN_RECORD}")
