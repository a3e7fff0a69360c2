# Decides whether this build has the CUDA backend (cuda/) and sets RIDGELINE_HAVE_CUDA to 0 or 1.
# Included from the top-level CMakeLists.txt, so enable_language(CUDA) happens in the top directory, the
# one common to every target that links the backend's kernels (CMake's rule for enable_language).
#
# RIDGELINE_CUDA: AUTO builds the backend when the CUDA toolkit (cudart, cuBLAS, cuBLASLt, nvcc) and cuDNN
# are found; ON makes their absence an error; OFF never looks for them.
# CMAKE_CUDA_ARCHITECTURES defaults to "80;90" (A100, H100/H200); pass -DCMAKE_CUDA_ARCHITECTURES=89 for
# an L4 or RTX 4090, "native" for the GPU of the building machine.

set(RIDGELINE_HAVE_CUDA 0)
set(RIDGELINE_CUDA_STATUS "off (RIDGELINE_CUDA=OFF)")
if(NOT RIDGELINE_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit)
  find_package(CUDNN)
  set(_ridgeline_cuda_missing "")
  if(NOT CUDAToolkit_FOUND)
    list(APPEND _ridgeline_cuda_missing "the CUDA toolkit")
  else()
    foreach(_t cudart cublas cublasLt)
      if(NOT TARGET CUDA::${_t})
        list(APPEND _ridgeline_cuda_missing "CUDA::${_t}")
      endif()
    endforeach()
  endif()
  if(NOT CUDNN_FOUND)
    list(APPEND _ridgeline_cuda_missing "cuDNN (set CUDNN_ROOT)")
  endif()
  if(NOT _ridgeline_cuda_missing)
    # nvcc: the toolkit's own when none was chosen (it need not be on PATH)
    if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS "${CUDAToolkit_NVCC_EXECUTABLE}")
      set(CMAKE_CUDA_COMPILER "${CUDAToolkit_NVCC_EXECUTABLE}")
    endif()
    include(CheckLanguage)
    check_language(CUDA)
    if(NOT CMAKE_CUDA_COMPILER)
      list(APPEND _ridgeline_cuda_missing "nvcc")
    endif()
  endif()
  if(_ridgeline_cuda_missing)
    string(REPLACE ";" ", " _ridgeline_cuda_missing "${_ridgeline_cuda_missing}")
    if(RIDGELINE_CUDA STREQUAL "ON")
      message(FATAL_ERROR "RIDGELINE_CUDA=ON but not found: ${_ridgeline_cuda_missing}")
    endif()
    set(RIDGELINE_CUDA_STATUS "off (not found: ${_ridgeline_cuda_missing})")
  else()
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "GPU architectures of the CUDA kernels")
    endif()
    # one CUDA runtime in the process: the shared libcudart that cuBLAS and cuDNN use too
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
    enable_language(CUDA)
    # kernels.cu needs C++17 only (CMake 3.25 knows no C++20 flag for nvcc); set after enable_language so
    # that the compiler checks run without it
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(RIDGELINE_HAVE_CUDA 1)
    set(RIDGELINE_CUDA_STATUS
        "on (CUDA ${CUDAToolkit_VERSION}, cuDNN ${CUDNN_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
  endif()
  unset(_ridgeline_cuda_missing)
endif()
message(STATUS "ridgeline CUDA backend: ${RIDGELINE_CUDA_STATUS}")
