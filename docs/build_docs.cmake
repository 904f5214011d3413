# Builds the docs: the numerics tables first (the page includes what the
# mutation suite measures), then Doxygen, whose warnings are errors.
file(MAKE_DIRECTORY "${OUT}/html")
execute_process(COMMAND "${TABLES}" --tables "${OUT}/numerics_tables.md"
                OUTPUT_QUIET RESULT_VARIABLE tables_result)
if(NOT EXISTS "${OUT}/numerics_tables.md")
  message(FATAL_ERROR "test_numerics --tables did not write ${OUT}/numerics_tables.md (exit ${tables_result})")
endif()
if(MATHJAX AND NOT EXISTS "${OUT}/html/mathjax")
  file(CREATE_LINK "${MATHJAX}" "${OUT}/html/mathjax" SYMBOLIC)
endif()
execute_process(COMMAND "${DOXYGEN}" "${DOXYFILE}" WORKING_DIRECTORY "${OUT}"
                RESULT_VARIABLE doxygen_result)
if(NOT doxygen_result EQUAL 0)
  message(FATAL_ERROR "Doxygen failed (warnings are errors): exit ${doxygen_result}")
endif()
message(STATUS "docs: ${OUT}/html/index.html")
