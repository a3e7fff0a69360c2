// Error handling of the CUDA backend without a device: the check macros' messages and exception types for
// fake runtime / cuBLAS / cuDNN statuses, and device discovery that never throws.
#include <gtest/gtest.h>

#include <new>

#include "check.hpp"
#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/core/datasheet.hpp"
#include "ridgeline/cuda/cuda_backend.hpp"

using namespace ridgeline;

namespace {
template <class F>
std::string message_of(F&& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(nothing thrown)";
}
}  // namespace

TEST(CudaCheck, FormatNamesTheCallFileLineAndTheLibrarysError) {
    const auto e = cuda::detail::describe(cudaErrorMemoryAllocation);
    EXPECT_EQ(e.name, "cudaErrorMemoryAllocation");
    EXPECT_EQ(e.text, "out of memory");
    EXPECT_EQ(cuda::detail::format_call_error("cudaMalloc(&p, bytes)", "/src/ridgeline/cuda/src/resources.cpp", 31, e),
              "cudaMalloc(&p, bytes) failed at cuda/src/resources.cpp:31: cudaErrorMemoryAllocation: out of memory");
    // a path outside the tree is kept as is
    EXPECT_EQ(cuda::detail::format_call_error("f()", "x.cpp", 1, {"NAME", "text", cuda::detail::error_kind::failure}),
              "f() failed at x.cpp:1: NAME: text");
    const auto b = cuda::detail::describe(CUBLAS_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(b.name, "CUBLAS_STATUS_NOT_SUPPORTED");
    EXPECT_FALSE(b.text.empty());
    const auto d = cuda::detail::describe(CUDNN_STATUS_BAD_PARAM);
    EXPECT_EQ(d.name, "CUDNN_STATUS_BAD_PARAM");
}

TEST(CudaCheck, ThrowingFormPicksTheExceptionByError) {
    // out of memory -> a std::bad_alloc (the Profiler reports the layer "skipped")
    try {
        RIDGELINE_CUDA_CHECK(cudaErrorMemoryAllocation);
        FAIL();
    } catch (const std::bad_alloc& e) {
        const std::string m = e.what();
        EXPECT_EQ(m.rfind("cudaErrorMemoryAllocation failed at tests/cuda/check_test.cpp:", 0), 0u) << m;
        EXPECT_NE(m.find(": cudaErrorMemoryAllocation: out of memory"), std::string::npos) << m;
    }
    // "not supported" -> backend_api::unsupported (a status, not a failure)
    EXPECT_THROW(RIDGELINE_CUDA_CHECK(CUBLAS_STATUS_NOT_SUPPORTED), backend_api::unsupported);
    EXPECT_THROW(RIDGELINE_CUDA_CHECK(CUDNN_STATUS_NOT_SUPPORTED_SHAPE), backend_api::unsupported);
    EXPECT_THROW(RIDGELINE_CUDA_CHECK(CUBLAS_STATUS_ALLOC_FAILED), std::bad_alloc);
    EXPECT_THROW(RIDGELINE_CUDA_CHECK(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED), std::bad_alloc);
    // everything else -> backend_api::backend_error with the library's name
    const std::string m = message_of([] { RIDGELINE_CUDA_CHECK(CUDNN_STATUS_BAD_PARAM); });
    EXPECT_NE(m.find("CUDNN_STATUS_BAD_PARAM failed at tests/cuda/check_test.cpp:"), std::string::npos) << m;
    EXPECT_NE(m.find(": CUDNN_STATUS_BAD_PARAM"), std::string::npos) << m;
    EXPECT_THROW(RIDGELINE_CUDA_CHECK(cudaErrorInvalidValue), backend_api::backend_error);
    EXPECT_THROW(RIDGELINE_CUDA_CHECK(CUBLAS_STATUS_INVALID_VALUE), backend_api::backend_error);
    // success throws nothing
    EXPECT_NO_THROW(RIDGELINE_CUDA_CHECK(cudaSuccess));
    EXPECT_NO_THROW(RIDGELINE_CUDA_CHECK(CUBLAS_STATUS_SUCCESS));
    EXPECT_NO_THROW(RIDGELINE_CUDA_CHECK(CUDNN_STATUS_SUCCESS));
}

TEST(CudaCheck, StatusAndNothrowForms) {
    const cuda::call_status ok = RIDGELINE_CUDA_STATUS(cudaSuccess);
    EXPECT_TRUE(ok.ok());
    const cuda::call_status bad = RIDGELINE_CUDA_STATUS(CUBLAS_STATUS_EXECUTION_FAILED);
    EXPECT_FALSE(bad.ok());
    EXPECT_NE(bad.message.find("CUBLAS_STATUS_EXECUTION_FAILED"), std::string::npos) << bad.message;
    testing::internal::CaptureStderr();
    RIDGELINE_CUDA_CHECK_NOTHROW(cudaErrorInvalidResourceHandle);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(err.rfind("ridgeline: warning: cudaErrorInvalidResourceHandle failed at tests/cuda/check_test.cpp:", 0), 0u)
        << err;
}

TEST(CudaDevices, CountNeverThrowsAndKeepsTheDriversReason) {
    const int n = cuda::device_count();
    EXPECT_GE(n, 0);
    EXPECT_EQ(cuda::device_count(), n);  // computed once
    if (n == 0) {
        // e.g. "CUDA driver version is insufficient for CUDA runtime version" (no driver) or
        // "no CUDA-capable device is detected"
        EXPECT_FALSE(cuda::device_count_error().empty());
        const std::string m = message_of([] { (void)cuda::make_cuda_backend(0); });
        EXPECT_EQ(m, "no CUDA device: " + cuda::device_count_error());
    } else {
        EXPECT_TRUE(cuda::device_count_error().empty());
        const std::string m = message_of([n] { (void)cuda::make_cuda_backend(n); });
        EXPECT_NE(m.find("no CUDA device " + std::to_string(n)), std::string::npos) << m;
    }
}

TEST(CudaDevices, LibraryVersionsWithoutADevice) {
    // runtime "13.0", cuDNN "9.19.0", cuBLAS "13.x.y": the loaded libraries answer without a GPU
    EXPECT_NE(cuda::runtime_version(), "unknown");
    EXPECT_EQ(cuda::cudnn_version().rfind("9.", 0), 0u) << cuda::cudnn_version();
    EXPECT_NE(cuda::cublas_version(), "unknown");
}
