# fa_add_mutants: the GPU mutants of a stage (docs/numerics.md, "Proving the
# check can fail"): each is a reference kernel file with one deliberate bug,
# built into a test-only copy of the stage driver in the learner's slot (or,
# for the library's own version, in the library's place: below), and its
# test requires the stage's own judging to reject it.
#
#   fa_add_mutants(NUMBER 06 MILESTONE 23 TABLE stage06_mutants)
#
# TABLE names the variable that holds the table (a name: the table's
# semicolons would split it as an argument).
#
#   fa_add_mutants(NUMBER 06 MILESTONE 23 TABLE stage06_library_mutants
#                  LIBRARY_VERSION 3 LIBRARY_TARGET flashattn_hopper)
#
# A version with no learner slot (LIBRARY_VERSION, the library's alone) is
# built by the OBJECT library LIBRARY_TARGET from one source: its mutants
# compile that source again over the mutated file (or the mutated source
# itself), for the same architectures, into the copy of the driver, whose
# own objects then define every symbol of LIBRARY_TARGET's, so the linker
# leaves the stage archive's copy out; the test runs the reference.
#
# One mutant a line of the table: name|version|file|text|replacement|verdict,
# where version is the milestone's version the bug is in (0: it has one),
# file is from the repository root, text is a fixed string that must occur
# exactly once in it (\n stands for a newline), and the verdict is
#   judge:R    `--impl learner --tour --milestone M [--version V]` fails (a
#              library version's: `--impl reference --milestone M --version
#              V`, whose own line names the failing case), and
#              the failing case's worst err/bound is at least R: 10 where
#              the inputs expose the bug by far, 1 where only the bound's own
#              terms separate the bug from a correct kernel;
#   fails      the same run fails at a case of the version, whatever the
#              failure says: for a bug that some cases show as wrong values
#              and others as bytes written outside o's elements (its gaps,
#              the canaries past it);
#   racecheck  compute-sanitizer's racecheck reports a hazard.
# The mutated copy is written at configure time; a text no longer in its file
# stops the configuration, so a mutant cannot go stale silently. (CMake lists
# split at semicolons: the table is read line by line with its semicolons set
# aside.)
#
# Targets: stageNN_mutant_<name>. Tests: stageNN_mutant_<name>, labels
# gpu;mutant;stageNN (skipped without a GPU, without compute-sanitizer, or
# where the device does not run the version: "(v3 runs on 9.0)").

find_program(FA_COMPUTE_SANITIZER compute-sanitizer HINTS ${CUDAToolkit_BIN_DIR})

