# Builds the docs: the numerics tables first (the page includes what the
# mutation suite measures), then Doxygen, whose warnings are errors.
# Run as `cmake -DDOXYFILE=... -DOUT=... -DTABLES=<test_numerics> -P build_docs.cmake`.
#
# doxygen and the local MathJax are looked up here, when the docs are built,
# not when the project is configured: installing either later needs no
# reconfigure. Without doxygen this fails with the line "docs: doxygen not
# found ...", which the docs test reports as skipped.
find_program(DOXYGEN_EXECUTABLE NAMES doxygen)
if(NOT DOXYGEN_EXECUTABLE)
  message(FATAL_ERROR "docs: doxygen not found on PATH; install Doxygen (apt-get install doxygen)")
endif()

# Doxygen rewrites every page: start from an empty html/, so no page of a
# stage that left FA_STAGES stays behind. The MathJax link goes first, as a
# link (its target is never touched).
if(IS_SYMLINK "${OUT}/html/mathjax")
  file(REMOVE "${OUT}/html/mathjax")
endif()
file(REMOVE_RECURSE "${OUT}/html")
file(MAKE_DIRECTORY "${OUT}/html")

# The tables of the numerics page, written afresh: a stale file from an
# earlier build must not stand in for a run that wrote none.
file(REMOVE "${OUT}/numerics_tables.md")
execute_process(COMMAND "${TABLES}" --tables "${OUT}/numerics_tables.md"
                OUTPUT_QUIET RESULT_VARIABLE tables_result)
if(NOT EXISTS "${OUT}/numerics_tables.md")
  message(FATAL_ERROR "test_numerics --tables did not write ${OUT}/numerics_tables.md (exit ${tables_result})")
endif()

# MathJax: a local copy when one is installed (Debian: libjs-mathjax), reached
# from the pages through the link html/mathjax, so they render from file://
# and offline; else the CDN the Doxyfile names.
set(run_config "@INCLUDE = \"${DOXYFILE}\"\n")
find_path(MATHJAX_DIR MathJax.js PATHS /usr/share/javascript/mathjax NO_DEFAULT_PATH)
if(MATHJAX_DIR)
  file(CREATE_LINK "${MATHJAX_DIR}" "${OUT}/html/mathjax" SYMBOLIC)
  string(APPEND run_config "MATHJAX_RELPATH = mathjax\n")
  set(mathjax "${MATHJAX_DIR}")
else()
  set(mathjax "the CDN")
endif()
file(WRITE "${OUT}/Doxyfile.run" "${run_config}")

message(STATUS "docs: ${DOXYGEN_EXECUTABLE}, MathJax from ${mathjax}")
execute_process(COMMAND "${DOXYGEN_EXECUTABLE}" "${OUT}/Doxyfile.run" WORKING_DIRECTORY "${OUT}"
                RESULT_VARIABLE doxygen_result)
if(NOT doxygen_result EQUAL 0)
  message(FATAL_ERROR "Doxygen failed (warnings are errors): exit ${doxygen_result}")
endif()
message(STATUS "docs: ${OUT}/html/index.html")
