# fa_add_stage: one call per stage directory.
#
#   fa_add_stage(NUMBER 01
#                KERNELS primitives.cu            # reference kernels and launchers
#                LEARNER primitives.cu            # learner/<file>, looked up under FA_LEARNER_DIR
#                CPU_SOURCES model.c fixtures.c   # CPU model and hand-computable fixtures
#                CHECK_SOURCES checks.c           # GPU checks shared by the driver and the tests
#                DRIVER main.c
#                TEST test_stage01.c)
#
# Targets: stageNN_cpu (library, always), stageNN_kernels (library, CUDA),
# stageNN (the driver, CUDA), test_stageNN (the tests).
# Tests and labels:
#   stageNN_cpu      test_stageNN cpu              cpu;stageNN
#   stageNN_gpu      test_stageNN gpu              gpu;reference;stageNN   (77 = skipped without a GPU)
#   stageNN_learner  stageNN --impl learner        gpu;learner;stageNN
#   stageNN_bench    stageNN --bench               gpu;bench;stageNN
function(fa_add_stage)
  cmake_parse_arguments(ST "" "NUMBER"
      "KERNELS;LEARNER;CPU_SOURCES;CHECK_SOURCES;DRIVER;TEST" ${ARGN})
  set(stage stage${ST_NUMBER})
  get_filename_component(stage_dir "${CMAKE_CURRENT_SOURCE_DIR}" NAME)

  add_library(${stage}_cpu STATIC ${ST_CPU_SOURCES})
  target_include_directories(${stage}_cpu PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
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

  set(learner_sources)
  foreach(file IN LISTS ST_LEARNER)
    set(path "${FA_LEARNER_DIR}/${stage_dir}/learner/${file}")
    if(NOT EXISTS "${path}")
      message(FATAL_ERROR "${stage}: learner file ${path} not found (FA_LEARNER_DIR=${FA_LEARNER_DIR})")
    endif()
    list(APPEND learner_sources "${path}")
  endforeach()

  add_library(${stage}_kernels STATIC ${ST_KERNELS} ${learner_sources} ${ST_CHECK_SOURCES})
  target_include_directories(${stage}_kernels PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${stage}_kernels PUBLIC ${stage}_cpu fa_common_cuda)
  target_compile_options(${stage}_kernels PRIVATE
      $<$<COMPILE_LANGUAGE:C>:${FA_C_WARNINGS}>
      $<$<COMPILE_LANGUAGE:CUDA>:${FA_CUDA_WARNINGS} -lineinfo>)

  add_executable(${stage} ${ST_DRIVER})
  target_link_libraries(${stage} PRIVATE ${stage}_kernels)
  target_compile_options(${stage} PRIVATE ${FA_C_WARNINGS})
  add_dependencies(tour ${stage})

  target_link_libraries(test_${stage} PRIVATE ${stage}_kernels)

  add_test(NAME ${stage}_gpu COMMAND test_${stage} gpu)
  add_test(NAME ${stage}_learner COMMAND ${stage} --impl learner)
  add_test(NAME ${stage}_bench COMMAND ${stage} --bench)
  set_tests_properties(${stage}_gpu PROPERTIES LABELS "gpu;reference;${stage}" SKIP_RETURN_CODE 77)
  set_tests_properties(${stage}_learner PROPERTIES LABELS "gpu;learner;${stage}" SKIP_RETURN_CODE 77)
  set_tests_properties(${stage}_bench PROPERTIES LABELS "gpu;bench;${stage}" SKIP_RETURN_CODE 77)
endfunction()
