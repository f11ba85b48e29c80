# The installed package works from anywhere, with the build tree out of the picture:
#   1. install to a prefix other than the configured one (<outside>/staged), then move it
#      (<outside>/moved): nothing may depend on where it was installed;
#   2. no installed file may name the build tree or the first prefix;
#   3. a consumer (tests/install) builds against the moved prefix with find_package(cuwrap),
#      compiles kernels with cuwrap_compile_kernels() and runs them with CUWRAP_DRIVER=software,
#      on the driver the package finds by itself, compiles and runs one with cuwrap::rtc, and
#      calls into cuwrap::runtime (and, when built with MPI, links and runs cuwrap::mpi);
#   4. the build tree is gone when the consumer runs: with FRESH_SOURCE_DIR it was deleted (step
#      0); the ctest variant, which runs inside its own build tree, runs the consumer once more
#      with the build tree and the source tree hidden under empty file systems (a private mount
#      namespace: unshare), so nothing it reads at run time can come from either;
#   5. without the driver, the consumer's error names every place cuwrap looked;
#   6. the build tree is a package too (export()): the consumer builds against it and runs.
# Inputs: BINARY_DIR (a configured, built cuwrap), SOURCE_DIR (its source), CONSUMER_DIR,
# WORK_DIR, CONSUMER_CXX_FLAGS, CONSUMER_LINKER_FLAGS. With FRESH_SOURCE_DIR set, step 0
# configures and builds that source tree in WORK_DIR/build first (FRESH_ARGS: more -D options,
# e.g. -DBUILD_SHARED_LIBS=ON), uses it as BINARY_DIR and deletes it after installing: the build
# tree is then really gone.
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
  set(SOURCE_DIR ${FRESH_SOURCE_DIR})
  separate_arguments(fresh_args UNIX_COMMAND "${FRESH_ARGS}")
  run(${CMAKE_COMMAND} -S ${FRESH_SOURCE_DIR} -B ${BINARY_DIR} -DCUWRAP_BUILD_TESTS=OFF
      -DCUWRAP_BUILD_SAMPLES=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo ${flags} ${fresh_args})
  run(${CMAKE_COMMAND} --build ${BINARY_DIR} -j 2)
  set(outside ${WORK_DIR})  # the build tree is deleted below: WORK_DIR is outside of it
else()
  # WORK_DIR is inside the build tree, which step 4 hides: the package and the consumer go to a
  # scratch folder of their own (one per build tree, replaced on each run).
  set(temp $ENV{TMPDIR})
  if(NOT temp)
    set(temp /tmp)
  endif()
  string(MD5 tree "${BINARY_DIR}")
  set(outside ${temp}/cuwrap-install-test-${tree})
  file(REMOVE_RECURSE ${outside})
  foreach(tree_dir ${BINARY_DIR} ${SOURCE_DIR})
    cmake_path(IS_PREFIX tree_dir ${outside} NORMALIZE inside)
    if(inside)
      message(FATAL_ERROR "the scratch folder ${outside} is inside ${tree_dir}: set TMPDIR to "
                          "a folder outside the build and source trees")
    endif()
  endforeach()
endif()

# 1. Install, then move the prefix.
set(staged ${outside}/staged)
set(prefix ${outside}/moved)
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
    set(read ${outside}/stripped)
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
file(REMOVE ${outside}/stripped)

# 3. A consumer of the moved prefix runs on the software driver it finds.
set(consumer ${outside}/consumer/consumer)
run(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${outside}/consumer -DCMAKE_PREFIX_PATH=${prefix}
    ${flags})
run(${CMAKE_COMMAND} --build ${outside}/consumer)
run(${CMAKE_COMMAND} -E env CUWRAP_DRIVER=software ${consumer})
if(EXISTS ${consumer}_mpi)  # cuwrap::mpi, when cuwrap and the consumer found MPI
  run(${consumer}_mpi)
endif()

# 4. The same with the build and source trees hidden (the ctest variant; the fresh variant has
#    deleted its build tree). A private mount namespace needs user namespaces: where the system
#    refuses them, say so; .ci/run's fresh variant still runs with the build tree deleted.
if(NOT FRESH_SOURCE_DIR)
  find_program(unshare NAMES unshare)
  set(namespaces 1)
  if(unshare)
    execute_process(COMMAND ${unshare} --user --map-root-user --mount true
                    RESULT_VARIABLE namespaces OUTPUT_QUIET ERROR_QUIET)
  endif()
  if(namespaces EQUAL 0)
    run(${unshare} --user --map-root-user --mount sh -c
        "mount -t tmpfs tmpfs \"$1\" && mount -t tmpfs tmpfs \"$2\" && shift 2 && cd / && exec \"$@\""
        sh ${BINARY_DIR} ${SOURCE_DIR} ${CMAKE_COMMAND} -E env CUWRAP_DRIVER=software
        ${consumer})
    message(STATUS "the consumer ran with ${BINARY_DIR} and ${SOURCE_DIR} hidden")
  else()
    message(WARNING "user namespaces are not available (unshare), so the consumer could not run "
                    "with the build tree hidden here; bash .ci/run installs a fresh build and "
                    "deletes its build tree before running the consumer")
  endif()
endif()

# 5. Without the driver: an error that says where cuwrap looked.
file(GLOB_RECURSE driver ${prefix}/*/cuwrap/swdriver/libcuda.so.1)
file(RENAME ${driver} ${driver}.away)
execute_process(COMMAND ${CMAKE_COMMAND} -E env CUWRAP_DRIVER=software ${consumer}
                RESULT_VARIABLE result ERROR_VARIABLE error)
file(RENAME ${driver}.away ${driver})
string(FIND "${error}" "not in any place cuwrap looked: '${driver}'" named)
if(result EQUAL 0 OR named EQUAL -1)
  message(FATAL_ERROR "without its driver, the consumer should fail naming '${driver}'; it "
                      "returned ${result}: ${error}")
endif()

# 6. The build tree as a package.
if(NOT FRESH_SOURCE_DIR)
  run(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/from-build -Dcuwrap_DIR=${BINARY_DIR}
      ${flags})
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/from-build)
  run(${CMAKE_COMMAND} -E env CUWRAP_DRIVER=software ${WORK_DIR}/from-build/consumer)
  file(REMOVE_RECURSE ${outside})
endif()