function(fa_add_mutants)
  cmake_parse_arguments(MU "" "NUMBER;MILESTONE;TABLE;LIBRARY_VERSION;LIBRARY_TARGET" "" ${ARGN})
  set(stage stage${MU_NUMBER})
  string(REPLACE ";" "<semicolon>" table "${${MU_TABLE}}")
  string(REGEX MATCHALL "[^\n]+" lines "${table}")
  foreach(line IN LISTS lines)
    string(REPLACE "|" ";" fields "${line}")
    list(LENGTH fields count)
    if(NOT count EQUAL 6)
      message(FATAL_ERROR "mutants.cmake: '${line}' has ${count} fields, expected 6 (a | in a text?)")
    endif()
    list(GET fields 0 name)
    list(GET fields 1 version)
    list(GET fields 2 file)
    list(GET fields 3 text)
    list(GET fields 4 replacement)
    list(GET fields 5 verdict)
    foreach(field text replacement)
      string(REPLACE "<semicolon>" ";" ${field} "${${field}}")
      string(REPLACE "\\n" "\n" ${field} "${${field}}")
    endforeach()

    set(source "${PROJECT_SOURCE_DIR}/${file}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${source}")
    file(READ "${source}" content)
    string(FIND "${content}" "${text}" at)
    string(FIND "${content}" "${text}" last_at REVERSE)
    if(at EQUAL -1 OR NOT at EQUAL last_at)
      message(FATAL_ERROR "mutant ${name}: '${text}' is not in ${file} exactly once (mutants.cmake)")
    endif()
    string(LENGTH "${text}" length)
    string(SUBSTRING "${content}" 0 ${at} before)
    math(EXPR after_at "${at} + ${length}")
    string(SUBSTRING "${content}" ${after_at} -1 after)
    get_filename_component(file_name "${file}" NAME)
    # A mutant of one version runs that version alone; its failing case is named 'vN ...'.
    set(select "")
    set(case_prefix "")
    if(NOT version EQUAL 0)
      set(select --version ${version})
      set(case_prefix "v${version} ")
    endif()
    set(dir "${CMAKE_CURRENT_BINARY_DIR}/mutants/${name}")
    # Written only when it changes, so a reconfigure does not rebuild every mutant.
    set(mutated "${before}${replacement}${after}")
    set(old "")
    if(EXISTS "${dir}/${file_name}")
      file(READ "${dir}/${file_name}" old)
    endif()
    if(NOT old STREQUAL mutated)
      file(WRITE "${dir}/${file_name}" "${mutated}")
    endif()

    set(target ${stage}_mutant_${name})
    if(MU_LIBRARY_TARGET AND version EQUAL MU_LIBRARY_VERSION)
      # The library's source beside the mutated file (a quoted #include looks in the
      # including file's folder first), or the mutated source, built as the library builds it.
      get_target_property(library_source ${MU_LIBRARY_TARGET} SOURCES)
      list(LENGTH library_source sources)
      if(NOT sources EQUAL 1 OR IS_ABSOLUTE "${library_source}")
        message(FATAL_ERROR "mutant ${name}: ${MU_LIBRARY_TARGET} must have one source, relative")
      endif()
      get_target_property(library_dir ${MU_LIBRARY_TARGET} SOURCE_DIR)
      get_target_property(library_archs ${MU_LIBRARY_TARGET} CUDA_ARCHITECTURES)
      set(library_source "${library_dir}/${library_source}")
      get_filename_component(library_name "${library_source}" NAME)
      if(NOT library_source STREQUAL source)
        configure_file("${library_source}" "${dir}/${library_name}" COPYONLY)
      endif()
      add_library(${target}_kernels OBJECT "${dir}/${library_name}")
      set_target_properties(${target}_kernels PROPERTIES CUDA_ARCHITECTURES "${library_archs}")
      target_include_directories(${target}_kernels BEFORE PRIVATE "${dir}" "${library_dir}")
      target_include_directories(${target}_kernels PRIVATE
          $<TARGET_PROPERTY:${MU_LIBRARY_TARGET},INCLUDE_DIRECTORIES>)
      target_link_libraries(${target}_kernels PRIVATE fa_common_cuda)
      # The tour runs the learner's slot: the reference's own line names its failing case.
      set(impl reference)
      set(judged --impl reference)
      set(failed_line "M${MU_MILESTONE} [^\n]*reference +FAILED[^\n]*case '")
    else()
      # launch.cu over the mutated file (found first), in the learner's slot.
      add_library(${target}_kernels OBJECT harness/launch.cu)
      target_include_directories(${target}_kernels BEFORE PRIVATE "${dir}")
      target_compile_definitions(${target}_kernels PRIVATE FA_LEARNER_KERNELS=1)
      target_link_libraries(${target}_kernels PRIVATE ${stage}_cpu fa_common_cuda)
      set(impl learner)
      set(judged --impl learner --tour)
      set(failed_line "M${MU_MILESTONE} failed case '")
    endif()
    target_compile_options(${target}_kernels PRIVATE ${FA_CUDA_WARNINGS})
    add_executable(${target} harness/main.c $<TARGET_OBJECTS:${target}_kernels>)
    target_link_libraries(${target} PRIVATE ${stage}_kernels)
    target_compile_options(${target} PRIVATE ${FA_C_WARNINGS})

    if(verdict MATCHES "^judge:(.*)$" OR verdict STREQUAL "fails")
      set(expected "${failed_line}${case_prefix}")
      if(verdict MATCHES "^judge:(.*)$")
        # err/bound printed with %.3g: at least 10 is two digits before the point,
        # an exponent e+, inf, or nan (an output NaN where the reference is finite).
        if(CMAKE_MATCH_1 EQUAL 1)
          set(ratio "[0-9.]+(e[-+][0-9]+)?|inf|nan")
        elseif(CMAKE_MATCH_1 EQUAL 10)
          set(ratio "[1-9][0-9]|[0-9.]+e\\+[0-9]+|inf|nan")
        else()
          message(FATAL_ERROR "mutant ${name}: verdict ${verdict}: the ratio must be 1 or 10")
        endif()
        string(APPEND expected "[^\n]* at \\([^\n]*worst err/bound (${ratio})")
      endif()
      fa_add_exit_test(${target} 1 "${expected}"
                       $<TARGET_FILE:${target}> ${judged} --milestone ${MU_MILESTONE} ${select})
      # A library version may need more than a GPU (version 3: compute capability 9.0).
      set_tests_properties(${target} PROPERTIES LABELS "gpu;mutant;${stage}"
                           SKIP_REGULAR_EXPRESSION "GPU no ;no usable GPU;\\(v[0-9] runs on ")
    elseif(FA_COMPUTE_SANITIZER)
      fa_add_exit_test(${target} 99 "RACECHECK SUMMARY: [1-9][0-9]* hazard"
                       ${FA_COMPUTE_SANITIZER} --tool racecheck --error-exitcode 99 $<TARGET_FILE:${target}>
                       --impl ${impl} --milestone ${MU_MILESTONE} ${select} --quick)
      set_tests_properties(${target} PROPERTIES LABELS "gpu;mutant;${stage}"
                           SKIP_REGULAR_EXPRESSION "no usable GPU;\\(v[0-9] runs on ")
    else()
      add_test(NAME ${target} COMMAND ${CMAKE_COMMAND} -E echo "compute-sanitizer not found: skipped")
      set_tests_properties(${target} PROPERTIES LABELS "gpu;mutant;${stage}"
                           SKIP_REGULAR_EXPRESSION "compute-sanitizer not found: skipped")
    endif()
  endforeach()
endfunction()
