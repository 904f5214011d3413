# fa_add_stage: one call per stage directory.
#
#   fa_add_stage(NUMBER 01
#                MILESTONES 1 2 3 4 5                    # its milestones (one learner test each)
#                KERNELS primitives.cu                   # the reference kernel files; the learner's
#                                                        # twins are learner/<same name>
#                LEARNER_C validate.c                    # host C the learner writes too: the stage's
#                                                        # file is the reference (in stageNN_cpu), the
#                                                        # learner's twin is built with FA_LEARNER_KERNELS
#                USES 02_matrix 04_online_softmax        # earlier stages whose headers it includes
#                CPU_SOURCES harness/model.c ...         # plain C: models, fixtures, validation
#                CHECK_SOURCES harness/checks.c harness/bench.c   # GPU checks and the benchmark
#                DRIVER harness/main.c
#                TEST harness/test_stage01.c)
#
# One launch code: harness/launch.cu holds the launchers and #includes the
# kernel files by name. It is compiled twice: stageNN_reference sees the
# stage directory (the reference kernels), stageNN_learner sees
# ${FA_LEARNER_DIR}/NN_stage/learner first (the learner's kernels) and is
# built with FA_LEARNER_KERNELS=1, which names its launchers learner_* instead
# of ref_* (common/fa_launch.cuh).
#
# Targets: stageNN_cpu (library, always), stageNN_kernels (library, CUDA),
# stageNN (the driver, CUDA), test_stageNN (the tests), stageNN_ptx (the
# reference kernels as PTX, in the stage's build folder), stageNN_sass (their
# machine code, where cuobjdump exists). -DFA_PTXAS_VERBOSE=ON prints every
# kernel's registers, shared memory and spills while building.
# Tests and labels:
#   stageNN_cpu           test_stageNN cpu                       cpu;stageNN
#   stageNN_bad_flag      stageNN --milestone 99: exit code 2    cpu;stageNN (the driver)
#   stageNN_gpu           test_stageNN gpu                       gpu;reference;stageNN
#   stageNN_M<k>_learner  stageNN --impl learner --milestone k   gpu;learner;stageNN
#   stageNN_bench         stageNN --bench                        gpu;bench;stageNN
# A GPU test exits 77 (skipped) only when no GPU is there; a broken one fails.

option(FA_PTXAS_VERBOSE "Print ptxas resource usage (registers, shared memory, spills) of every kernel" OFF)

find_program(FA_CUOBJDUMP cuobjdump HINTS ${CUDAToolkit_BIN_DIR})

# A test that runs a program and requires an exact exit code and a match.
function(fa_add_exit_test name expected_exit regex)
  list(JOIN ARGN "^" joined)
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -DCOMMAND=${joined} -DEXPECT_EXIT=${expected_exit}
           "-DEXPECT_REGEX=${regex}" -P ${PROJECT_SOURCE_DIR}/common/run_and_match.cmake)
endfunction()

