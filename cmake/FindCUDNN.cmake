# FindCUDNN: NVIDIA cuDNN (https://developer.nvidia.com/cudnn), header and library.
#
# Looks in CUDNN_ROOT / $ENV{CUDNN_ROOT} / $ENV{CUDNN_PATH}, then in the pip wheel's folder (nvidia-cudnn-cu12/-cu13,
# what PyTorch installs: site-packages/nvidia/cudnn/{include,lib}, found by asking python3 where `nvidia.cudnn` is,
# RIDGELINE_PYTHON or the first python3 on PATH), then next to the CUDA toolkit (CUDAToolkit_INCLUDE_DIRS /
# CUDAToolkit_LIBRARY_DIR when find_package(CUDAToolkit) ran first), then the usual system places (Debian/Ubuntu's
# libcudnn9-dev-cuda-* put the header in /usr/include and the library in /usr/lib/x86_64-linux-gnu). The library is
# libcudnn.so or, where only the runtime is installed (the wheel has no unversioned name), libcudnn.so.9.
#
# Result variables:
#   CUDNN_FOUND, CUDNN_INCLUDE_DIR, CUDNN_LIBRARY, CUDNN_VERSION ("9.19.0", from cudnn_version.h),
#   CUDNN_VERSION_MAJOR, CUDNN_VERSION_MINOR, CUDNN_VERSION_PATCH, CUDNN_WHEEL_DIR (the wheel's folder, where
#   python3 has one; its lib/ must be on LD_LIBRARY_PATH when the program runs)
# Imported target:
#   CUDNN::cudnn  (the cuDNN 9 shim library libcudnn.so, which loads its sub-libraries at run time)

set(_cudnn_hints ${CUDNN_ROOT} $ENV{CUDNN_ROOT} $ENV{CUDNN_PATH})
# the pip wheel: nvidia.cudnn is a namespace package in some wheels (no __file__), so its __path__
if(NOT DEFINED CUDNN_WHEEL_DIR)
  find_program(_cudnn_python NAMES ${RIDGELINE_PYTHON} python3)
  set(CUDNN_WHEEL_DIR "")
  if(_cudnn_python)
    execute_process(
      COMMAND "${_cudnn_python}" -c "import nvidia.cudnn as m; print(list(m.__path__)[0])"
      OUTPUT_VARIABLE _cudnn_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _cudnn_rc TIMEOUT 30)
    if(_cudnn_rc EQUAL 0 AND IS_DIRECTORY "${_cudnn_wheel}/lib")
      set(CUDNN_WHEEL_DIR "${_cudnn_wheel}")
    endif()
  endif()
  set(CUDNN_WHEEL_DIR "${CUDNN_WHEEL_DIR}" CACHE PATH "cuDNN's pip wheel folder (nvidia/cudnn), empty where python3 has none")
  unset(_cudnn_python CACHE)
endif()
if(CUDNN_WHEEL_DIR)
  list(APPEND _cudnn_hints "${CUDNN_WHEEL_DIR}")
endif()
if(CUDAToolkit_INCLUDE_DIRS)
  list(APPEND _cudnn_include_hints ${CUDAToolkit_INCLUDE_DIRS})
endif()
if(CUDAToolkit_LIBRARY_DIR)
  list(APPEND _cudnn_library_hints ${CUDAToolkit_LIBRARY_DIR})
endif()

find_path(CUDNN_INCLUDE_DIR cudnn_version.h
  HINTS ${_cudnn_hints} ${_cudnn_include_hints}
  PATH_SUFFIXES include include/x86_64-linux-gnu
  PATHS /usr/local/cuda)
find_library(CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 NAMES_PER_DIR
  HINTS ${_cudnn_hints} ${_cudnn_library_hints}
  PATH_SUFFIXES lib64 lib lib/x64 lib/x86_64-linux-gnu
  PATHS /usr/local/cuda)

if(CUDNN_INCLUDE_DIR AND EXISTS "${CUDNN_INCLUDE_DIR}/cudnn_version.h")
  file(STRINGS "${CUDNN_INCLUDE_DIR}/cudnn_version.h" _cudnn_version_lines REGEX "^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) +[0-9]+")
  foreach(_part MAJOR MINOR PATCHLEVEL)
    string(REGEX MATCH "CUDNN_${_part} +([0-9]+)" _match "${_cudnn_version_lines}")
    set(_cudnn_${_part} "${CMAKE_MATCH_1}")
  endforeach()
  set(CUDNN_VERSION_MAJOR "${_cudnn_MAJOR}")
  set(CUDNN_VERSION_MINOR "${_cudnn_MINOR}")
  set(CUDNN_VERSION_PATCH "${_cudnn_PATCHLEVEL}")
  set(CUDNN_VERSION "${_cudnn_MAJOR}.${_cudnn_MINOR}.${_cudnn_PATCHLEVEL}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CUDNN
  REQUIRED_VARS CUDNN_LIBRARY CUDNN_INCLUDE_DIR
  VERSION_VAR CUDNN_VERSION)

if(CUDNN_FOUND AND NOT CUDNN_FIND_QUIETLY)
  message(STATUS "cuDNN ${CUDNN_VERSION}: ${CUDNN_LIBRARY} (headers in ${CUDNN_INCLUDE_DIR})")
endif()
if(CUDNN_FOUND AND NOT TARGET CUDNN::cudnn)
  add_library(CUDNN::cudnn UNKNOWN IMPORTED)
  set_target_properties(CUDNN::cudnn PROPERTIES
    IMPORTED_LOCATION "${CUDNN_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CUDNN_INCLUDE_DIR}")
endif()

mark_as_advanced(CUDNN_INCLUDE_DIR CUDNN_LIBRARY)
unset(_cudnn_hints)
unset(_cudnn_include_hints)
unset(_cudnn_library_hints)
