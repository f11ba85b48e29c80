# Runs PROGRAM (with the list ARGS as its arguments) and checks its exit code (EXPECT_RC) and that
# its output contains EXPECT_TEXT.
execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc STREQUAL EXPECT_RC)
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}")
endif()
string(FIND "${out}${err}" "${EXPECT_TEXT}" found)
if(found EQUAL -1)
  message(FATAL_ERROR "output lacks '${EXPECT_TEXT}'")
endif()
