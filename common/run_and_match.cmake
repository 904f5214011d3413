# Runs COMMAND (its arguments joined by ^) and requires the exit code
# EXPECT_EXIT and output (stdout and stderr) matching EXPECT_REGEX. CTest alone
# cannot ask for both: a pass regex ignores the exit code, and WILL_FAIL
# accepts any non-zero one.
string(REPLACE "^" ";" command "${COMMAND}")
execute_process(COMMAND ${command} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT "${code}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "exit code ${code}, expected ${EXPECT_EXIT}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match '${EXPECT_REGEX}'")
endif()
