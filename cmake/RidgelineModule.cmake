# ridgeline_module(<name> SOURCES <files>... [PUBLIC <libs>...] [PRIVATE <libs>...] [INCLUDE <dirs>...]):
# the library of one module folder, as every module declares it: the target ridgeline_<name> and its alias
# ridgeline::<name>, the folder's include/ as its public headers (in the build tree and installed) plus any
# further build-tree INCLUDE folders, PUBLIC and PRIVATE linked as given, and the project's warnings (private).
function(ridgeline_module name)
  cmake_parse_arguments(M "" "" "SOURCES;PUBLIC;PRIVATE;INCLUDE" ${ARGN})
  add_library(ridgeline_${name} ${M_SOURCES})
  add_library(ridgeline::${name} ALIAS ridgeline_${name})
  set(build_includes)
  foreach(dir IN LISTS M_INCLUDE)
    list(APPEND build_includes $<BUILD_INTERFACE:${dir}>)
  endforeach()
  target_include_directories(ridgeline_${name} PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
                             ${build_includes} $<INSTALL_INTERFACE:include>)
  target_link_libraries(ridgeline_${name} PUBLIC ${M_PUBLIC} PRIVATE ${M_PRIVATE} $<BUILD_INTERFACE:ridgeline_warnings>)
endfunction()
