# The GPU mutants of the fused kernels (docs/numerics.md, "Proving the check
# can fail"): each is the reference kernel with one deliberate bug, built into
# a test-only copy of the stage driver in the learner's slot, and its test
# requires the stage's own judging to reject it. A mutant names the version
# of M23 it breaks, the file (from the repository root), the text replaced
# (a fixed string that must occur exactly once) and its replacement, and the
# verdict required:
#   judge:R    `--impl learner --tour --milestone 23 --version V` fails, and
#              the failing case's worst err/bound is at least R: 10 where
#              the inputs expose the bug by far, 1 where only the bound's own
#              terms separate the bug from a correct kernel;
#   racecheck  compute-sanitizer's racecheck reports a hazard.
# The mutated copy is written at configure time; a text no longer in its file
# stops the configuration, so a mutant cannot go stale silently.
#
# Targets: stage06_mutant_<name>. Tests: stage06_mutant_<name>, labels
# gpu;mutant;stage06 (skipped without a GPU, or without compute-sanitizer).

# One mutant a line: name|version|file|text|replacement|verdict, where \n in
# the text stands for a newline. (CMake lists split at semicolons: the table
# is read line by line with its semicolons set aside, see below.)
set(stage06_mutants [=[
o_not_rescaled|2|05_tiled_blocks/tiles_2_tensor_cores.cuh|o[i][n][e] *= alpha[i][e / 2];|o[i][n][e] *= 1.0f;|judge:10
pv_in_bf16|2|05_tiled_blocks/tiles_2_tensor_cores.cuh|o[i][n][e] *= alpha[i][e / 2];|o[i][n][e] = __bfloat162float(__float2bfloat16(o[i][n][e] * alpha[i][e / 2]));|judge:1
tail_unmasked|2|06_fused_flash/flash_2_tensor_cores.cuh|if (causal_tile_masked(tiles, t))|if (false)|judge:10
lse_without_max|2|05_tiled_blocks/tiles_2_tensor_cores.cuh|fmaf(scale, m[i][h], logf(l[i][h]))|logf(l[i][h])|judge:10
scale_twice|2|06_fused_flash/flash_2_tensor_cores.cuh|const float c = scale * FA_LOG2E_F;|const float c = scale * scale * FA_LOG2E_F;|judge:10
v1_barrier_dropped|1|06_fused_flash/flash_1_cuda_cores.cuh|__syncthreads(); /* the previous tile's K, V and P are no longer read */|/* barrier dropped */|racecheck
o_barrier_dropped|2|06_fused_flash/flash_2_tensor_cores.cuh|    __syncthreads();\n    constexpr int PER_CHUNK|    constexpr int PER_CHUNK|racecheck
]=])
# What each breaks: o_not_rescaled, O kept at the old max when it rises (M22's
# alpha dropped); pv_in_bf16, O rounded to bf16 after every key tile (P V
# accumulated in bf16); tail_unmasked, the zero-filled keys past nk in the
# last tile take part in the softmax; lse_without_max, lse = ln l; scale_twice,
# the scale applied twice; v1_barrier_dropped, version 1 overwrites the K, V
# and P tiles while other threads may still read the previous ones;
# o_barrier_dropped, threads read O back from shared memory before the other
# threads have staged it. (Version 1's dropped running max is the planted bug
# of tools/check_harness.sh.)

find_program(FA_COMPUTE_SANITIZER compute-sanitizer HINTS ${CUDAToolkit_BIN_DIR})

string(REPLACE ";" "<semicolon>" table "${stage06_mutants}")
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

  # launch.cu over the mutated file (found first), in the learner's slot.
  set(target stage06_mutant_${name})
  add_library(${target}_kernels OBJECT harness/launch.cu)
  target_include_directories(${target}_kernels BEFORE PRIVATE "${dir}")
  target_compile_definitions(${target}_kernels PRIVATE FA_LEARNER_KERNELS=1)
  target_link_libraries(${target}_kernels PRIVATE stage06_cpu fa_common_cuda)
  target_compile_options(${target}_kernels PRIVATE ${FA_CUDA_WARNINGS})
  add_executable(${target} harness/main.c $<TARGET_OBJECTS:${target}_kernels>)
  target_link_libraries(${target} PRIVATE stage06_kernels)
  target_compile_options(${target} PRIVATE ${FA_C_WARNINGS})

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
    fa_add_exit_test(${target} 1 "M23 failed case 'v${version} [^\n]* at \\([^\n]*worst err/bound (${ratio})"
                     $<TARGET_FILE:${target}> --impl learner --tour --milestone 23 --version ${version})
    set_tests_properties(${target} PROPERTIES LABELS "gpu;mutant;stage06" SKIP_REGULAR_EXPRESSION "GPU no ")
  elseif(FA_COMPUTE_SANITIZER)
    fa_add_exit_test(${target} 99 "RACECHECK SUMMARY: [1-9][0-9]* hazard"
                     ${FA_COMPUTE_SANITIZER} --tool racecheck --error-exitcode 99 $<TARGET_FILE:${target}>
                     --impl learner --milestone 23 --version ${version} --quick)
    set_tests_properties(${target} PROPERTIES LABELS "gpu;mutant;stage06"
                         SKIP_REGULAR_EXPRESSION "no usable GPU")
  else()
    add_test(NAME ${target} COMMAND ${CMAKE_COMMAND} -E echo "compute-sanitizer not found: skipped")
    set_tests_properties(${target} PROPERTIES LABELS "gpu;mutant;stage06"
                         SKIP_REGULAR_EXPRESSION "compute-sanitizer not found: skipped")
  endif()
endforeach()
