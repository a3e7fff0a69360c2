#pragma once
// The "cuda" backend: cuBLAS/cuBLASLt and cuDNN on an NVIDIA GPU, timed with CUDA events (docs/cuda.md).
// No CUDA type appears here, so a CPU-only user compiles against it.
//
//   linear            cuBLASLt matmul, bias in the epilogue (algorithm: the fastest of the heuristic's top
//                     candidates, timed at prepare time)
//   matmul            cublasGemmStridedBatchedEx (cublasGemmBatchedEx for irregular batch broadcasting)
//   conv2d            cuDNN, algorithm from cudnnFindConvolutionForwardAlgorithmEx at prepare time; bias,
//                     asymmetric padding by small kernels of ours
//   everything else   small kernels of ours (cuda/src/kernels.cu); views alias device memory
// Data types: fp32 (FMA / SIMT only: TF32 off), tf32 (fp32 storage, TF32 tensor cores), fp16 and bf16
// (tensor cores, fp32 accumulation).

#include <memory>
#include <string>

#include "ridgeline/backend_api/backend.hpp"

namespace ridgeline::cuda {

/// Number of CUDA devices this process can use (CUDA_VISIBLE_DEVICES applies). Never throws: a driver
/// error (no driver, driver older than the runtime, no device) counts as 0 devices and its message is
/// kept for device_count_error(). The answer is computed once per process.
int device_count() noexcept;

/// The start of device_count_error() when the machine has no NVIDIA GPU at all (no NVIDIA kernel driver is
/// loaded, or the driver lists no device), as opposed to a GPU the runtime cannot use.
inline constexpr const char* no_gpu_found = "no NVIDIA GPU found";

/// Why device_count() is 0: "no NVIDIA GPU found (no NVIDIA driver is loaded)" on a machine without one
/// (where the runtime itself would say "CUDA driver version is insufficient for CUDA runtime version"), else
/// the driver's words (a driver older than the runtime); empty when there are devices.
std::string device_count_error();

/// The backend on device `ordinal` (0-based). Throws backend_api::backend_error when the device does not
/// exist or cannot be initialised (the message names the CUDA call and the library's error).
std::unique_ptr<backend_api::backend> make_cuda_backend(int ordinal);

/// "13.0" (CUDA runtime), "9.19.0" (cuDNN), "13.0.2" (cuBLAS) of the libraries loaded; they do not
/// need a device.
std::string runtime_version();
std::string cudnn_version();
std::string cublas_version();

}  // namespace ridgeline::cuda
