# Install rules, the package config, and the build tree's export: find_package(cuwrap) works
# from an install prefix (which may be moved after installing) and from this build tree.
include(CMakePackageConfigHelpers)

set(cuwrap_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/cuwrap)
install(TARGETS cuwrap EXPORT cuwrapTargets)
if(TARGET cuwrap_swcuda)
  install(TARGETS cuwrap_swcuda EXPORT cuwrapTargets)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/cuwrap DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT cuwrapTargets NAMESPACE cuwrap:: DESTINATION ${cuwrap_package_dir})
# The build tree as a package: -Dcuwrap_DIR=<build>.
export(EXPORT cuwrapTargets NAMESPACE cuwrap:: FILE ${PROJECT_BINARY_DIR}/cuwrapTargets.cmake)

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/cuwrapConfig.cmake.in ${PROJECT_BINARY_DIR}/cuwrapConfig.cmake
  INSTALL_DESTINATION ${cuwrap_package_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cuwrapConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
# The config's helpers, next to it in both places.
set(cuwrap_package_helpers ${PROJECT_SOURCE_DIR}/cmake/CuwrapKernels.cmake
                           ${PROJECT_SOURCE_DIR}/cmake/software_driver_location.cpp.in)
foreach(helper ${cuwrap_package_helpers})
  configure_file(${helper} ${PROJECT_BINARY_DIR} COPYONLY)
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/cuwrapConfig.cmake
              ${PROJECT_BINARY_DIR}/cuwrapConfigVersion.cmake ${cuwrap_package_helpers}
        DESTINATION ${cuwrap_package_dir})
