# Finds oneDNN for the "cpu" backend and sets RIDGELINE_HAVE_DNNL to 0 or 1.
#
# RIDGELINE_DNNL: ON (the default) makes a missing oneDNN a configure error that names the Debian package to
# install: a build without it has only the slow reference backend "cpu-ref", which must never happen by
# accident. OFF builds without it on purpose.
#
# Debian 12's libdnnl-dev is built with the OpenCL GPU runtime, and its dnnl-config.cmake calls
# find_package(OpenCL REQUIRED), while the package only recommends the OpenCL headers and loader. Without
# them CMake's own message ("Could NOT find OpenCL") does not say that oneDNN asked for it, or what to
# install; so ridgeline looks for OpenCL first, with CMake's FindOpenCL, and names the package itself.

set(RIDGELINE_DNNL ON CACHE BOOL "Build the oneDNN \"cpu\" backend (Debian: libdnnl-dev ocl-icd-opencl-dev)")
set(RIDGELINE_HAVE_DNNL 0)
if(RIDGELINE_DNNL)
  find_file(RIDGELINE_DNNL_CONFIG NAMES dnnl-config.cmake
            PATH_SUFFIXES lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/dnnl lib/cmake/dnnl lib64/cmake/dnnl
            DOC "oneDNN's CMake package config")
  if(NOT RIDGELINE_DNNL_CONFIG)
    message(FATAL_ERROR "oneDNN was not found: install Debian's libdnnl-dev and ocl-icd-opencl-dev "
                        "(scripts/setup.sh does), or configure with -DRIDGELINE_DNNL=OFF to build without the "
                        "\"cpu\" backend (only the slow reference \"cpu-ref\" remains)")
  endif()
  file(STRINGS "${RIDGELINE_DNNL_CONFIG}" _ridgeline_dnnl_ocl REGEX "DNNL_GPU_RUNTIME \"OCL\"")
  if(_ridgeline_dnnl_ocl)
    find_package(OpenCL QUIET)
    if(NOT OpenCL_FOUND)
      message(FATAL_ERROR "oneDNN's CMake config (${RIDGELINE_DNNL_CONFIG}) needs OpenCL, which was not found: "
                          "install Debian's ocl-icd-opencl-dev (scripts/setup.sh does)")
    endif()
  endif()
  unset(_ridgeline_dnnl_ocl)
  find_package(dnnl CONFIG REQUIRED)
  set(RIDGELINE_HAVE_DNNL 1)
  message(STATUS "ridgeline oneDNN \"cpu\" backend: on (oneDNN ${dnnl_VERSION})")
else()
  message(STATUS "ridgeline oneDNN \"cpu\" backend: off (RIDGELINE_DNNL=OFF): only \"cpu-ref\" is built")
endif()