function(fa_add_stage)
  cmake_parse_arguments(ST "" "NUMBER"
      "MILESTONES;KERNELS;LEARNER_C;USES;CPU_SOURCES;CHECK_SOURCES;DRIVER;TEST" ${ARGN})
  set(stage stage${ST_NUMBER})
  set(stage_source ${CMAKE_CURRENT_SOURCE_DIR})
  get_filename_component(stage_dir "${stage_source}" NAME)

  add_library(${stage}_cpu STATIC ${ST_CPU_SOURCES} ${ST_LEARNER_C})
  target_include_directories(${stage}_cpu PUBLIC ${stage_source} ${stage_source}/harness)
  foreach(used IN LISTS ST_USES)
    target_include_directories(${stage}_cpu PUBLIC ${PROJECT_SOURCE_DIR}/${used})
  endforeach()
  target_link_libraries(${stage}_cpu PUBLIC fa_common)
  target_compile_options(${stage}_cpu PRIVATE ${FA_C_WARNINGS})

  add_executable(test_${stage} ${ST_TEST})
  target_link_libraries(test_${stage} PRIVATE ${stage}_cpu)
  target_compile_options(test_${stage} PRIVATE ${FA_C_WARNINGS})
  add_test(NAME ${stage}_cpu COMMAND test_${stage} cpu)
  set_tests_properties(${stage}_cpu PROPERTIES LABELS "cpu;${stage}")

  if(NOT FA_HAVE_CUDA)
    add_custom_target(${stage}
        COMMAND ${CMAKE_COMMAND} -E echo "${stage}: no CUDA toolkit, only the CPU parts (test_${stage}) were built"
        DEPENDS test_${stage} VERBATIM)
    return()
  endif()

  set(learner_dir "${FA_LEARNER_DIR}/${stage_dir}/learner")
  foreach(file IN LISTS ST_KERNELS ST_LEARNER_C)
    if(NOT EXISTS "${learner_dir}/${file}")
      message(FATAL_ERROR "${stage}: learner file ${learner_dir}/${file} not found (FA_LEARNER_DIR=${FA_LEARNER_DIR})")
    endif()
  endforeach()

  set(cuda_options ${FA_CUDA_WARNINGS} -lineinfo)
  if(FA_PTXAS_VERBOSE)
    list(APPEND cuda_options -Xptxas=-v)
  endif()
  foreach(impl reference learner)
    add_library(${stage}_${impl} OBJECT harness/launch.cu)
    target_link_libraries(${stage}_${impl} PRIVATE ${stage}_cpu fa_common_cuda)
    target_compile_options(${stage}_${impl} PRIVATE ${cuda_options})
  endforeach()
  # The learner's folder comes first, so `#include "primitives.cu"` finds the learner's file.
  target_include_directories(${stage}_learner BEFORE PRIVATE ${learner_dir})
  target_compile_definitions(${stage}_learner PRIVATE FA_LEARNER_KERNELS=1)

  # The learner's host C twins: the same code path, named learner_* (fa_launch.h).
  set(learner_c)
  foreach(file IN LISTS ST_LEARNER_C)
    list(APPEND learner_c "${learner_dir}/${file}")
  endforeach()
  set(learner_c_objects)
  if(learner_c)
    add_library(${stage}_learner_c OBJECT ${learner_c})
    target_link_libraries(${stage}_learner_c PRIVATE ${stage}_cpu)
    target_compile_definitions(${stage}_learner_c PRIVATE FA_LEARNER_KERNELS=1)
    target_compile_options(${stage}_learner_c PRIVATE ${FA_C_WARNINGS})
    set(learner_c_objects $<TARGET_OBJECTS:${stage}_learner_c>)
  endif()

  add_library(${stage}_kernels STATIC
      $<TARGET_OBJECTS:${stage}_reference> $<TARGET_OBJECTS:${stage}_learner> ${learner_c_objects}
      ${ST_CHECK_SOURCES})
  target_link_libraries(${stage}_kernels PUBLIC ${stage}_cpu fa_common_cuda)
  target_compile_options(${stage}_kernels PRIVATE $<$<COMPILE_LANGUAGE:C>:${FA_C_WARNINGS}>)

  add_executable(${stage} ${ST_DRIVER})
  target_link_libraries(${stage} PRIVATE ${stage}_kernels)
  target_compile_options(${stage} PRIVATE ${FA_C_WARNINGS})
  add_dependencies(tour ${stage})

  target_link_libraries(test_${stage} PRIVATE ${stage}_kernels)

  # What the compiler made of the reference kernels: PTX for the highest
  # architecture of the build, and SASS where cuobjdump exists.
  set(ptx_arch "")
  foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
    string(REGEX MATCH "^[0-9]+" number "${arch}")
    if(number AND (ptx_arch STREQUAL "" OR number GREATER ptx_arch))
      set(ptx_arch ${number})
    endif()
  endforeach()
  if(ptx_arch STREQUAL "")
    set(ptx_arch ${CMAKE_CUDA_ARCHITECTURES}) # native
  endif()
  add_library(${stage}_ptx_objects OBJECT EXCLUDE_FROM_ALL harness/launch.cu)
  target_link_libraries(${stage}_ptx_objects PRIVATE ${stage}_cpu fa_common_cuda)
  set_target_properties(${stage}_ptx_objects PROPERTIES CUDA_PTX_COMPILATION ON
                        CUDA_ARCHITECTURES ${ptx_arch})
  set(ptx_file ${CMAKE_CURRENT_BINARY_DIR}/${stage}.ptx)
  add_custom_target(${stage}_ptx
      COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_OBJECTS:${stage}_ptx_objects> ${ptx_file}
      COMMAND ${CMAKE_COMMAND} -E echo "PTX of the ${stage} reference kernels (${ptx_arch}): ${ptx_file}"
      DEPENDS ${stage}_ptx_objects VERBATIM)
  if(FA_CUOBJDUMP)
    set(sass_file ${CMAKE_CURRENT_BINARY_DIR}/${stage}.sass)
    add_custom_target(${stage}_sass
        COMMAND ${FA_CUOBJDUMP} -sass $<TARGET_OBJECTS:${stage}_reference> > ${sass_file}
        COMMAND ${CMAKE_COMMAND} -E echo "SASS of the ${stage} reference kernels: ${sass_file}"
        DEPENDS ${stage}_reference VERBATIM)
  endif()

  fa_add_exit_test(${stage}_bad_flag 2 "--milestone 99 is out of range" $<TARGET_FILE:${stage}> --milestone 99)
  set_tests_properties(${stage}_bad_flag PROPERTIES LABELS "cpu;${stage}")
  add_test(NAME ${stage}_gpu COMMAND test_${stage} gpu)
  set_tests_properties(${stage}_gpu PROPERTIES LABELS "gpu;reference;${stage}" SKIP_RETURN_CODE 77)
  foreach(milestone IN LISTS ST_MILESTONES)
    add_test(NAME ${stage}_M${milestone}_learner
             COMMAND ${stage} --impl learner --milestone ${milestone})
    set_tests_properties(${stage}_M${milestone}_learner PROPERTIES
        LABELS "gpu;learner;${stage}" SKIP_RETURN_CODE 77)
  endforeach()
  add_test(NAME ${stage}_bench COMMAND ${stage} --bench)
  set_tests_properties(${stage}_bench PROPERTIES LABELS "gpu;bench;${stage}" SKIP_RETURN_CODE 77)
endfunction()
