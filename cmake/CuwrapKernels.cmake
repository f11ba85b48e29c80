# cuwrap_compile_kernels(<target> <source.cu>...): each source as PTX (compute_90), cubin
# (sm_90) and fatbin (sm_90 SASS + compute_90 PTX), compiled by nvcc at build time into the
# current build folder; <target> builds them all. Nothing here needs a GPU. Installed with the
# package (find_package(cuwrap) includes it); nvcc is needed only when the function is called.
find_program(CUWRAP_NVCC nvcc HINTS ${CUDAToolkit_BIN_DIR})

function(cuwrap_compile_kernels target)
  if(NOT CUWRAP_NVCC)
    message(FATAL_ERROR "cuwrap_compile_kernels(${target}): nvcc not found (looked in "
                        "'${CUDAToolkit_BIN_DIR}' and PATH); set CUWRAP_NVCC to its path")
  endif()
  set(outputs)
  foreach(source ${ARGN})
    get_filename_component(stem ${source} NAME_WE)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/${stem})
    set(flags -std=c++17 -O3)
    add_custom_command(OUTPUT ${out}.ptx COMMAND ${CUWRAP_NVCC} ${flags} -ptx -arch=compute_90
                       ${source} -o ${out}.ptx DEPENDS ${source} VERBATIM)
    add_custom_command(OUTPUT ${out}.cubin COMMAND ${CUWRAP_NVCC} ${flags} -cubin -arch=sm_90
                       ${source} -o ${out}.cubin DEPENDS ${source} VERBATIM)
    add_custom_command(
      OUTPUT ${out}.fatbin
      COMMAND ${CUWRAP_NVCC} ${flags} -fatbin "-gencode=arch=compute_90,code=[sm_90,compute_90]"
              ${source} -o ${out}.fatbin
      DEPENDS ${source} VERBATIM)
    list(APPEND outputs ${out}.ptx ${out}.cubin ${out}.fatbin)
  endforeach()
  add_custom_target(${target} DEPENDS ${outputs})
endfunction()
