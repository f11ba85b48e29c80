# Configures tests/subdirectory (cuwrap through add_subdirectory) in a scratch folder, builds it
# and runs it on the software driver DRIVER. Inputs: SOURCE_DIR, CONSUMER_DIR, WORK_DIR, DRIVER,
# CONSUMER_CXX_FLAGS, CONSUMER_LINKER_FLAGS.
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "failed (${result}): ${ARGV}")
  endif()
endfunction()
run(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR} -DCUWRAP_SOURCE_DIR=${SOURCE_DIR}
    "-DCMAKE_CXX_FLAGS=${CONSUMER_CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_LINKER_FLAGS}")
run(${CMAKE_COMMAND} --build ${WORK_DIR} --target consumer)
run(${CMAKE_COMMAND} -E env CUWRAP_DRIVER=${DRIVER} ${WORK_DIR}/consumer)
