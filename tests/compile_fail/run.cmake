# One compile-fail test: SOURCE must compile as it is (the control) and must fail to compile with
# -DCUWRAP_COMPILE_FAIL, with a diagnostic matching the `// expect: <regex>` of its first line.
# The control shows that the failure comes from the guarded line, not from a broken test.
# Inputs: COMPILER, SOURCE, INCLUDE_DIRS (separated by '|').
string(REPLACE "|" ";" include_dirs "${INCLUDE_DIRS}")
set(flags -std=c++20 -fsyntax-only)
foreach(dir IN LISTS include_dirs)
  list(APPEND flags -I${dir})
endforeach()

file(STRINGS "${SOURCE}" first_line LIMIT_COUNT 1)
if(NOT first_line MATCHES "^// expect: (.+)$")
  message(FATAL_ERROR "${SOURCE}: the first line must be '// expect: <regex>'")
endif()
set(expected "${CMAKE_MATCH_1}")

execute_process(COMMAND ${COMPILER} ${flags} ${SOURCE} RESULT_VARIABLE control_result
                ERROR_VARIABLE control_output)
if(NOT control_result EQUAL 0)
  message(FATAL_ERROR "${SOURCE}: the control (without CUWRAP_COMPILE_FAIL) does not compile:\n"
                      "${control_output}")
endif()

execute_process(COMMAND ${COMPILER} ${flags} -DCUWRAP_COMPILE_FAIL ${SOURCE}
                RESULT_VARIABLE result ERROR_VARIABLE output)
if(result EQUAL 0)
  message(FATAL_ERROR "${SOURCE}: compiled with CUWRAP_COMPILE_FAIL; it must not")
endif()
if(NOT output MATCHES "${expected}")
  message(FATAL_ERROR "${SOURCE}: failed to compile, but no diagnostic matches '${expected}':\n"
                      "${output}")
endif()
message(STATUS "${SOURCE}: refused as expected ('${expected}')")
