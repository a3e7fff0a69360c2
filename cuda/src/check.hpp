#pragma once
// Checking every CUDA runtime, cuBLAS/cuBLASLt and cuDNN call (house style; nvbench's cuda_call.cuh and
// oneDNN's sycl_cuda_utils.hpp are the models). Three forms:
//
//   RIDGELINE_CUDA_CHECK(call)          throws; the message has the call's text, file and line, and the
//                                       library's own error name and string:
//                                       "cudaMalloc(&p, bytes) failed at cuda/src/resources.cpp:31:
//                                        cudaErrorMemoryAllocation: out of memory"
//   RIDGELINE_CUDA_CHECK_NOTHROW(call)  for destructors: prints that message as a warning on stderr
//   RIDGELINE_CUDA_STATUS(call)         for "can this be done" probes: a call_status with ok() and the
//                                       message, never throws
//
// What is thrown depends on the error: an allocation failure (cudaErrorMemoryAllocation,
// CUBLAS_STATUS_ALLOC_FAILED, cuDNN's *_ALLOCATION_FAILED) is device_bad_alloc (a std::bad_alloc, so
// the Profiler reports the layer "skipped"); cuDNN's NOT_SUPPORTED category and CUBLAS_STATUS_NOT_SUPPORTED
// are backend_api::unsupported; everything else is backend_api::backend_error.

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <new>
#include <string>
#include <string_view>

namespace ridgeline::cuda {

/// A device allocation that failed (out of device memory).
class device_bad_alloc : public std::bad_alloc {
public:
    explicit device_bad_alloc(std::string message) : message_(std::move(message)) {}
    [[nodiscard]] const char* what() const noexcept override { return message_.c_str(); }

private:
    std::string message_;
};

/// What a checked call gave: ok, or the formatted message.
struct call_status {
    bool failed = false;
    std::string message;
    [[nodiscard]] bool ok() const { return !failed; }
};

namespace detail {

/// Which exception an error becomes.
enum class error_kind { failure, unsupported, out_of_memory };

/// One error of one library, in the library's own words.
struct library_error {
    std::string name;    // "cudaErrorMemoryAllocation", "CUBLAS_STATUS_NOT_SUPPORTED", "CUDNN_STATUS_BAD_PARAM"
    std::string text;    // "out of memory"; cuDNN: its last error message when it has one
    error_kind kind = error_kind::failure;
};

library_error describe(cudaError_t e);
library_error describe(cublasStatus_t s);
library_error describe(cudnnStatus_t s);

inline bool failed(cudaError_t e) { return e != cudaSuccess; }
inline bool failed(cublasStatus_t s) { return s != CUBLAS_STATUS_SUCCESS; }
inline bool failed(cudnnStatus_t s) { return s != CUDNN_STATUS_SUCCESS; }

/// "<call> failed at <file>:<line>: <name>: <text>", with `file` shortened to the part from the project's
/// top folder ("cuda/src/x.cpp") when it is an absolute path inside the source tree.
std::string format_call_error(std::string_view call, std::string_view file, int line, const library_error& e);

/// Throws the exception `e` calls for (see the top of this file) with format_call_error's message.
[[noreturn]] void throw_call_error(std::string_view call, std::string_view file, int line, const library_error& e);

/// Prints format_call_error's message to stderr as a warning line.
void warn_call_error(std::string_view call, std::string_view file, int line, const library_error& e) noexcept;

/// A failed runtime call also sets the thread's "last error"; a non-sticky one (an allocation failure,
/// a bad argument) is cleared so that the next launch check does not report it again. Sticky errors
/// (a kernel fault) stay: the context is unusable and every later call says so.
inline void clear_last_error(cudaError_t) noexcept { (void)cudaGetLastError(); }
inline void clear_last_error(cublasStatus_t) noexcept {}
inline void clear_last_error(cudnnStatus_t) noexcept {}

template <class Status>
inline void check(Status s, const char* call, const char* file, int line) {
    if (failed(s)) {
        clear_last_error(s);
        throw_call_error(call, file, line, describe(s));
    }
}

template <class Status>
inline void check_nothrow(Status s, const char* call, const char* file, int line) noexcept {
    if (failed(s)) {
        clear_last_error(s);
        try {
            warn_call_error(call, file, line, describe(s));
        } catch (...) {  // describe() allocates; a destructor must not throw
        }
    }
}

template <class Status>
inline call_status status_of(Status s, const char* call, const char* file, int line) {
    if (!failed(s)) return {};
    clear_last_error(s);
    return {true, format_call_error(call, file, line, describe(s))};
}

}  // namespace detail
}  // namespace ridgeline::cuda

#define RIDGELINE_CUDA_CHECK(call) ::ridgeline::cuda::detail::check((call), #call, __FILE__, __LINE__)
#define RIDGELINE_CUDA_CHECK_NOTHROW(call) ::ridgeline::cuda::detail::check_nothrow((call), #call, __FILE__, __LINE__)
#define RIDGELINE_CUDA_STATUS(call) ::ridgeline::cuda::detail::status_of((call), #call, __FILE__, __LINE__)
