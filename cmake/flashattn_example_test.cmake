# The test stage06_example_build (06_fused_flash/CMakeLists.txt): installs the
# library of a build into a fresh prefix, then configures and builds the
# standalone example (06_fused_flash/example) against that install tree only,
# as another project would. The tests stage06_example and
# stage06_example_static run what it built.
#
#   cmake -DBUILD_DIR=... -DPREFIX=... -DSOURCE=... -DBINARY=... -DGENERATOR=...
#         -DC_COMPILER=... -DCUDA_ROOT=... -DCONFIG=... -P flashattn_example_test.cmake

foreach(var BUILD_DIR PREFIX SOURCE BINARY GENERATOR C_COMPILER CUDA_ROOT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "flashattn_example_test.cmake: -D${var}=... is required")
  endif()
endforeach()
# CONFIG: the main build's configuration (may be empty); the example builds in it.
set(config_option)
set(example_type "${CONFIG}")
if(CONFIG)
  set(config_option --config "${CONFIG}")
else()
  set(example_type Release)
endif()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "flashattn example: ${what} failed (${result})")
  endif()
endfunction()

# Nothing of an earlier run may stand in for this one.
file(REMOVE_RECURSE "${PREFIX}" "${BINARY}")

run("cmake --install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${PREFIX}"
    --component flashattn ${config_option})
run("configuring the example" ${CMAKE_COMMAND} -S "${SOURCE}" -B "${BINARY}" -G "${GENERATOR}"
    "-DCMAKE_BUILD_TYPE=${example_type}" "-DCMAKE_C_COMPILER=${C_COMPILER}"
    "-DCMAKE_PREFIX_PATH=${PREFIX}" "-DCUDAToolkit_ROOT=${CUDA_ROOT}"
    -DCMAKE_COMPILE_WARNING_AS_ERROR=ON)

# find_package must have found the install tree, not some other copy.
file(STRINGS "${BINARY}/CMakeCache.txt" found REGEX "^flashattn_DIR:")
string(REGEX REPLACE "^flashattn_DIR:[A-Z]*=" "" found "${found}")
file(REAL_PATH "${PREFIX}" prefix_real)
file(REAL_PATH "${found}" found_real)
string(FIND "${found_real}/" "${prefix_real}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "flashattn example: find_package(flashattn) found ${found}, not the "
                      "install tree ${PREFIX}")
endif()

run("building the example" ${CMAKE_COMMAND} --build "${BINARY}" --config "${example_type}")
message(STATUS "flashattn example: built against ${found}")
