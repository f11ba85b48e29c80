# The installed package works from anywhere, with the build tree out of the picture:
#   1. install to a prefix other than the configured one (WORK_DIR/staged), then move it
#      (WORK_DIR/moved): nothing may depend on where it was installed;
#   2. no installed file may name the build tree or the first prefix;
#   3. a consumer (tests/install) builds against the moved prefix with find_package(cuwrap),
#      compiles kernels with cuwrap_compile_kernels() and runs them with CUWRAP_DRIVER=software,
#      on the driver the package finds by itself;
#   4. without the driver, the consumer's error names every place cuwrap looked;
#   5. the build tree is a package too (export()): the consumer builds against it and runs.
# Inputs: BINARY_DIR (a configured, built cuwrap), CONSUMER_DIR, WORK_DIR, CONSUMER_CXX_FLAGS,
# CONSUMER_LINKER_FLAGS. With FRESH_SOURCE_DIR set, step 0 configures and builds that source
# tree in WORK_DIR/build first (FRESH_ARGS: more -D options, e.g. -DBUILD_SHARED_LIBS=ON), uses
# it as BINARY_DIR and deletes it after installing: the build tree is then really gone.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "failed (${result}): ${ARGV}")
  endif()
endfunction()
set(flags "-DCMAKE_CXX_FLAGS=${CONSUMER_CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_LINKER_FLAGS}"
          "-DCMAKE_SHARED_LINKER_FLAGS=${CONSUMER_LINKER_FLAGS}")

if(FRESH_SOURCE_DIR)
  set(BINARY_DIR ${WORK_DIR}/build)
  separate_arguments(fresh_args UNIX_COMMAND "${FRESH_ARGS}")
  run(${CMAKE_COMMAND} -S ${FRESH_SOURCE_DIR} -B ${BINARY_DIR} -DCUWRAP_BUILD_TESTS=OFF
      -DCUWRAP_BUILD_SAMPLES=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo ${flags} ${fresh_args})
  run(${CMAKE_COMMAND} --build ${BINARY_DIR} -j 2)
endif()

# 1. Install, then move the prefix.
set(staged ${WORK_DIR}/staged)
set(prefix ${WORK_DIR}/moved)
run(${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${staged})
file(RENAME ${staged} ${prefix})
if(FRESH_SOURCE_DIR)
  file(REMOVE_RECURSE ${BINARY_DIR})
endif()

# 2. No installed file names the build tree or the prefix it was installed to (debug info may:
#    binaries are checked without it).
find_program(objcopy NAMES objcopy REQUIRED)
file(GLOB_RECURSE installed LIST_DIRECTORIES false ${prefix}/*)
foreach(file ${installed})
  set(read ${file})
  if(file MATCHES "\\.(a|so)(\\.[0-9]+)*$")
    set(read ${WORK_DIR}/stripped)
    run(${objcopy} --strip-debug ${file} ${read})
  endif()
  file(STRINGS ${read} lines)
  foreach(path ${BINARY_DIR} ${staged})
    string(FIND "${lines}" "${path}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${file} names '${path}', which need not exist where it is used")
    endif()
  endforeach()
endforeach()
file(REMOVE ${WORK_DIR}/stripped)

# 3. A consumer of the moved prefix runs on the software driver it finds.
run(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer -DCMAKE_PREFIX_PATH=${prefix}
    ${flags})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
run(${CMAKE_COMMAND} -E env CUWRAP_DRIVER=software ${WORK_DIR}/consumer/consumer)

# 4. Without the driver: an error that says where cuwrap looked.
file(GLOB_RECURSE driver ${prefix}/*/cuwrap/swdriver/libcuda.so.1)
file(RENAME ${driver} ${driver}.away)
execute_process(COMMAND ${CMAKE_COMMAND} -E env CUWRAP_DRIVER=software ${WORK_DIR}/consumer/consumer
                RESULT_VARIABLE result ERROR_VARIABLE error)
file(RENAME ${driver}.away ${driver})
string(FIND "${error}" "not in any place cuwrap looked: '${driver}'" named)
if(result EQUAL 0 OR named EQUAL -1)
  message(FATAL_ERROR "without its driver, the consumer should fail naming '${driver}'; it "
                      "returned ${result}: ${error}")
endif()

# 5. The build tree as a package.
if(NOT FRESH_SOURCE_DIR)
  run(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/from-build -Dcuwrap_DIR=${BINARY_DIR}
      ${flags})
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/from-build)
  run(${CMAKE_COMMAND} -E env CUWRAP_DRIVER=software ${WORK_DIR}/from-build/consumer)
endif()
