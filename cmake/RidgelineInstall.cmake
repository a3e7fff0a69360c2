# `cmake --install`: the public headers, the static libraries, the `ridgeline` binary, and a CMake package
# (ridgelineConfig.cmake, its version file, the exported targets and the find modules they need), so that a
# C++ user writes
#   find_package(ridgeline 0.2 CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE ridgeline::profiler)
# docs/library.md names the targets; examples/profile_linear is a consumer built against an install by a test.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_ridgeline_libraries core backend_api cpu_reference cpu profiler report io)
if(RIDGELINE_HAVE_CUDA)
  list(APPEND _ridgeline_libraries cuda)
endif()
set(_ridgeline_targets "")
foreach(_lib IN LISTS _ridgeline_libraries)
  set_target_properties(ridgeline_${_lib} PROPERTIES EXPORT_NAME ${_lib})
  list(APPEND _ridgeline_targets ridgeline_${_lib})
  # every module's public headers live in <module>/include/ridgeline/...
endforeach()
install(TARGETS ${_ridgeline_targets} EXPORT ridgelineTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ridgeline RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(_dir core backend_api cpu profiler report io)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
if(RIDGELINE_HAVE_CUDA)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/cuda/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
install(FILES ${CMAKE_BINARY_DIR}/generated/ridgeline/config.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ridgeline)

set(_ridgeline_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ridgeline)
install(EXPORT ridgelineTargets NAMESPACE ridgeline:: DESTINATION ${_ridgeline_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ridgelineConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/ridgelineConfig.cmake INSTALL_DESTINATION ${_ridgeline_cmake_dir})
# 0.x: a minor version may change the API, so only the same minor version is compatible
write_basic_package_version_file(${CMAKE_BINARY_DIR}/ridgelineConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/ridgelineConfig.cmake ${CMAKE_BINARY_DIR}/ridgelineConfigVersion.cmake
        DESTINATION ${_ridgeline_cmake_dir})
if(RIDGELINE_HAVE_CUDA)
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/FindCUDNN.cmake DESTINATION ${_ridgeline_cmake_dir})
endif()
unset(_ridgeline_libraries)
unset(_ridgeline_targets)
