# Install rules and the package config, so find_package(cuwrap) works from a prefix.
include(CMakePackageConfigHelpers)

install(TARGETS cuwrap EXPORT cuwrapTargets)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/cuwrap DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT cuwrapTargets NAMESPACE cuwrap:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cuwrap)

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/cuwrapConfig.cmake.in ${PROJECT_BINARY_DIR}/cuwrapConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cuwrap)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cuwrapConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cuwrapConfig.cmake
              ${PROJECT_BINARY_DIR}/cuwrapConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cuwrap)
